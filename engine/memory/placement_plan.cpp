#include "memory/placement_plan.h"

#include <algorithm>

#include "kiln/units.h"

namespace kiln::memory {
namespace {

// The names that stand for every component of a role, whatever its family calls it:
// "unet" reaches a transformer, "text_encoder" every text encoder.
bool namesRole(const std::string& e, ComponentRole role) {
  switch (role) {
    case ComponentRole::TextEncoder:
      return e == "text_encoder" || e == "text_encoders";
    case ComponentRole::Denoiser:
      return e == "unet" || e == "transformer" || e == "denoiser";
    case ComponentRole::Vae:
      return e == "vae";
    case ComponentRole::Invalid:
      break;
  }
  return false;
}

bool names(const std::string& e, const ComponentInfo& c) {
  return e == c.name || e == c.model_class || namesRole(e, c.role);
}

bool listed(const std::vector<std::string>& list, const ComponentInfo& c) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& e) { return names(e, c); });
}

// The mode set for this component: by its own name first, then its class, then its role.
const OffloadMode* namedMode(const std::map<std::string, OffloadMode>& modes,
                             const ComponentInfo& c) {
  for (const std::string& key : {c.name, c.model_class})
    if (const auto it = modes.find(key); it != modes.end()) return &it->second;
  for (const auto& [key, mode] : modes)
    if (namesRole(key, c.role)) return &mode;
  return nullptr;
}

// Bytes of each chunk of `n` consecutive blocks, counting the slots `counted` picks.
template <class Counted>
std::vector<int64_t> chunkBytes(const WeightLayout& layout, int n, Counted counted) {
  const auto per = static_cast<std::size_t>(std::max(n, 1));
  std::vector<int64_t> chunk((layout.groups.size() + per - 1) / per, 0);
  for (std::size_t i = 0; i < layout.slots.size(); ++i)
    if (layout.slots[i].group >= 0 && counted(i))
      chunk[static_cast<std::size_t>(layout.slots[i].group) / per] += layout.slots[i].bytes;
  return chunk;
}

// The most a run of chunks brings onto the device at once: one chunk, or with streams
// the current one and the next arriving beside it.
int64_t largestTransfer(const std::vector<int64_t>& chunk, bool streams) {
  int64_t largest = 0;
  for (std::size_t c = 0; c < chunk.size(); ++c)
    largest = std::max(largest, chunk[c] + (streams && c + 1 < chunk.size() ? chunk[c + 1] : 0));
  return largest;
}

}  // namespace

PlacementDecision decidePlacement(const ComponentInfo& c, int64_t weight_bytes,
                                  const OffloadSettings& s) {
  PlacementDecision d;
  if (listed(s.never, c)) {
    d.reason = "in the never-offload list";
    return d;
  }
  const OffloadMode* named = namedMode(s.per_component, c);
  OffloadMode mode = named ? *named : s.mode;
  const bool always = listed(s.always, c);
  // The family's default for a component the settings do not name (Wan's UMT5 encoder,
  // used once per job, and its VAE rest in host memory).
  const bool by_default = c.offloaded_by_default && !named && !always;
  if (mode == OffloadMode::None && (always || by_default)) {
    mode = c.role == ComponentRole::Vae
               ? OffloadMode::Model
               : (c.role == ComponentRole::TextEncoder ? OffloadMode::GroupLeaf
                                                       : OffloadMode::GroupBlock);
    d.reason = always ? "in the always-offload list" : "offloaded by default for this model";
  }
  d.mode = mode;
  d.blocks_per_group = s.blocks_per_group;
  d.streams = s.streams && (mode == OffloadMode::GroupBlock || mode == OffloadMode::Balanced);
  const auto because = [&](const std::string& why) {
    d.reason += (d.reason.empty() ? "" : "; ") + why;
  };
  switch (c.role) {
    case ComponentRole::TextEncoder:
      if (mode == OffloadMode::GroupBlock || mode == OffloadMode::Balanced ||
          mode == OffloadMode::GroupLeaf) {
        if (mode != OffloadMode::GroupLeaf || s.streams)
          because("text encoders are placed leaf by leaf, without streams");
        d.mode = OffloadMode::GroupLeaf;
        d.streams = false;
      }
      break;
    case ComponentRole::Vae:
      if (mode == OffloadMode::None) break;
      if (weight_bytes <= s.vae_resident_threshold_bytes) {
        because("a VAE of " + formatBytes(weight_bytes) + " stays resident (threshold " +
                formatBytes(s.vae_resident_threshold_bytes) +
                "): moving it costs more than it frees");
        d.mode = OffloadMode::None;
        d.streams = false;
        break;
      }
      if (mode != OffloadMode::Model) because("a VAE is onloaded whole for each encode or decode");
      d.mode = OffloadMode::Model;
      d.streams = false;
      d.offload_after_call = true;
      break;
    case ComponentRole::Denoiser:
    case ComponentRole::Invalid:
      break;
  }
  if (c.params && c.params->groups().empty() &&
      (d.mode == OffloadMode::GroupBlock || d.mode == OffloadMode::Balanced)) {
    because("it has no blocks, so it moves whole");
    d.mode = OffloadMode::Model;
    d.streams = false;
  }
  if (d.mode != OffloadMode::GroupBlock && d.mode != OffloadMode::Balanced) d.blocks_per_group = 1;
  if (d.mode != OffloadMode::None && !(d.mode == OffloadMode::Model && d.offload_after_call))
    d.pin = s.pin;
  if (c.role == ComponentRole::TextEncoder && d.pin != PinMode::Off) {
    because("text encoders are never held in pinned memory");
    d.pin = PinMode::Off;
  }
  d.record_stream = d.streams && s.record_stream;
  return d;
}

bool fitPinnedMemory(PlacementDecision& d, int64_t needed, int64_t allowed, int64_t streamed,
                     bool has_blocks) {
  if (needed <= allowed) return true;
  d.reason += (d.reason.empty() ? "" : "; ") +
              ("pinned memory denied (needs " + formatBytes(needed) + ", " +
               formatBytes(std::max<int64_t>(allowed, 0)) + " allowed): without it, " +
               formatBytes(streamed) + " move to the device per step without prefetch");
  d.pin = PinMode::Off;
  d.streams = false;
  d.record_stream = false;
  if (d.mode == OffloadMode::Model && has_blocks) {
    d.mode = OffloadMode::GroupBlock;
    d.blocks_per_group = 1;
  }
  return false;
}

std::string describeDecision(const PlacementDecision& d, int64_t resident_bytes) {
  std::string s = offloadModeName(d.mode);
  if (d.mode == OffloadMode::GroupBlock || d.mode == OffloadMode::Balanced)
    s += ", " + std::to_string(d.blocks_per_group) + " block" +
         (d.blocks_per_group > 1 ? "s" : "") + " per group" +
         (d.streams ? ", streams" : ", no streams");
  if (d.mode == OffloadMode::Balanced) s += ", " + formatBytes(resident_bytes) + " resident";
  if (d.offload_after_call) s += ", back to the host after each call";
  if (d.pin == PinMode::On) s += ", pinned";
  if (d.pin == PinMode::PerGroup) s += ", pinned per group";
  if (!d.reason.empty()) s += " (" + d.reason + ")";
  return s;
}

// ------------------------------------------------------------------------- layout

WeightLayout WeightLayout::of(const weights::ParamList& params) {
  WeightLayout layout;
  for (const weights::ParamSlot& s : params.slots())
    layout.slots.push_back(
        {s.tensor->defined() ? static_cast<int64_t>(s.tensor->nbytes()) : 0, s.group, s.leaf});
  for (const weights::ParamGroup& g : params.groups()) layout.groups.push_back({g.first, g.count});
  return layout;
}

int64_t WeightLayout::totalBytes() const {
  int64_t total = 0;
  for (const Slot& s : slots) total += s.bytes;
  return total;
}

std::vector<bool> residentSlots(const WeightLayout& layout, const PlacementDecision& d,
                                int64_t balanced_budget_bytes) {
  std::vector<bool> resident(layout.slots.size(), d.mode == OffloadMode::None);
  if (d.mode != OffloadMode::Balanced) return resident;
  // The budget bounds the weights' peak: what stays resident plus the largest transfer of
  // the blocks that stream past it. Everything stays when everything fits.
  if (layout.totalBytes() <= balanced_budget_bytes) return std::vector<bool>(resident.size(), true);
  const int64_t transfer = largestTransfer(
      chunkBytes(layout, d.blocks_per_group, [](std::size_t) { return true; }), d.streams);
  int64_t used = 0;
  for (std::size_t i = 0; i < layout.slots.size(); ++i)
    if (layout.slots[i].group < 0) {
      resident[i] = true;  // loose weights (embeddings, the output head) always stay
      used += layout.slots[i].bytes;
    }
  for (const WeightLayout::Group& g : layout.groups) {
    int64_t bytes = 0;
    for (std::size_t i = g.first; i < g.first + g.count; ++i) bytes += layout.slots[i].bytes;
    if (used + bytes + transfer > balanced_budget_bytes) break;
    used += bytes;
    for (std::size_t i = g.first; i < g.first + g.count; ++i) resident[i] = true;
  }
  return resident;
}

int64_t residentBytes(const WeightLayout& layout, const std::vector<bool>& resident) {
  int64_t total = 0;
  for (std::size_t i = 0; i < layout.slots.size(); ++i)
    if (resident[i]) total += layout.slots[i].bytes;
  return total;
}

int64_t peakBytes(const WeightLayout& layout, const std::vector<bool>& resident,
                  const PlacementDecision& d) {
  const auto& slots = layout.slots;
  switch (d.mode) {
    case OffloadMode::None:
    case OffloadMode::Model:
    case OffloadMode::Invalid:
      return layout.totalBytes();
    case OffloadMode::GroupLeaf: {
      int64_t loose = 0, largest_leaf = 0;
      for (std::size_t i = 0; i < slots.size(); ++i) {
        if (!slots[i].leaf) loose += slots[i].bytes;
        // A leaf is a weight and the bias declared right after it.
        if (slots[i].leaf)
          largest_leaf =
              std::max(largest_leaf,
                       slots[i].bytes +
                           (i + 1 < slots.size() && slots[i + 1].leaf ? slots[i + 1].bytes : 0));
      }
      return loose + largest_leaf;
    }
    case OffloadMode::GroupBlock:
    case OffloadMode::Balanced: {
      int64_t fixed = 0;
      for (std::size_t i = 0; i < slots.size(); ++i)
        if (resident[i] || slots[i].group < 0) fixed += slots[i].bytes;
      return fixed + largestTransfer(chunkBytes(layout, d.blocks_per_group,
                                                [&](std::size_t i) { return !resident[i]; }),
                                     d.streams);
    }
  }
  return layout.totalBytes();
}

int64_t pinnedBytesNeeded(const WeightLayout& layout, const std::vector<bool>& resident,
                          const PlacementDecision& d) {
  if (d.pin == PinMode::Off || d.mode == OffloadMode::None) return 0;
  int64_t streamed = 0;
  for (std::size_t i = 0; i < layout.slots.size(); ++i)
    if (!resident[i]) streamed += layout.slots[i].bytes;
  // Per group: a staging copy of the largest transfer at a time (two with streams).
  return d.pin == PinMode::On ? streamed : std::min(streamed, peakBytes(layout, resident, d));
}

// ------------------------------------------------------------------------- plans

std::vector<PlannedPlacement> planPlacements(const std::vector<PlanInput>& components,
                                             const OffloadSettings& settings,
                                             int64_t balanced_budget_bytes,
                                             int64_t pinned_allowed_bytes) {
  std::vector<PlannedPlacement> plans(components.size());
  int64_t fixed = 0;  // resident bytes of the components that are not balanced
  for (std::size_t i = 0; i < components.size(); ++i) {
    PlannedPlacement& p = plans[i];
    p.weight_bytes = components[i].layout->totalBytes();
    p.decision = decidePlacement(*components[i].component, p.weight_bytes, settings);
    if (p.decision.mode == OffloadMode::Balanced) continue;
    p.resident = residentSlots(*components[i].layout, p.decision, 0);
    fixed += residentBytes(*components[i].layout, p.resident);
  }
  for (std::size_t i = 0; i < components.size(); ++i) {
    PlannedPlacement& p = plans[i];
    if (p.decision.mode != OffloadMode::Balanced) continue;
    p.balanced_budget_bytes = std::max<int64_t>(balanced_budget_bytes - fixed, 0);
    p.resident = residentSlots(*components[i].layout, p.decision, p.balanced_budget_bytes);
    fixed += residentBytes(*components[i].layout, p.resident);
  }
  int64_t allowed = pinned_allowed_bytes;
  for (std::size_t i = 0; i < components.size(); ++i) {
    PlannedPlacement& p = plans[i];
    const WeightLayout& layout = *components[i].layout;
    if (p.decision.pin != PinMode::Off && allowed < 0) p.decision.pin = PinMode::Off;
    const int64_t needed = pinnedBytesNeeded(layout, p.resident, p.decision);
    if (needed > 0) {
      const int64_t streamed = layout.totalBytes() - residentBytes(layout, p.resident);
      // A per-group staging copy lives only for its transfer: it must fit, but holds
      // nothing afterwards.
      if (fitPinnedMemory(p.decision, needed, allowed, streamed, !layout.groups.empty()) &&
          p.decision.pin == PinMode::On) {
        allowed -= needed;
        p.pinned_bytes = needed;
      }
    }
    p.resident_bytes = residentBytes(layout, p.resident);
    p.peak_bytes = peakBytes(layout, p.resident, p.decision);
  }
  return plans;
}

ModelMemoryPlan planModelMemory(const std::string& model, const std::vector<PlanInput>& components,
                                const OffloadSettings& settings, const PlanRoom& room,
                                int64_t working_bytes, int64_t balanced_working_bytes) {
  ModelMemoryPlan out;
  out.model = model;
  out.room_bytes = room.device_bytes;
  out.working_bytes = working_bytes;
  out.reserve_bytes = settings.working_reserve_bytes;
  out.pinned_room_bytes = room.pinned_bytes;
  // As the engine places (nodes::placeModel): balanced mode keeps resident what fits
  // beside the work and the reserve.
  const int64_t balanced =
      room.device_bytes - balanced_working_bytes - settings.working_reserve_bytes;
  const std::vector<PlannedPlacement> plans =
      planPlacements(components, settings, std::max<int64_t>(balanced, 0), room.pinned_bytes);
  // A model-mode component stays on the device after its call until another model-mode
  // one is called; what streams beside it (leaf or block level) adds to it.
  int64_t staying = 0;
  for (const PlannedPlacement& p : plans)
    if (p.decision.mode == OffloadMode::Model && !p.decision.offload_after_call)
      staying = std::max(staying, p.weight_bytes);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const PlannedPlacement& p = plans[i];
    const ComponentInfo& c = *components[i].component;
    const bool whole = p.decision.mode == OffloadMode::Model;
    PlannedComponent pc;
    pc.name = c.name;
    pc.model_class = c.model_class;
    pc.placement = describeDecision(p.decision, p.resident_bytes);
    pc.weight_bytes = p.weight_bytes;
    pc.resident_bytes = whole ? 0 : p.resident_bytes;
    pc.streamed_bytes = whole ? p.weight_bytes : p.peak_bytes - p.resident_bytes;
    pc.pinned_bytes = p.pinned_bytes;
    out.resident_bytes += pc.resident_bytes;
    out.host_bytes += p.weight_bytes - pc.resident_bytes;
    out.pinned_bytes += pc.pinned_bytes;
    const int64_t at_once = pc.streamed_bytes + (whole ? 0 : staying);
    if (at_once > out.streamed_bytes) {
      out.streamed_bytes = at_once;
      out.largest_streamed = c.name;
    }
    out.components.push_back(std::move(pc));
  }
  out.left_bytes = room.device_bytes - out.resident_bytes - out.streamed_bytes - working_bytes -
                   out.reserve_bytes;
  if (out.left_bytes < 0 && out.reserve_bytes > 0) {
    // Placing goes on without a reserve that does not fit (nodes::placeModel).
    out.notes.push_back("the working reserve of " + formatBytes(out.reserve_bytes) +
                        " does not fit beside the model; it is left out when the model is placed");
    out.left_bytes += out.reserve_bytes;
    out.reserve_bytes = 0;
  }
  if (out.left_bytes < 0) {
    out.problems.push_back(
        "needs " + formatBytes(-out.left_bytes) + " more device memory than the " +
        formatBytes(room.device_bytes) +
        " Kiln may use: choose an offload mode that streams more (group-block or group-leaf), "
        "fewer blocks per group, or a smaller size");
  }
  return out;
}

}  // namespace kiln::memory
