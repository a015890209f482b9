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
  placements_.push_back(std::make_unique<memory::ComponentPlacement>(device_, std::move(c)));
  recount();
}

VaeFileModel::~VaeFileModel() { placements_.clear(); }

std::string VaeFileModel::staleReason() const { return tensor_io::filesChangedOnDisk(vae_->files()); }

std::string VaeFileModel::describe() const {
  return vae_->name() + " (VAE, " + at::toString(vae_->dtype()) + ", " + formatBytes(vae_->weightBytes()) + ")";
}

void VaeFileModel::recount() {
  const int64_t on_device = device_.isAccelerator() ? placements_.front()->deviceBytes() : 0;
  device_bytes_ = on_device;
  host_bytes_ = vae_->weightBytes() - on_device;
}

void VaeFileModel::offload() {
  placements_.front()->teardown();
  recount();
}

std::vector<std::string> VaeFileModel::placementSummary() const {
  if (!device_.isAccelerator() || device_bytes_.load() == 0) return {};
  return {placements_.front()->describe()};
}

int64_t VaeFileModel::deviceBytesNeeded(const memory::OffloadSettings& settings) const {
  return placementBytesNeeded(placements_, device_, settings);
}

std::vector<std::string> VaeFileModel::place(const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                             const PlacementLog& log) {
  struct Recount {
    VaeFileModel& m;
    ~Recount() { m.recount(); }
  } recount_after{*this};
  return placeComponents(placements_, device_, settings, balanced_budget_bytes, log);
}

}  // namespace kiln::jobs
