#include "memory/offload.h"

#include <algorithm>
#include <utility>

#include "kiln/error.h"
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

int64_t bytesOf(const at::Tensor& t) {
  return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0;
}

// The most weight bytes on the device during a call, given which slots stay resident.
int64_t peakBytes(const std::vector<weights::ParamSlot>& slots,
                  const std::vector<weights::ParamGroup>& groups, const std::vector<bool>& resident,
                  const PlacementDecision& d) {
  int64_t all = 0;
  for (const auto& s : slots) all += bytesOf(*s.tensor);
  switch (d.mode) {
    case OffloadMode::None:
    case OffloadMode::Model:
    case OffloadMode::Invalid:
      return all;
    case OffloadMode::GroupLeaf: {
      int64_t loose = 0, largest_leaf = 0;
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const int64_t b = bytesOf(*slots[i].tensor);
        if (!slots[i].leaf) loose += b;
        // A leaf is a weight and the bias declared right after it.
        if (slots[i].leaf)
          largest_leaf = std::max(
              largest_leaf,
              b + (i + 1 < slots.size() && slots[i + 1].leaf ? bytesOf(*slots[i + 1].tensor) : 0));
      }
      return loose + largest_leaf;
    }
    case OffloadMode::GroupBlock:
    case OffloadMode::Balanced: {
      const auto n = static_cast<std::size_t>(d.blocks_per_group);
      std::vector<int64_t> chunk((groups.size() + n - 1) / n, 0);
      int64_t fixed = 0;
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const int64_t b = bytesOf(*slots[i].tensor);
        if (resident[i] || slots[i].group < 0)
          fixed += b;
        else
          chunk[static_cast<std::size_t>(slots[i].group) / n] += b;
      }
      // With streams the next chunk arrives while the current one runs.
      int64_t largest = 0;
      for (std::size_t c = 0; c < chunk.size(); ++c)
        largest =
            std::max(largest, chunk[c] + (d.streams && c + 1 < chunk.size() ? chunk[c + 1] : 0));
      return fixed + largest;
    }
  }
  return all;
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

// ------------------------------------------------------------------------- placement

ComponentPlacement::ComponentPlacement(const Device& device, ComponentInfo component)
    : device_(device), component_(std::move(component)) {
  slots_ = component_.params->slots();
  host_.resize(slots_.size());
  resident_.assign(slots_.size(), false);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    slot_of_[slots_[i].tensor] = i;
    weight_bytes_ += bytesOf(*slots_[i].tensor);
  }
}

ComponentPlacement::~ComponentPlacement() {
  detach();
}

void ComponentPlacement::detach() noexcept {
  try {
    dropPrefetch();
  } catch (...) {  // a GPU that fails here fails the next call loudly; nothing to do now
  }
  if (component_.params->hooks() == this) component_.params->setHooks(nullptr);
  for (auto& h : host_) h.reset();
  placed_ = false;
}

std::size_t ComponentPlacement::chunkOf(std::size_t group) const {
  return group / static_cast<std::size_t>(decision_.blocks_per_group);
}

std::vector<std::size_t> ComponentPlacement::chunkSlots(std::size_t chunk) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].group >= 0 && chunkOf(static_cast<std::size_t>(slots_[i].group)) == chunk &&
        !resident_[i])
      out.push_back(i);
  return out;
}

bool ComponentPlacement::chunkStreamed(std::size_t chunk) const {
  return !chunkSlots(chunk).empty();
}

void ComponentPlacement::toDevice(std::size_t i) {
  at::Tensor& t = *slots_[i].tensor;
  if (!device_.isAccelerator() || !t.defined() || device_.holds(t)) return;
  if (!host_[i].defined()) host_[i] = t;
  // Per-group pinning stages each transfer through a pinned copy that lives only for it.
  t = device_.upload(decision_.pin == PinMode::PerGroup ? device_.pin(host_[i]) : host_[i]);
  ++counters_.uploads;
  counters_.uploaded_bytes += bytesOf(t);
}

void ComponentPlacement::toHost(std::size_t i) {
  at::Tensor& t = *slots_[i].tensor;
  if (!device_.isAccelerator() || !t.defined() || !device_.holds(t)) return;
  if (!host_[i].defined()) host_[i] = device_.download(t);
  t = host_[i];
}

bool ComponentPlacement::apply(const PlacementDecision& decision, int64_t resident_budget_bytes,
                               const std::function<void(const std::string&)>& log) {
  if (placed_ && decision == requested_) {
    ++counters_.unchanged;
    return false;
  }
  teardown();
  requested_ = decision_ = decision;
  switch (decision_.mode) {
    case OffloadMode::None:
      for (std::size_t i = 0; i < slots_.size(); ++i) resident_[i] = true;
      break;
    case OffloadMode::Balanced: {
      // Loose weights first, then whole groups in the order they run, while they fit.
      int64_t used = 0;
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].group < 0) {
          resident_[i] = true;
          used += bytesOf(*slots_[i].tensor);
        }
      const auto& groups = component_.params->groups();
      for (std::size_t g = 0; g < groups.size(); ++g) {
        int64_t bytes = 0;
        for (std::size_t i = groups[g].first; i < groups[g].first + groups[g].count; ++i)
          bytes += bytesOf(*slots_[i].tensor);
        if (used + bytes > resident_budget_bytes) break;
        used += bytes;
        for (std::size_t i = groups[g].first; i < groups[g].first + groups[g].count; ++i)
          resident_[i] = true;
      }
      break;
    }
    case OffloadMode::Model:
    case OffloadMode::GroupBlock:
    case OffloadMode::GroupLeaf:
    case OffloadMode::Invalid:
      break;
  }
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (resident_[i]) {
      toDevice(i);
      if (device_.isAccelerator()) host_[i].reset();  // one copy, on the device
    }
  const std::string before_pin = describe();
  if (log) log("placed " + before_pin);
  if (decision_.pin != PinMode::Off) pinStreamedWeights();
  if (log && describe() != before_pin) log("placed " + describe());
  if (decision_.mode != OffloadMode::None) component_.params->setHooks(this);
  placed_ = true;
  ++counters_.applies;
  return true;
}

void ComponentPlacement::teardown() {
  dropPrefetch();
  if (component_.params->hooks() == this) component_.params->setHooks(nullptr);
  // Every weight is tried; the first failure is rethrown after the rest have moved.
  std::exception_ptr first_error;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    try {
      toHost(i);
      resident_[i] = false;
      host_[i].reset();
      at::Tensor& t = *slots_[i].tensor;
      if (t.defined() && device_.isPinned(t)) {  // back to ordinary memory: the pin is given back
        PoolScope pageable(nullptr);
        at::Tensor plain = at::empty_like(t, t.options(), at::MemoryFormat::Contiguous);
        plain.copy_(t);
        t = plain;
      }
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  placed_ = false;
  if (first_error) std::rethrow_exception(first_error);
}

void ComponentPlacement::pinStreamedWeights() {
  if (!device_.hasPinnedMemory() || !device_.isAccelerator()) {
    decision_.pin = PinMode::Off;
    return;
  }
  int64_t streamed = 0;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (!resident_[i]) streamed += bytesOf(*slots_[i].tensor);
  // Per group: a staging copy of the largest transfer at a time (two with streams).
  const int64_t needed = decision_.pin == PinMode::On
                             ? streamed
                             : std::min(streamed, peakBytes(slots_, component_.params->groups(),
                                                            resident_, decision_));
  const DeviceMemory m = device_.memory();
  const int64_t allowed = m.pinned_limit_bytes > 0 ? m.pinned_limit_bytes - m.pinned_bytes : needed;
  if (needed > allowed) {
    // Denied: block level without streams, unpinned; say what that costs.
    const auto because = [&](const std::string& why) {
      decision_.reason += (decision_.reason.empty() ? "" : "; ") + why;
    };
    because("pinned memory denied (needs " + formatBytes(needed) + ", " +
            formatBytes(std::max<int64_t>(allowed, 0)) + " allowed): without it, " +
            formatBytes(streamed) + " move to the device per step without prefetch");
    decision_.pin = PinMode::Off;
    decision_.streams = false;
    if (decision_.mode == OffloadMode::Model && !component_.params->groups().empty()) {
      decision_.mode = OffloadMode::GroupBlock;
      decision_.blocks_per_group = 1;
    }
    return;
  }
  if (decision_.pin != PinMode::On) return;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (resident_[i]) continue;
    at::Tensor& t = *slots_[i].tensor;
    if (!t.defined() || device_.holds(t)) continue;
    t = device_.pin(t);  // the pinned copy replaces the pageable one
    host_[i] = t;
  }
}

void ComponentPlacement::offloadAll() {
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (!resident_[i]) toHost(i);
}

int64_t ComponentPlacement::deviceBytes() const {
  if (!device_.isAccelerator()) return 0;
  int64_t total = 0;
  for (const auto& s : slots_)
    if (s.tensor->defined() && device_.holds(*s.tensor)) total += bytesOf(*s.tensor);
  return total;
}

int64_t ComponentPlacement::residentBytes() const {
  if (decision_.mode == OffloadMode::Model && !decision_.offload_after_call) return weight_bytes_;
  int64_t total = 0;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (resident_[i]) total += bytesOf(*slots_[i].tensor);
  return total;
}

int64_t ComponentPlacement::peakWeightBytes() const {
  return peakBytes(slots_, component_.params->groups(), resident_, decision_);
}

int64_t ComponentPlacement::plannedPeakBytes(const weights::ParamList& params,
                                             const PlacementDecision& decision) {
  return peakBytes(params.slots(), params.groups(), std::vector<bool>(params.slots().size(), false),
                   decision);
}

namespace {

// ", fp16, not quantized": the dtypes the weights are stored in and their quantization.
std::string weightFormat(const std::vector<weights::ParamSlot>& slots) {
  std::vector<std::string> dtypes;
  bool quantized = false;
  for (const auto& slot : slots) {
    const at::ScalarType t = slot.tensor->scalar_type();
    quantized = quantized || at::isQIntType(t);
    std::string name = t == at::kFloat      ? "fp32"
                       : t == at::kHalf     ? "fp16"
                       : t == at::kBFloat16 ? "bf16"
                                            : at::toString(t);
    if (std::find(dtypes.begin(), dtypes.end(), name) == dtypes.end())
      dtypes.push_back(std::move(name));
  }
  std::string out;
  for (const auto& d : dtypes) out += (out.empty() ? "" : "+") + d;
  if (out.empty()) return "";
  return ", " + out + (quantized ? ", quantized" : ", not quantized");
}

}  // namespace

std::string ComponentPlacement::describe() const {
  std::string s = component_.name + " (" + component_.model_class + ", " +
                  formatBytes(weight_bytes_) + weightFormat(slots_) +
                  "): " + offloadModeName(decision_.mode);
  if (decision_.mode == OffloadMode::GroupBlock || decision_.mode == OffloadMode::Balanced)
    s += ", " + std::to_string(decision_.blocks_per_group) + " block" +
         (decision_.blocks_per_group > 1 ? "s" : "") + " per group" +
         (decision_.streams ? ", streams" : ", no streams");
  if (decision_.mode == OffloadMode::Balanced)
    s += ", " + formatBytes(residentBytes()) + " resident";
  if (decision_.offload_after_call) s += ", back to the host after each call";
  if (decision_.pin == PinMode::On) s += ", pinned";
  if (decision_.pin == PinMode::PerGroup) s += ", pinned per group";
  if (!decision_.reason.empty()) s += " (" + decision_.reason + ")";
  return s;
}

// ------------------------------------------------------------------------- hooks

void ComponentPlacement::enterCall() {
  // A call inside another (each tile of a tiled decode inside the whole decode) finds
  // the weights where the outer call put them.
  if (call_depth_++ > 0) return;
  switch (decision_.mode) {
    case OffloadMode::Model:
      if (on_model_call_) on_model_call_(*this);
      for (std::size_t i = 0; i < slots_.size(); ++i) toDevice(i);
      break;
    case OffloadMode::GroupBlock:
    case OffloadMode::Balanced:
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].group < 0) toDevice(i);
      break;
    case OffloadMode::GroupLeaf:
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (!slots_[i].leaf) toDevice(i);
      break;
    case OffloadMode::None:
    case OffloadMode::Invalid:
      break;
  }
}

void ComponentPlacement::leaveCall() {
  if (call_depth_ > 0 && --call_depth_ > 0) return;
  // Also the way out of a call that threw part-way: nothing streamed stays behind.
  dropPrefetch();
  if (decision_.mode == OffloadMode::Model && !decision_.offload_after_call) return;
  if (decision_.mode != OffloadMode::None) offloadAll();
}

void ComponentPlacement::dropPrefetch() {
  if (prefetch_.valid()) prefetch_.wait();
  prefetch_ = {};
  if (queue_) {
    // Copies into memory the compute stream frees must land before it is reused.
    queue_->waitOnCompute();
    queued_.clear();
    queue_->finish();
  }
  prefetched_chunk_ = static_cast<std::size_t>(-1);
}

std::vector<at::Tensor> ComponentPlacement::takePrefetch() {
  if (prefetch_.valid()) return prefetch_.get();  // rethrows the worker's error
  queue_->waitOnCompute();
  return std::exchange(queued_, {});
}

void ComponentPlacement::prefetch(std::size_t chunk) {
  std::vector<std::size_t> slots = chunkSlots(chunk);
  if (slots.empty()) return;
  std::vector<at::Tensor> sources;
  for (std::size_t i : slots) sources.push_back(host_[i].defined() ? host_[i] : *slots_[i].tensor);
  prefetched_chunk_ = chunk;
  const bool stage = decision_.pin == PinMode::PerGroup;
  if (!device_.computeDevice().is_cpu()) {
    // A GPU: the copies are queued on a side stream from this thread, ordered by events.
    if (!queue_) queue_ = std::make_unique<CopyQueue>(device_.computeDevice());
    if (stage)
      for (auto& s : sources) s = device_.pin(s);
    queued_ = queue_->upload(sources, decision_.record_stream);
    return;
  }
  // The simulated device: a worker thread copies, as a DMA engine would.
  if (!copies_) copies_ = std::make_unique<CopyStream>();
  prefetch_ = copies_->submit([this, stage, sources = std::move(sources)] {
    std::vector<at::Tensor> copies;
    for (const auto& s : sources) copies.push_back(device_.upload(stage ? device_.pin(s) : s));
    return copies;
  });
}

void ComponentPlacement::loadChunk(std::size_t chunk) {
  const std::vector<std::size_t> slots = chunkSlots(chunk);
  if (prefetch_.valid() || !queued_.empty()) {
    std::vector<at::Tensor> copies = takePrefetch();
    const bool ours = prefetched_chunk_ == chunk;
    prefetched_chunk_ = static_cast<std::size_t>(-1);
    if (ours) {
      for (std::size_t k = 0; k < slots.size(); ++k) {
        at::Tensor& t = *slots_[slots[k]].tensor;
        if (device_.holds(t)) continue;
        if (!host_[slots[k]].defined()) host_[slots[k]] = t;
        t = copies[k];
        ++counters_.uploads;
        counters_.uploaded_bytes += bytesOf(t);
      }
      return;
    }
  }
  for (std::size_t i : slots) toDevice(i);
}

void ComponentPlacement::enterGroup(std::size_t group) {
  if (decision_.mode != OffloadMode::GroupBlock && decision_.mode != OffloadMode::Balanced) return;
  const std::size_t chunk = chunkOf(group);
  if (group % static_cast<std::size_t>(decision_.blocks_per_group) == 0 ||
      prefetched_chunk_ == chunk)
    loadChunk(chunk);
  else
    for (std::size_t i : chunkSlots(chunk)) toDevice(i);
  if (decision_.streams && group % static_cast<std::size_t>(decision_.blocks_per_group) == 0)
    prefetch(chunk + 1);
}

void ComponentPlacement::leaveGroup(std::size_t group) {
  if (decision_.mode != OffloadMode::GroupBlock && decision_.mode != OffloadMode::Balanced) return;
  const auto n = static_cast<std::size_t>(decision_.blocks_per_group);
  const bool last = group % n == n - 1 || group + 1 == component_.params->groups().size();
  if (!last) return;
  for (std::size_t i : chunkSlots(chunkOf(group))) toHost(i);
}

void ComponentPlacement::enterLeaf(const at::Tensor* weight, const at::Tensor* bias) {
  if (decision_.mode != OffloadMode::GroupLeaf) return;
  for (const at::Tensor* t : {weight, bias})
    if (t)
      if (auto it = slot_of_.find(t); it != slot_of_.end()) toDevice(it->second);
}

void ComponentPlacement::leaveLeaf(const at::Tensor* weight, const at::Tensor* bias) {
  if (decision_.mode != OffloadMode::GroupLeaf) return;
  for (const at::Tensor* t : {weight, bias})
    if (t)
      if (auto it = slot_of_.find(t); it != slot_of_.end()) toHost(it->second);
}

}  // namespace kiln::memory
