// Parameter slots: every module declares the tensors it needs under their checkpoint key
// and expected shape; the loader fills them from a TensorIndex and reports every missing,
// mis-shaped and unused tensor by name. Nothing is ever randomly initialised.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tensor_io/tensor_index.h"

namespace kiln::models {

struct ParamSlot {
  std::string name;
  std::vector<int64_t> shape;
  at::Tensor* tensor = nullptr;
};

class ParamList {
 public:
  void add(std::string name, std::vector<int64_t> shape, at::Tensor* tensor) {
    slots_.push_back({std::move(name), std::move(shape), tensor});
  }
  const std::vector<ParamSlot>& slots() const noexcept { return slots_; }
  int64_t parameterCount() const;

 private:
  std::vector<ParamSlot> slots_;
};

struct LoadOptions {
  at::ScalarType dtype = at::kFloat;
  // Tensors under these prefixes belong to the component being loaded: any that no slot
  // consumes is reported as unused.
  std::vector<std::string> owned_prefixes;
  // Keys that real checkpoints carry but no module uses (position_ids buffers, ...).
  std::set<std::string> ignored;
  // Called with (slots done, slots total) while loading.
  std::function<void(std::size_t, std::size_t)> progress;
};

// Fills every slot. Throws kiln::Error(ShapeMismatch) listing all missing and mis-shaped
// tensors (both shapes) and unused ones, so one run tells the whole story.
// Moves every bound tensor to `device` (and optionally another dtype).
void moveParams(const ParamList& params, at::Device device);

void loadParams(const ParamList& params, const tensor_io::TensorIndex& index,
                const LoadOptions& options, const std::string& component);

}  // namespace kiln::models
