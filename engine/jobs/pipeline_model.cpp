#include "jobs/pipeline_model.h"

#include <algorithm>
#include <filesystem>

#include "kiln/units.h"

namespace kiln::jobs {

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
  description_ = pipeline_->checkpoint().display_name + " (" + models::familyName(pipeline_->spec().family) +
                 ", " + at::toString(pipeline_->dtype()) + ", " + formatBytes(pipeline_->weightBytes()) + ")";
  recount();
}

std::string PipelineModel::describe() const { return description_; }
int64_t PipelineModel::hostBytes() const { return host_bytes_.load(); }
int64_t PipelineModel::deviceBytes() const { return device_bytes_.load(); }

void PipelineModel::recount() {
  int64_t host = 0, on_device = 0;
  for (const auto* params : pipeline_->paramLists())
    for (const auto& slot : params->slots()) {
      if (!slot.tensor->defined()) continue;
      const auto n = static_cast<int64_t>(slot.tensor->nbytes());
      // On the CPU there is only host memory.
      (device_.isAccelerator() && device_.holds(*slot.tensor) ? on_device : host) += n;
    }
  host_bytes_ = host;
  device_bytes_ = on_device;
}

void PipelineModel::offload() {
  if (!device_.isAccelerator()) return;
  for (const auto* params : pipeline_->paramLists())
    for (const auto& slot : params->slots())
      if (slot.tensor->defined()) *slot.tensor = device_.download(*slot.tensor);
  recount();
}

void PipelineModel::onload() {
  if (!device_.isAccelerator()) return;
  // Counted as it goes, so a load that runs out of device memory part-way is seen as it is.
  struct Recount {
    PipelineModel* self;
    ~Recount() { self->recount(); }
  } recount_on_exit{this};
  for (const auto* params : pipeline_->paramLists())
    for (const auto& slot : params->slots())
      if (slot.tensor->defined()) *slot.tensor = device_.upload(*slot.tensor);
}

int64_t estimateWorkingBytes(const models::SdModelSpec& spec, int64_t width, int64_t height,
                             at::ScalarType dtype) {
  // The decoder's last level runs at full resolution with base_channels channels; a
  // residual block holds about four such tensors at once, plus a float32 upcast of one.
  const int64_t element = at::elementSize(dtype);
  const int64_t plane = width * height * spec.vae.base_channels;
  return plane * (4 * element + 4);
}

}  // namespace kiln::jobs
