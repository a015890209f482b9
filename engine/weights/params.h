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

namespace kiln::weights {

struct ParamSlot {
  std::string name;
  std::vector<int64_t> shape;
  at::Tensor* tensor = nullptr;
  int group = -1;     // index into ParamList::groups(), -1 outside any
  bool leaf = false;  // a layer's weight or bias, reported through LeafScope
};

// A run of slots that forward code uses together (a UNet block, a text-encoder layer): the
// unit block-level offload moves.
struct ParamGroup {
  std::string name;
  std::size_t first = 0, count = 0;  // slots [first, first + count)
};

// What forward code tells whoever places the weights (the memory module's offload): a
// call into the component begins and ends, a group's or a leaf layer's weights are about
// to be used and are done with. Implementations may replace the slot tensors (move them
// between host and device memory) in any enter call.
class ExecutionHooks {
 public:
  virtual ~ExecutionHooks() = default;
  virtual void enterCall() = 0;
  virtual void leaveCall() = 0;
  virtual void enterGroup(std::size_t group) = 0;
  virtual void leaveGroup(std::size_t group) = 0;
  // A layer's weight (and bias, which may be null) around its one operation.
  virtual void enterLeaf(const at::Tensor* weight, const at::Tensor* bias) = 0;
  virtual void leaveLeaf(const at::Tensor* weight, const at::Tensor* bias) = 0;
};

// How a layer applies its weight, for adapters that add a term of their own.
struct LayerCall {
  bool conv = false;
  int64_t stride = 1, padding = 0;
};

// Terms that layers add to their output, looked up by the layer's weight (LoRA in hook
// mode). Weights stay untouched; `adapt` returns y plus whatever belongs to `weight`
// (y itself when nothing does).
class LayerAdapters {
 public:
  virtual ~LayerAdapters() = default;
  virtual at::Tensor adapt(const at::Tensor* weight, const at::Tensor& x, const at::Tensor& y,
                           const LayerCall& call) const = 0;
};

class ParamList {
 public:
  enum class Kind { Invalid = 0, Plain, Leaf };
  void add(std::string name, std::vector<int64_t> shape, at::Tensor* tensor,
           Kind kind = Kind::Plain) {
    const int group = groups_.empty() || !group_open_ ? -1 : static_cast<int>(groups_.size() - 1);
    slots_.push_back({std::move(name), std::move(shape), tensor, group, kind == Kind::Leaf});
    if (group >= 0) ++groups_.back().count;
  }
  // Slots added from now on belong to a new group (until the next beginGroup or
  // endGroup); returns its index.
  std::size_t beginGroup(std::string name) {
    groups_.push_back({std::move(name), slots_.size(), 0});
    group_open_ = true;
    return groups_.size() - 1;
  }
  void endGroup() noexcept { group_open_ = false; }
  const std::vector<ParamSlot>& slots() const noexcept { return slots_; }
  const std::vector<ParamGroup>& groups() const noexcept { return groups_; }
  int64_t parameterCount() const;

  // Hooks are placement state, not model state: set on a const model by its placement.
  void setHooks(ExecutionHooks* hooks) const noexcept { hooks_ = hooks; }
  ExecutionHooks* hooks() const noexcept { return hooks_; }
  // Adapters are likewise not model state: set by whoever owns them, cleared before they go.
  void setAdapters(const LayerAdapters* adapters) const noexcept { adapters_ = adapters; }
  const LayerAdapters* adapters() const noexcept { return adapters_; }

 private:
  std::vector<ParamSlot> slots_;
  std::vector<ParamGroup> groups_;
  bool group_open_ = false;
  mutable ExecutionHooks* hooks_ = nullptr;
  mutable const LayerAdapters* adapters_ = nullptr;
};

// Around a public entry point of a model (forward, encode, decode): tells the hooks, and
// makes them the ones the thread's leaf layers report to.
class CallScope {
 public:
  explicit CallScope(const ParamList& params);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  ExecutionHooks* hooks_;
  ExecutionHooks* previous_;
  const LayerAdapters* previous_adapters_;
};

// What the adapters of the thread's current call add to a layer's output y.
at::Tensor adaptOutput(const at::Tensor* weight, const at::Tensor& x, const at::Tensor& y,
                       const LayerCall& call = {});

// Around the forward code of one group.
class GroupScope {
 public:
  GroupScope(const ParamList& params, std::size_t group) : hooks_(params.hooks()), group_(group) {
    if (hooks_) hooks_->enterGroup(group_);
  }
  ~GroupScope() {
    if (hooks_) hooks_->leaveGroup(group_);
  }
  GroupScope(const GroupScope&) = delete;
  GroupScope& operator=(const GroupScope&) = delete;

 private:
  ExecutionHooks* hooks_;
  std::size_t group_;
};

// Around one leaf layer's operation; reports to the hooks of the thread's current call.
class LeafScope {
 public:
  LeafScope(const at::Tensor* weight, const at::Tensor* bias);
  ~LeafScope();
  LeafScope(const LeafScope&) = delete;
  LeafScope& operator=(const LeafScope&) = delete;

 private:
  ExecutionHooks* hooks_;
  const at::Tensor *weight_, *bias_;
};

struct LoadOptions {
  at::ScalarType dtype = at::kFloat;
  // Tensors under these prefixes belong to the component being loaded: any that no slot
  // consumes is reported as unused.
  std::vector<std::string> owned_prefixes;
  // Keys that real checkpoints carry but no module uses (position_ids buffers, ...).
  std::set<std::string> ignored;
  // Called after each slot with (stored bytes done, stored bytes total) of this call's
  // slots: how much of the file has been read.
  std::function<void(std::size_t, std::size_t)> progress;
};

// The bytes the file stores for `params`' slots (what loading reads; 0 for slots the
// index lacks).
std::size_t storedBytes(const ParamList& params, const tensor_io::TensorIndex& index);

// Fills every slot. Throws kiln::Error(ShapeMismatch) listing all missing and mis-shaped
// tensors (both shapes) and unused ones, so one run tells the whole story.
// Moves every bound tensor to `device` (and optionally another dtype).
void moveParams(const ParamList& params, at::Device device);

void loadParams(const ParamList& params, const tensor_io::TensorIndex& index,
                const LoadOptions& options, const std::string& component);

}  // namespace kiln::weights
