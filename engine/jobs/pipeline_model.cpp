#include "jobs/pipeline_model.h"

#include <algorithm>
#include <filesystem>

#include "kiln/error.h"
#include "kiln/render.h"
#include "kiln/units.h"
#include "nodes/sd_lora_targets.h"
#include "tensor_io/safetensors.h"

namespace kiln::jobs {

at::ScalarType computeScalarType(ComputeDType dtype, const memory::Device& device) {
  if (dtype == ComputeDType::Auto)
    dtype = device.kind() == memory::DeviceKind::Cuda ? ComputeDType::Float16 : fastCpuDType();
  return dtype == ComputeDType::BFloat16 ? at::kBFloat16 : dtype == ComputeDType::Float16 ? at::kHalf : at::kFloat;
}

at::ScalarType computeScalarType(const std::string& name, const memory::Device& device) {
  if (name == "auto") return computeScalarType(ComputeDType::Auto, device);
  if (name == "fp32") return at::kFloat;
  if (name == "bf16") return at::kBFloat16;
  if (name == "fp16") return at::kHalf;
  throw Error(ErrorKind::InvalidArgument, "compute precision '" + name + "' is not auto, fp32, bf16 or fp16");
}

const char* computeDtypeName(at::ScalarType dtype) {
  return dtype == at::kBFloat16 ? "bf16" : dtype == at::kHalf ? "fp16" : "fp32";
}

void checkComputeDtype(at::ScalarType dtype, const memory::Device& device) {
  if (dtype == at::kHalf && device.kind() != memory::DeviceKind::Cuda)
    throw Error(ErrorKind::InvalidArgument,
                "fp16 compute needs a GPU (the " + device.name() +
                    " device has no half-precision kernels); choose bf16 (fast on CPUs with AVX-512 BF16) or fp32");
}

std::string modelKey(const std::string& path, at::ScalarType dtype) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  const std::string name = ec ? path : p.string();
  std::string key = name + "|" + at::toString(dtype);
  if (std::filesystem::is_regular_file(p, ec)) {
    key += "|" + std::to_string(std::filesystem::file_size(p, ec));
    key += "|" + std::to_string(std::filesystem::last_write_time(p, ec).time_since_epoch().count());
  }
  return key;
}

PipelineModel::PipelineModel(std::unique_ptr<nodes::SdPipeline> pipeline, const memory::Device& device)
    : pipeline_(std::move(pipeline)), device_(device) {
  const auto lists = pipeline_->paramLists();
  const std::size_t encoders = pipeline_->spec().text_encoders.size();
  for (std::size_t i = 0; i < lists.size(); ++i) {
    memory::ComponentInfo c;
    c.params = lists[i];
    if (i < encoders) {
      c.name = i == 0 ? "text_encoder" : "text_encoder_" + std::to_string(i + 1);
      c.model_class = "ClipTextModel";
      c.role = memory::ComponentRole::TextEncoder;
    } else if (i == encoders) {
      c.name = "unet";
      c.model_class = "UNetModel";
      c.role = memory::ComponentRole::Denoiser;
    } else {
      c.name = "vae";
      c.model_class = "AutoencoderKL";
      c.role = memory::ComponentRole::Vae;
    }
    placements_.push_back(std::make_unique<memory::ComponentPlacement>(device_, std::move(c)));
  }
  shareDeviceInModelMode(placements_);
  description_ = pipeline_->checkpoint().display_name + " (" + models::familyName(pipeline_->spec().family) +
                 ", " + at::toString(pipeline_->dtype()) + ", " + formatBytes(pipeline_->weightBytes()) + ")";
  recount();
}

std::string PipelineModel::describe() const { return description_; }

std::string PipelineModel::staleReason() const { return tensor_io::filesChangedOnDisk(pipeline_->checkpoint().index.files()); }
// A hooked LoRA's copies in the compute precision are made as the layers run (on the
// activations' device), so they are counted live: device bytes on an accelerator.
int64_t PipelineModel::hookCopyBytes() const { return patcher_ ? patcher_->hookCopyBytes() : 0; }
int64_t PipelineModel::hostBytes() const { return host_bytes_.load() + (device_.isAccelerator() ? 0 : hookCopyBytes()); }
int64_t PipelineModel::deviceBytes() const {
  return device_bytes_.load() + (device_.isAccelerator() ? hookCopyBytes() : 0);
}

void PipelineModel::recount() {
  const WeightBytes counted = countWeightBytes(pipeline_->paramLists(), placements_, device_);
  host_bytes_ = counted.host + (patcher_ ? patcher_->backupBytes() + patcher_->hookBytes() : 0);
  device_bytes_ = counted.device;
  std::lock_guard lock(summary_mutex_);
  summary_ = counted.summary;
}

std::vector<std::string> PipelineModel::placementSummary() const {
  std::vector<std::string> summary;
  {
    std::lock_guard lock(summary_mutex_);
    summary = summary_;
  }
  if (const int64_t copies = hookCopyBytes(); copies > 0)
    summary.push_back("lora hooks (LoRA, " + formatBytes(copies) + "): copies in the compute precision " +
                      (device_.isAccelerator() ? "on the device" : "in host memory") +
                      ", released when the model leaves the device");
  return summary;
}

PipelineModel::~PipelineModel() { placements_.clear(); }

void PipelineModel::offload() {
  // The hooks' copies first: they would outlive the weights they serve. The weights that
  // stay after a failure are counted.
  const RecountOnExit recount_on_exit{this};
  takeOffDevice(placements_, device_, pipeline_->paramLists(), describe(), [&] {
    if (patcher_) patcher_->releaseHookCopies();
  });
}

LoraMode PipelineModel::resolveLoraMode(const std::vector<LoraSpec>& stack, LoraMode mode,
                                        const memory::OffloadSettings& settings) const {
  if (mode != LoraMode::Auto) return mode;
  for (const LoraSpec& l : stack)
    if (!l.keyframes.empty()) return LoraMode::Hook;
  if (!device_.isAccelerator()) return LoraMode::Merge;
  for (const auto& p : placements_) {
    if (p->component().role == memory::ComponentRole::Vae) continue;  // LoRAs never touch it
    if (memory::decidePlacement(p->component(), p->weightBytes(), settings).mode != memory::OffloadMode::None)
      return LoraMode::Hook;
  }
  return LoraMode::Merge;
}

std::vector<LoraReport> PipelineModel::applyLoras(const std::vector<LoraSpec>& stack, LoraMode mode,
                                                  const memory::OffloadSettings& settings) {
  const LoraMode resolved = resolveLoraMode(stack, mode, settings);
  if (stack == loras() && (stack.empty() || resolved == loraMode())) return {};
  if (!patcher_) patcher_ = std::make_unique<lora::LoraPatcher>(nodes::sdLoraTargets(*pipeline_));
  // Merged writes must land on the tensors offload moves: the placements come down and
  // the next place() snapshots the merged weights. Only the components holding weights
  // the change may replace come down (a UNet-only LoRA leaves the VAE and text encoders).
  if (resolved == LoraMode::Merge || patcher_->patchedWeights() > 0) {
    const std::set<const at::Tensor*> touched = patcher_->touchedBy(stack);
    const RecountOnExit recount_before_apply{this};
    takeOffDevice(
        placements_, device_, {}, describe(), [&] { patcher_->releaseHookCopies(); },
        [&](const memory::ComponentPlacement& p) {
          const auto& slots = p.component().params->slots();
          return std::any_of(slots.begin(), slots.end(), [&](const auto& s) { return touched.count(s.tensor) != 0; });
        });
  }
  const RecountOnExit recount_on_exit{this};
  std::vector<LoraReport> reports = patcher_->apply(stack, resolved);  // on error the old stack stays
  lora_reports_ = reports;
  return reports;
}

const std::vector<LoraSpec>& PipelineModel::loras() const noexcept {
  static const std::vector<LoraSpec> kNone;
  return patcher_ ? patcher_->current() : kNone;
}

int64_t PipelineModel::deviceBytesNeeded(const memory::OffloadSettings& settings) const {
  return placementBytesNeeded(placements_, device_, settings);
}

std::vector<std::string> PipelineModel::place(const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                              const PlacementLog& log) {
  if (!device_.isAccelerator()) return {};
  const RecountOnExit recount_on_exit{this};
  return placeComponents(placements_, device_, settings, balanced_budget_bytes, log);
}

}  // namespace kiln::jobs
