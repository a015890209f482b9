#include "pipelines/common/loaded_model.h"

#include <algorithm>
#include <exception>
#include <set>

#include "kiln/units.h"
#include "memory/device.h"
#include "pipelines/common/pipeline.h"
#include "tensor_io/safetensors.h"

namespace kiln::pipelines {

LoadedModel::LoadedModel(std::unique_ptr<ModelParts> parts, const memory::Device& device)
    : parts_(std::move(parts)), device_(device) {
  for (memory::ComponentInfo& c : parts_->components()) {
    lists_.push_back(c.params);
    placements_.push_back(std::make_unique<memory::ComponentPlacement>(device_, std::move(c)));
  }
  // In model mode, a component called onto the device sends the others in that mode home.
  for (auto& p : placements_)
    p->setOnModelCall([this](memory::ComponentPlacement& entering) {
      for (auto& other : placements_)
        if (other.get() != &entering && other->decision().mode == memory::OffloadMode::Model)
          other->offloadAll();
    });
  description_ = parts_->describe();
  recount();
}

LoadedModel::~LoadedModel() {
  placements_.clear();
}

std::string LoadedModel::staleReason() const {
  return tensor_io::filesChangedOnDisk(parts_->sourceFiles());
}

// A hooked LoRA's copies in the compute precision are made as the layers run (on the
// activations' device), so they are counted live: device bytes on an accelerator.
int64_t LoadedModel::hookCopyBytes() const {
  return patcher_ ? patcher_->hookCopyBytes() : 0;
}
int64_t LoadedModel::hostBytes() const {
  return host_bytes_.load() + (device_.isAccelerator() ? 0 : hookCopyBytes());
}
int64_t LoadedModel::deviceBytes() const {
  return device_bytes_.load() + (device_.isAccelerator() ? hookCopyBytes() : 0);
}

void LoadedModel::recount() {
  int64_t host = 0, on_device = 0, pinned = 0;
  for (const auto* params : lists_)
    for (const auto& slot : params->slots()) {
      if (!slot.tensor->defined()) continue;
      const auto bytes = static_cast<int64_t>(slot.tensor->nbytes());
      (device_.isAccelerator() && device_.holds(*slot.tensor) ? on_device : host) += bytes;
      if (device_.isPinned(*slot.tensor)) pinned += bytes;
    }
  std::vector<std::string> summary;
  if (device_.isAccelerator() && on_device > 0)
    for (const auto& p : placements_) summary.push_back(p->describe());
  host_bytes_ = host + loraBackupBytes();
  device_bytes_ = on_device;
  pinned_bytes_ = pinned;
  std::lock_guard lock(summary_mutex_);
  summary_ = std::move(summary);
}

std::vector<std::string> LoadedModel::placementSummary() const {
  std::vector<std::string> summary;
  {
    std::lock_guard lock(summary_mutex_);
    summary = summary_;
  }
  if (const int64_t copies = hookCopyBytes(); copies > 0)
    summary.push_back("lora hooks (LoRA, " + formatBytes(copies) +
                      "): copies in the compute precision " +
                      (device_.isAccelerator() ? "on the device" : "in host memory") +
                      ", released when the model leaves the device");
  return summary;
}

void LoadedModel::takeOffDevice(
    const std::function<void()>& first,
    const std::function<bool(const memory::ComponentPlacement&)>& which) {
  std::string failed;
  const auto attempt = [&](const std::string& what, const std::function<void()>& move) {
    try {
      move();
    } catch (const std::exception& e) {
      if (failed.empty())
        failed = "could not move " + what + " of " + describe() + " off the device: " + e.what();
    }
  };
  if (first) attempt("the LoRA hooks' copies", first);
  std::vector<const weights::ParamList*> lists =
      which ? std::vector<const weights::ParamList*>{} : lists_;
  for (auto& p : placements_) {
    if (which && !which(*p)) continue;
    attempt(p->component().name, [&] { p->teardown(); });
    if (which) lists.push_back(p->component().params);
  }
  // Weights that were put on the device some other way come back too.
  if (device_.isAccelerator())
    for (const auto* params : lists)
      for (const auto& slot : params->slots())
        if (slot.tensor->defined())
          attempt(slot.name, [&] { *slot.tensor = device_.download(*slot.tensor); });
  if (!failed.empty()) throw Error(ErrorKind::OutOfMemory, failed);
}

void LoadedModel::offload() {
  // The hooks' copies first: they would outlive the weights they serve. The weights that
  // stay after a failure are counted.
  const RecountOnExit recount_on_exit{this};
  takeOffDevice(
      [&] {
        if (patcher_) patcher_->releaseHookCopies();
      },
      {});
}

std::vector<memory::PlanInput> LoadedModel::planInputs() const {
  std::vector<memory::PlanInput> inputs;
  for (const auto& p : placements_) inputs.push_back({&p->component(), &p->layout()});
  return inputs;
}

int64_t LoadedModel::deviceBytesNeeded(const memory::OffloadSettings& settings) const {
  if (!device_.isAccelerator()) return 0;
  // Balanced parts are planned as if none of them stayed: their resident part is what fits.
  const std::vector<memory::PlannedPlacement> plans =
      memory::planPlacements(planInputs(), settings, 0, -1);
  int64_t needed = 0;
  for (std::size_t i = 0; i < placements_.size(); ++i) {
    const auto& p = placements_[i];
    const memory::PlacementDecision d =
        memory::decidePlacement(p->component(), p->weightBytes(), settings);
    if (d == p->decision() && p->deviceBytes() > 0) continue;  // placed so already
    needed += plans[i].peak_bytes - p->deviceBytes();
  }
  return std::max<int64_t>(needed, 0);
}

std::vector<std::string> LoadedModel::place(const memory::OffloadSettings& settings,
                                            int64_t balanced_budget_bytes,
                                            const PlacementLog& log) {
  std::vector<std::string> lines;
  if (!device_.isAccelerator()) return lines;
  const RecountOnExit recount_on_exit{this};
  if (device_.hasPinnedMemory())
    device_.setPinnedLimit(std::max<int64_t>(
        memory::availableHostBytes().value_or(0) - settings.pin_reserve_bytes, 0));
  // Each balanced part keeps resident what the budget leaves after the others' resident
  // weights (the pin step is the device's own, at apply).
  const std::vector<memory::PlannedPlacement> plans =
      memory::planPlacements(planInputs(), settings, balanced_budget_bytes, -1);
  std::exception_ptr first_error;
  for (std::size_t i = 0; i < placements_.size(); ++i) {
    auto& p = placements_[i];
    try {
      const memory::PlacementDecision d =
          memory::decidePlacement(p->component(), p->weightBytes(), settings);
      (void)p->apply(d, plans[i].balanced_budget_bytes, [&](const std::string& line) {
        lines.push_back(line);
        if (log) log(line);
      });
    } catch (...) {
      try {
        p->teardown();  // torn down cleanly; the next pass places it again
      } catch (...) {
      }
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  return lines;
}

int64_t LoadedModel::workingBytes(int64_t& width, int64_t& height, int64_t& frames) const {
  const auto* pipe = dynamic_cast<const Pipeline*>(parts_.get());
  if (!pipe) {
    width = height = frames = 0;  // a VAE file alone: no work of its own to size
    return 0;
  }
  const NativeSize native = pipe->nativeSize();
  width = width > 0 ? width : native.width;
  height = height > 0 ? height : native.height;
  frames = pipe->latentFormat().video() ? (frames > 0 ? frames : native.frames) : 0;
  return std::max(pipe->promptWorkingBytes(),
                  pipe->sampleWorkingBytes(height, width, frames, pipe->promptTokens()));
}

int64_t LoadedModel::nativeWorkingBytes() const {
  int64_t width = 0, height = 0, frames = 0;
  return workingBytes(width, height, frames);
}

ModelMemoryPlan LoadedModel::planMemory(const memory::OffloadSettings& settings,
                                        const memory::PlanRoom& room, int64_t width, int64_t height,
                                        int64_t frames) const {
  const int64_t working = workingBytes(width, height, frames);
  // Its own weights make room when it is placed again (its pins too), as placeModel counts.
  memory::PlanRoom own = room;
  own.device_bytes += weightDeviceBytes();
  if (own.pinned_bytes >= 0) own.pinned_bytes += pinned_bytes_.load();
  ModelMemoryPlan plan = memory::planModelMemory(describe(), planInputs(), settings, own, working,
                                                 std::max(working, nativeWorkingBytes()));
  plan.width = width;
  plan.height = height;
  plan.frames = frames;
  return plan;
}

lora::LoraPatcher* LoadedModel::patcher() const {
  if (patcher_) return patcher_.get();
  std::optional<lora::LoraTargets> targets = parts_->loraTargets();
  if (!targets) return nullptr;
  lora_components_ = targets->components;
  patcher_ = std::make_unique<lora::LoraPatcher>(std::move(*targets));
  return patcher_.get();
}

LoraMode LoadedModel::resolveLoraMode(const std::vector<LoraSpec>& stack, LoraMode mode,
                                      const memory::OffloadSettings& settings) const {
  if (mode != LoraMode::Auto) return mode;
  for (const LoraSpec& l : stack)
    if (!l.keyframes.empty()) return LoraMode::Hook;
  if (!device_.isAccelerator() || !patcher()) return LoraMode::Merge;
  for (const auto& p : placements_) {
    // Components no LoRA patches (a VAE, Wan's text encoder) may go where they like.
    if (std::find(lora_components_.begin(), lora_components_.end(), p->component().params) ==
        lora_components_.end())
      continue;
    if (memory::decidePlacement(p->component(), p->weightBytes(), settings).mode !=
        memory::OffloadMode::None)
      return LoraMode::Hook;
  }
  return LoraMode::Merge;
}

std::vector<LoraReport> LoadedModel::applyLoras(const std::vector<LoraSpec>& stack, LoraMode mode,
                                                const memory::OffloadSettings& settings) {
  // No LoRA asked and none applied: nothing to do, and no name table to build.
  if (stack.empty() && loras().empty()) return {};
  const LoraMode resolved = resolveLoraMode(stack, mode, settings);
  if (stack == loras() && (stack.empty() || resolved == loraMode())) return {};
  lora::LoraPatcher* lora = patcher();
  if (!lora)
    throw Error(ErrorKind::InvalidArgument,
                describe() + " takes no LoRA; remove the LoRA from the job or workflow");
  // Merged writes must land on the tensors offload moves: the placements come down and
  // the next place() snapshots the merged weights. Only the components holding weights
  // the change may replace come down (a UNet-only LoRA leaves the VAE and text encoders).
  if (resolved == LoraMode::Merge || lora->patchedWeights() > 0) {
    const std::set<const at::Tensor*> touched = lora->touchedBy(stack);
    const RecountOnExit recount_before_apply{this};
    takeOffDevice([&] { lora->releaseHookCopies(); },
                  [&](const memory::ComponentPlacement& p) {
                    const auto& slots = p.component().params->slots();
                    return std::any_of(slots.begin(), slots.end(),
                                       [&](const auto& s) { return touched.count(s.tensor) != 0; });
                  });
  }
  const RecountOnExit recount_on_exit{this};
  std::vector<LoraReport> reports = lora->apply(stack, resolved);  // on error the old stack stays
  lora_reports_ = reports;
  return reports;
}

const std::vector<LoraSpec>& LoadedModel::loras() const noexcept {
  static const std::vector<LoraSpec> kNone;
  return patcher_ ? patcher_->current() : kNone;
}

}  // namespace kiln::pipelines
