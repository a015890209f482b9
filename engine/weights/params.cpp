#include "weights/params.h"

#include "core/interrupt.h"
#include "kiln/error.h"
#include "tensor_io/materialize.h"

namespace kiln::weights {

namespace {
thread_local ExecutionHooks* t_call_hooks = nullptr;
thread_local const LayerAdapters* t_call_adapters = nullptr;
}  // namespace

CallScope::CallScope(const ParamList& params)
    : hooks_(params.hooks()), previous_(t_call_hooks), previous_adapters_(t_call_adapters) {
  t_call_hooks = hooks_;
  t_call_adapters = params.adapters();
  if (hooks_) hooks_->enterCall();
}

CallScope::~CallScope() {
  if (hooks_) hooks_->leaveCall();
  t_call_hooks = previous_;
  t_call_adapters = previous_adapters_;
}

at::Tensor adaptOutput(const at::Tensor* weight, const at::Tensor& x, const at::Tensor& y,
                       const LayerCall& call) {
  return t_call_adapters ? t_call_adapters->adapt(weight, x, y, call) : y;
}

LeafScope::LeafScope(const at::Tensor* weight, const at::Tensor* bias)
    : hooks_(t_call_hooks), weight_(weight), bias_(bias) {
  if (hooks_) hooks_->enterLeaf(weight_, bias_);
}

LeafScope::~LeafScope() {
  if (hooks_) hooks_->leaveLeaf(weight_, bias_);
}

int64_t ParamList::parameterCount() const {
  int64_t n = 0;
  for (const auto& s : slots_) {
    int64_t k = 1;
    for (int64_t d : s.shape) k *= d;
    n += k;
  }
  return n;
}

void moveParams(const ParamList& params, at::Device device) {
  for (const auto& slot : params.slots()) *slot.tensor = slot.tensor->to(device);
}

void loadParams(const ParamList& params, const tensor_io::TensorIndex& index,
                const LoadOptions& options, const std::string& component) {
  std::vector<std::string> problems;
  std::set<std::string> consumed;
  for (const auto& slot : params.slots()) {
    const auto* entry = index.find(slot.name);
    if (!entry) {
      problems.push_back("missing tensor '" + slot.name + "' " +
                         tensor_io::shapeToString(slot.shape));
      continue;
    }
    consumed.insert(slot.name);
    if (entry->shape != slot.shape) {
      problems.push_back("tensor '" + slot.name + "' has shape " +
                         tensor_io::shapeToString(entry->shape) + ", expected " +
                         tensor_io::shapeToString(slot.shape));
    }
  }
  for (const auto& prefix : options.owned_prefixes) {
    for (auto it = index.entries().lower_bound(prefix);
         it != index.entries().end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      if (!consumed.count(it->first) && !options.ignored.count(it->first))
        problems.push_back("unused tensor '" + it->first + "'");
    }
  }
  if (!problems.empty()) {
    std::string msg = "cannot load the " + component + ": " + std::to_string(problems.size()) +
                      " problem(s) with the checkpoint's tensors:";
    const std::size_t shown = std::min<std::size_t>(problems.size(), 20);
    for (std::size_t i = 0; i < shown; ++i) msg += "\n  " + problems[i];
    if (shown < problems.size())
      msg += "\n  ... and " + std::to_string(problems.size() - shown) + " more";
    throw Error(ErrorKind::ShapeMismatch, msg);
  }
  const std::size_t total = storedBytes(params, index);
  std::size_t done = 0;
  for (const auto& slot : params.slots()) {
    core::checkInterrupt();
    const tensor_io::IndexEntry& entry = *index.find(slot.name);
    *slot.tensor = tensor_io::materialize(entry, options.dtype);
    for (const auto& source : entry.sources) done += source.info->byteSize();
    if (options.progress) options.progress(done, total);
  }
}

std::size_t storedBytes(const ParamList& params, const tensor_io::TensorIndex& index) {
  std::size_t bytes = 0;
  for (const auto& slot : params.slots())
    if (const tensor_io::IndexEntry* entry = index.find(slot.name))
      for (const auto& source : entry->sources) bytes += source.info->byteSize();
  return bytes;
}

}  // namespace kiln::weights
