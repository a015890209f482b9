// The memory map: what offload settings will put on the device and in pinned host memory
// for each loaded model, computed before they are applied (Engine::planMemory) from the
// estimates the engine places weights with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/offload.h"

namespace kiln {

struct PlannedComponent {
  std::string name;         // "unet"
  std::string model_class;  // "UNetModel"
  // "group-block, 1 block per group, streams, pinned (why, where it differs from the
  // settings)"
  std::string placement;
  int64_t weight_bytes = 0;
  int64_t resident_bytes = 0;  // on the device between calls
  int64_t streamed_bytes = 0;  // the most it brings onto the device during a call
  int64_t pinned_bytes = 0;    // pinned host memory it holds
};

struct ModelMemoryPlan {
  std::string model;                          // "kiln-starter (sd1, bf16)"
  int64_t width = 0, height = 0, frames = 0;  // the size the working memory is for
  std::vector<PlannedComponent> components;
  // The device bar: what Kiln may use for this model (its budget, less what others
  // hold), split into resident weights, the largest streamed group, working memory, the
  // working reserve and what is left (negative: that much too little).
  int64_t room_bytes = 0;
  int64_t resident_bytes = 0, streamed_bytes = 0, working_bytes = 0, reserve_bytes = 0;
  int64_t left_bytes = 0;
  std::string largest_streamed;  // the component the largest streamed group belongs to
  // The host bar: weights kept in host memory, of them pinned, and the pinned memory the
  // settings allow (-1: the device has none).
  int64_t host_bytes = 0, pinned_bytes = 0, pinned_room_bytes = -1;
  std::vector<std::string> problems;  // what will not fit, and what to change
  std::vector<std::string> notes;     // what the placement changes on its own
  bool fits() const noexcept { return problems.empty(); }
};

struct MemoryPlan {
  std::string device;                   // "cuda:0", "sim:8.00 GiB", "cpu"
  bool accelerator = false;             // false: weights stay in host memory; nothing is placed
  std::vector<ModelMemoryPlan> models;  // loaded models, most recently used first
  // The engine was moving models between device and host memory just then (no models
  // listed): ask again shortly.
  bool busy = false;
};

struct MemoryPlanRequest {
  OffloadSettings offload;
  // The picture or clip the working memory is for; 0: each model's native size.
  int64_t width = 0, height = 0, frames = 0;
};

}  // namespace kiln
