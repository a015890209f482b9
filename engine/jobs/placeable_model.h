// A cached model whose components the job places on its device as the offload settings
// say (the SD pipeline, the video pipeline): what placeModel needs of it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "memory/model_cache.h"
#include "memory/offload.h"

namespace kiln::jobs {

// Hears each placement line as it happens (see ComponentPlacement::apply).
using PlacementLog = std::function<void(const std::string&)>;

class PlaceableModel : public memory::CachedModel {
 public:
  // Device bytes that placing with `settings` still needs: weights that will stay on the
  // device and are not there yet, plus what streamed components onload during a call.
  virtual int64_t deviceBytesNeeded(const memory::OffloadSettings& settings) const = 0;
  // Places every component as the settings say; components already placed so are left
  // alone. Returns one line per component whose placement was (re)done, for the log.
  // `balanced_budget_bytes` is what balanced mode may keep resident. `log`, when given,
  // hears each line as it happens (a component's before its pin step).
  virtual std::vector<std::string> place(const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                         const PlacementLog& log = {}) = 0;
};

using Placements = std::vector<std::unique_ptr<memory::ComponentPlacement>>;

// What PlaceableModel::deviceBytesNeeded computes, over a model's component placements.
int64_t placementBytesNeeded(const Placements& placements, const memory::Device& device,
                             const memory::OffloadSettings& settings);
// What PlaceableModel::place does, over a model's component placements: pinned memory
// limited to what the host has free less the reserve; a failure on one component does
// not stop the others (it is torn down) and the first error is rethrown.
std::vector<std::string> placeComponents(Placements& placements, const memory::Device& device,
                                         const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                         const PlacementLog& log = {});
// Where a model's weights are (on the CPU, all host memory), with the placements'
// descriptions when any weight is on the device.
struct WeightBytes {
  int64_t host = 0, device = 0;
  std::vector<std::string> summary;
};
WeightBytes countWeightBytes(const std::vector<const weights::ParamList*>& lists, const Placements& placements,
                             const memory::Device& device);

// What a model's offload() does: every component torn down and every weight of `lists`
// brought back to the host, each tried whatever failed before it (after `first`, when
// given); the first failure is thrown after, as kiln::Error(OutOfMemory) naming the
// component and `model`. With `which`, only the components it picks, and their weights.
void takeOffDevice(Placements& placements, const memory::Device& device,
                   const std::vector<const weights::ParamList*>& lists, const std::string& model,
                   const std::function<void()>& first = {},
                   const std::function<bool(const memory::ComponentPlacement&)>& which = {});

// In model mode, a component called onto the device sends the others in that mode home.
void shareDeviceInModelMode(Placements& placements);

}  // namespace kiln::jobs
