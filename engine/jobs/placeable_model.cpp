#include "jobs/placeable_model.h"

#include <exception>

#include "kiln/error.h"
#include "memory/device.h"

namespace kiln::jobs {

int64_t placementBytesNeeded(const Placements& placements, const memory::Device& device,
                             const memory::OffloadSettings& settings) {
  if (!device.isAccelerator()) return 0;
  int64_t needed = 0;
  for (const auto& p : placements) {
    const memory::PlacementDecision d = memory::decidePlacement(p->component(), p->weightBytes(), settings);
    if (d == p->decision() && p->deviceBytes() > 0) continue;  // placed so already
    needed += memory::ComponentPlacement::plannedPeakBytes(*p->component().params, d) - p->deviceBytes();
  }
  return std::max<int64_t>(needed, 0);
}

std::vector<std::string> placeComponents(Placements& placements, const memory::Device& device,
                                         const memory::OffloadSettings& settings, int64_t balanced_budget_bytes,
                                         const PlacementLog& log) {
  std::vector<std::string> lines;
  if (!device.isAccelerator()) return lines;
  if (device.hasPinnedMemory())
    device.setPinnedLimit(std::max<int64_t>(memory::availableHostBytes().value_or(0) - settings.pin_reserve_bytes, 0));
  std::exception_ptr first_error;
  for (auto& p : placements) {
    try {
      const memory::PlacementDecision d = memory::decidePlacement(p->component(), p->weightBytes(), settings);
      (void)p->apply(d, balanced_budget_bytes, [&](const std::string& line) {
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

WeightBytes countWeightBytes(const std::vector<const weights::ParamList*>& lists, const Placements& placements,
                             const memory::Device& device) {
  WeightBytes out;
  for (const auto* params : lists)
    for (const auto& slot : params->slots()) {
      if (!slot.tensor->defined()) continue;
      (device.isAccelerator() && device.holds(*slot.tensor) ? out.device : out.host) +=
          static_cast<int64_t>(slot.tensor->nbytes());
    }
  if (device.isAccelerator() && out.device > 0)
    for (const auto& p : placements) out.summary.push_back(p->describe());
  return out;
}

void takeOffDevice(Placements& placements, const memory::Device& device,
                   const std::vector<const weights::ParamList*>& lists, const std::string& model,
                   const std::function<void()>& first,
                   const std::function<bool(const memory::ComponentPlacement&)>& which) {
  std::string failed;
  const auto attempt = [&](const std::string& what, const std::function<void()>& move) {
    try {
      move();
    } catch (const std::exception& e) {
      if (failed.empty()) failed = "could not move " + what + " of " + model + " off the device: " + e.what();
    }
  };
  if (first) attempt("the LoRA hooks' copies", first);
  std::vector<const weights::ParamList*> weights = lists;
  for (auto& p : placements) {
    if (which && !which(*p)) continue;
    attempt(p->component().name, [&] { p->teardown(); });
    if (which) weights.push_back(p->component().params);
  }
  // Weights that were put on the device some other way come back too.
  if (device.isAccelerator())
    for (const auto* params : weights)
      for (const auto& slot : params->slots())
        if (slot.tensor->defined()) attempt(slot.name, [&] { *slot.tensor = device.download(*slot.tensor); });
  if (!failed.empty()) throw Error(ErrorKind::OutOfMemory, failed);
}

void shareDeviceInModelMode(Placements& placements) {
  for (auto& p : placements)
    p->setOnModelCall([&placements](memory::ComponentPlacement& entering) {
      for (auto& other : placements)
        if (other.get() != &entering && other->decision().mode == memory::OffloadMode::Model) other->offloadAll();
    });
}

}  // namespace kiln::jobs
