// Offload: where each component's weights live while it runs. Modes per component:
// none (resident), model (the whole component onloaded when it is called), group-block
// (groups of N blocks onloaded just before they run and dropped after), group-leaf (each
// layer's weights just around its one operation) and balanced (as many blocks resident
// as the budget allows, the rest streamed). Settings apply to loaded components without a
// reload; each component remembers the signature of what it was placed with, so an
// unchanged re-apply does nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/offload.h"
#include "memory/copy_queue.h"
#include "memory/copy_stream.h"
#include "memory/device.h"
#include "memory/placement_plan.h"
#include "weights/params.h"

namespace kiln::memory {

struct PlacementCounters {
  int64_t applies = 0;         // placements done
  int64_t unchanged = 0;       // re-applies skipped because nothing changed
  int64_t uploads = 0;         // tensors copied to the device
  int64_t uploaded_bytes = 0;  // bytes copied to the device
};

// One component's placement on a device: installs itself as the component's execution
// hooks and moves weights as the forward code enters and leaves calls, groups and leaves.
class ComponentPlacement final : public weights::ExecutionHooks {
 public:
  ComponentPlacement(const Device& device, ComponentInfo component);
  ~ComponentPlacement() override;  // hooks removed; weights stay where they are (see detach)
  ComponentPlacement(const ComponentPlacement&) = delete;
  ComponentPlacement& operator=(const ComponentPlacement&) = delete;

  // Places the component as `decision` says. Returns false (and does nothing) when it is
  // already placed so. `resident_budget_bytes` bounds balanced mode's peak (its resident
  // part and the blocks streaming past it); a balanced placement whose peak exceeds a new,
  // smaller budget is placed again.
  // `log` hears "placed <describe()>" once the resident weights are on the device and
  // before the pin step (which may take long or fail), and again after it where pinning
  // changed the placement (denied).
  bool apply(const PlacementDecision& decision, int64_t resident_budget_bytes,
             const std::function<void(const std::string&)>& log = {});
  // Everything back to host memory, hooks removed; the next apply starts afresh.
  void teardown();
  // Hooks removed and host copies dropped without moving anything: for a model that is
  // being unloaded, whose weights are about to be freed wherever they are.
  void detach() noexcept;

  const ComponentInfo& component() const noexcept { return component_; }
  // What was placed: the decision asked for, less what could not be had (a denied pin).
  const PlacementDecision& decision() const noexcept { return decision_; }
  int64_t weightBytes() const noexcept { return weight_bytes_; }
  // Its weights' sizes (never changing; readable from any thread).
  const WeightLayout& layout() const noexcept { return layout_; }
  int64_t deviceBytes() const;
  // Device bytes this placement keeps between calls (resident weights).
  int64_t residentBytes() const;
  // The most device bytes its weights take at any moment of a call.
  int64_t peakWeightBytes() const;
  const PlacementCounters& counters() const noexcept { return counters_; }
  // "unet (UNetModel, 1.64 GiB, bf16): group-block, 1 block per group, streams"
  std::string describe() const;

  // ExecutionHooks
  void enterCall() override;
  void leaveCall() override;
  void enterGroup(std::size_t group) override;
  void leaveGroup(std::size_t group) override;
  void enterLeaf(const at::Tensor* weight, const at::Tensor* bias) override;
  void leaveLeaf(const at::Tensor* weight, const at::Tensor* bias) override;

  // Model mode: called by the owner when another component needs the device.
  void offloadAll();
  // Called when a model-mode call begins, so the owner can send other components home.
  void setOnModelCall(std::function<void(ComponentPlacement&)> callback) {
    on_model_call_ = std::move(callback);
  }

 private:
  void toDevice(std::size_t slot);
  void toHost(std::size_t slot);
  std::vector<std::size_t> chunkSlots(std::size_t chunk) const;
  std::size_t chunkOf(std::size_t group) const;
  bool chunkStreamed(std::size_t chunk) const;
  void loadChunk(std::size_t chunk);
  void prefetch(std::size_t chunk);
  // The next chunk's copies, once they can be read; waits for any still running.
  std::vector<at::Tensor> takePrefetch();
  void dropPrefetch();
  void pinStreamedWeights();

  const Device& device_;
  ComponentInfo component_;
  std::vector<weights::ParamSlot> slots_;
  WeightLayout layout_;
  std::vector<at::Tensor> host_;  // host copies (undefined where dropped: resident)
  std::vector<bool> resident_;    // stays on the device between calls
  std::unordered_map<const at::Tensor*, std::size_t> slot_of_;
  int64_t weight_bytes_ = 0;
  bool placed_ = false;
  int call_depth_ = 0;  // calls entered and not yet left (nested calls move nothing)
  PlacementDecision requested_, decision_;
  PlacementCounters counters_;
  // Streams: the next chunk's device copies, made on a worker thread (the simulated
  // device) or queued on a GPU's copy stream.
  std::size_t prefetched_chunk_ = static_cast<std::size_t>(-1);
  std::unique_ptr<CopyStream> copies_;  // started with the first prefetch
  std::future<std::vector<at::Tensor>> prefetch_;
  std::unique_ptr<CopyQueue> queue_;  // a GPU's copy stream, made with the first prefetch
  std::vector<at::Tensor> queued_;    // its copies of prefetched_chunk_
  std::function<void(ComponentPlacement&)> on_model_call_;
};

}  // namespace kiln::memory
