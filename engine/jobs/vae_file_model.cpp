#include "jobs/vae_file_model.h"

#include "kiln/units.h"
#include "memory/device.h"
#include "tensor_io/safetensors.h"

namespace kiln::jobs {

VaeFileModel::VaeFileModel(std::unique_ptr<nodes::VaeFile> vae, const memory::Device& device)
    : vae_(std::move(vae)), device_(device) {
  memory::ComponentInfo c;
  c.name = "vae";
  c.model_class = "AutoencoderKL";
  c.role = memory::ComponentRole::Vae;
  c.params = &vae_->vae().params();
  placement_ = std::make_unique<memory::ComponentPlacement>(device_, std::move(c));
  recount();
}

VaeFileModel::~VaeFileModel() { placement_.reset(); }

std::string VaeFileModel::staleReason() const { return tensor_io::filesChangedOnDisk(vae_->files()); }

std::string VaeFileModel::describe() const {
  return vae_->name() + " (VAE, " + at::toString(vae_->dtype()) + ", " + formatBytes(vae_->weightBytes()) + ")";
}

void VaeFileModel::recount() {
  const int64_t on_device = device_.isAccelerator() ? placement_->deviceBytes() : 0;
  device_bytes_ = on_device;
  host_bytes_ = vae_->weightBytes() - on_device;
}

void VaeFileModel::offload() {
  placement_->teardown();
  recount();
}

std::vector<std::string> VaeFileModel::placementSummary() const {
  if (!device_.isAccelerator() || device_bytes_.load() == 0) return {};
  return {placement_->describe()};
}

std::vector<std::string> VaeFileModel::place(const memory::OffloadSettings& settings) {
  if (!device_.isAccelerator()) return {};
  const memory::PlacementDecision d = memory::decidePlacement(placement_->component(), placement_->weightBytes(), settings);
  std::vector<std::string> lines;
  if (placement_->apply(d, device_.memory().free_bytes)) lines.push_back("placed " + placement_->describe());
  recount();
  return lines;
}

}  // namespace kiln::jobs
