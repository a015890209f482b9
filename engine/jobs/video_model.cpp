#include "jobs/video_model.h"

#include <algorithm>

#include "jobs/pipeline_model.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "tensor_io/safetensors.h"

namespace kiln::jobs {

VideoModel::VideoModel(std::unique_ptr<nodes::WanPipeline> pipeline, const memory::Device& device)
    : pipeline_(std::move(pipeline)), device_(device) {
  const struct {
    const weights::ParamList* params;
    const char* name;
    const char* model_class;
    memory::ComponentRole role;
  } parts[] = {
      {&pipeline_->textEncoder().params(), "text_encoder", "UMT5EncoderModel", memory::ComponentRole::TextEncoder},
      {&pipeline_->transformer().params(), "transformer", "WanTransformer3DModel", memory::ComponentRole::Denoiser},
      {&pipeline_->vae().params(), "vae", "AutoencoderKLWan", memory::ComponentRole::Vae},
  };
  int64_t bytes = 0;
  for (const auto& part : parts) {
    memory::ComponentInfo c;
    c.params = part.params;
    c.name = part.name;
    c.model_class = part.model_class;
    c.role = part.role;
    placements_.push_back(std::make_unique<memory::ComponentPlacement>(device_, std::move(c)));
    for (const auto& slot : part.params->slots())
      if (slot.tensor->defined()) bytes += static_cast<int64_t>(slot.tensor->nbytes());
  }
  shareDeviceInModelMode(placements_);
  description_ = pipeline_->displayName() + " (wan21, " + at::toString(pipeline_->dtype()) + ", " + formatBytes(bytes) + ")";
  recount();
}

VideoModel::~VideoModel() { placements_.clear(); }

std::string VideoModel::describe() const { return description_; }

std::string VideoModel::staleReason() const { return tensor_io::filesChangedOnDisk(pipeline_->files()); }

std::vector<const weights::ParamList*> VideoModel::paramLists() const {
  return {&pipeline_->textEncoder().params(), &pipeline_->transformer().params(), &pipeline_->vae().params()};
}

void VideoModel::recount() {
  const WeightBytes counted = countWeightBytes(paramLists(), placements_, device_);
  host_bytes_ = counted.host;
  device_bytes_ = counted.device;
  std::lock_guard lock(summary_mutex_);
  summary_ = counted.summary;
}

std::vector<std::string> VideoModel::placementSummary() const {
  std::lock_guard lock(summary_mutex_);
  return summary_;
}

void VideoModel::offload() {
  struct Recount {
    VideoModel& m;
    ~Recount() { m.recount(); }
  } recount_after{*this};
  takeOffDevice(placements_, device_, paramLists(), describe());
}

memory::OffloadSettings VideoModel::videoDefaults(const memory::OffloadSettings& settings) {
  memory::OffloadSettings s = settings;
  for (const char* name : {"text_encoder", "vae"}) {
    const auto in = [&](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    if (!in(s.never) && !s.per_component.count(name) && !in(s.always)) s.always.push_back(name);
  }
  return s;
}

int64_t VideoModel::deviceBytesNeeded(const memory::OffloadSettings& settings) const {
  return placementBytesNeeded(placements_, device_, videoDefaults(settings));
}

std::vector<std::string> VideoModel::place(const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                           const PlacementLog& log) {
  if (!device_.isAccelerator()) return {};
  std::vector<std::string> lines;
  try {
    lines = placeComponents(placements_, device_, videoDefaults(settings), balanced_budget_bytes, log);
  } catch (...) {
    recount();
    throw;
  }
  recount();
  return lines;
}

std::string videoModelKey(const nodes::WanModelPaths& paths, at::ScalarType dtype) {
  return modelKey(paths.transformer, dtype) + "|" + modelKey(paths.vae, at::kFloat) + "|" +
         modelKey(paths.text_encoder, dtype);
}

std::shared_ptr<VideoModel> loadVideoModel(const nodes::WanModelPaths& paths, at::ScalarType dtype,
                                           const memory::Device& device,
                                           const std::function<void(std::size_t, std::size_t)>& progress) {
  auto pipeline = std::make_unique<nodes::WanPipeline>(paths, dtype, dtype == at::kHalf ? at::kFloat : dtype, progress);
  return std::make_shared<VideoModel>(std::move(pipeline), device);
}

}  // namespace kiln::jobs
