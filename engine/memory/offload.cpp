#include "memory/offload.h"

#include <algorithm>
#include <utility>

#include "kiln/error.h"
#include "kiln/units.h"

namespace kiln::memory {
namespace {

int64_t bytesOf(const at::Tensor& t) {
  return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0;
}

}  // namespace

// ------------------------------------------------------------------------- placement

ComponentPlacement::ComponentPlacement(const Device& device, ComponentInfo component)
    : device_(device), component_(std::move(component)) {
  slots_ = component_.params->slots();
  layout_ = WeightLayout::of(*component_.params);
  weight_bytes_ = layout_.totalBytes();
  host_.resize(slots_.size());
  resident_.assign(slots_.size(), false);
  for (std::size_t i = 0; i < slots_.size(); ++i) slot_of_[slots_[i].tensor] = i;
}

ComponentPlacement::~ComponentPlacement() {
  detach();
}

void ComponentPlacement::detach() noexcept {
  try {
    dropPrefetch();
  } catch (...) {  // a GPU that fails here fails the next call loudly; nothing to do now
  }
  if (component_.params->hooks() == this) component_.params->setHooks(nullptr);
  for (auto& h : host_) h.reset();
  placed_ = false;
}

std::size_t ComponentPlacement::chunkOf(std::size_t group) const {
  return group / static_cast<std::size_t>(decision_.blocks_per_group);
}

std::vector<std::size_t> ComponentPlacement::chunkSlots(std::size_t chunk) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].group >= 0 && chunkOf(static_cast<std::size_t>(slots_[i].group)) == chunk &&
        !resident_[i])
      out.push_back(i);
  return out;
}

bool ComponentPlacement::chunkStreamed(std::size_t chunk) const {
  return !chunkSlots(chunk).empty();
}

void ComponentPlacement::toDevice(std::size_t i) {
  at::Tensor& t = *slots_[i].tensor;
  if (!device_.isAccelerator() || !t.defined() || device_.holds(t)) return;
  if (!host_[i].defined()) host_[i] = t;
  // Per-group pinning stages each transfer through a pinned copy that lives only for it.
  t = device_.upload(decision_.pin == PinMode::PerGroup ? device_.pin(host_[i]) : host_[i]);
  ++counters_.uploads;
  counters_.uploaded_bytes += bytesOf(t);
}

void ComponentPlacement::toHost(std::size_t i) {
  at::Tensor& t = *slots_[i].tensor;
  if (!device_.isAccelerator() || !t.defined() || !device_.holds(t)) return;
  if (!host_[i].defined()) host_[i] = device_.download(t);
  t = host_[i];
}

bool ComponentPlacement::apply(const PlacementDecision& decision, int64_t resident_budget_bytes,
                               const std::function<void(const std::string&)>& log) {
  // Placed so already: nothing to do, unless a balanced part no longer fits its budget
  // (a larger picture's work needs the room); a larger budget never moves weights back.
  if (placed_ && decision == requested_ &&
      (decision_.mode != OffloadMode::Balanced ||
       peakBytes(layout_, resident_, decision_) <= resident_budget_bytes ||
       residentSlots(layout_, decision_, resident_budget_bytes) == resident_)) {
    ++counters_.unchanged;
    return false;
  }
  teardown();
  requested_ = decision_ = decision;
  resident_ = residentSlots(layout_, decision_, resident_budget_bytes);
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (resident_[i]) {
      toDevice(i);
      if (device_.isAccelerator()) host_[i].reset();  // one copy, on the device
    }
  const std::string before_pin = describe();
  if (log) log("placed " + before_pin);
  if (decision_.pin != PinMode::Off) pinStreamedWeights();
  if (log && describe() != before_pin) log("placed " + describe());
  if (decision_.mode != OffloadMode::None) component_.params->setHooks(this);
  placed_ = true;
  ++counters_.applies;
  return true;
}

void ComponentPlacement::teardown() {
  dropPrefetch();
  if (component_.params->hooks() == this) component_.params->setHooks(nullptr);
  // Every weight is tried; the first failure is rethrown after the rest have moved.
  std::exception_ptr first_error;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    try {
      toHost(i);
      resident_[i] = false;
      host_[i].reset();
      at::Tensor& t = *slots_[i].tensor;
      if (t.defined() && device_.isPinned(t)) {  // back to ordinary memory: the pin is given back
        PoolScope pageable(nullptr);
        at::Tensor plain = at::empty_like(t, t.options(), at::MemoryFormat::Contiguous);
        plain.copy_(t);
        t = plain;
      }
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  placed_ = false;
  if (first_error) std::rethrow_exception(first_error);
}

void ComponentPlacement::pinStreamedWeights() {
  if (!device_.hasPinnedMemory() || !device_.isAccelerator()) {
    decision_.pin = PinMode::Off;
    return;
  }
  const int64_t needed = pinnedBytesNeeded(layout_, resident_, decision_);
  const DeviceMemory m = device_.memory();
  const int64_t allowed = m.pinned_limit_bytes > 0 ? m.pinned_limit_bytes - m.pinned_bytes : needed;
  // Denied: block level without streams, unpinned, saying what that costs.
  if (!fitPinnedMemory(decision_, needed, allowed,
                       layout_.totalBytes() - memory::residentBytes(layout_, resident_),
                       !layout_.groups.empty()))
    return;
  if (decision_.pin != PinMode::On) return;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (resident_[i]) continue;
    at::Tensor& t = *slots_[i].tensor;
    if (!t.defined() || device_.holds(t)) continue;
    t = device_.pin(t);  // the pinned copy replaces the pageable one
    host_[i] = t;
  }
}

void ComponentPlacement::offloadAll() {
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (!resident_[i]) toHost(i);
}

int64_t ComponentPlacement::deviceBytes() const {
  if (!device_.isAccelerator()) return 0;
  int64_t total = 0;
  for (const auto& s : slots_)
    if (s.tensor->defined() && device_.holds(*s.tensor)) total += bytesOf(*s.tensor);
  return total;
}

int64_t ComponentPlacement::residentBytes() const {
  if (decision_.mode == OffloadMode::Model && !decision_.offload_after_call) return weight_bytes_;
  return memory::residentBytes(layout_, resident_);
}

int64_t ComponentPlacement::peakWeightBytes() const {
  return peakBytes(layout_, resident_, decision_);
}

namespace {

// ", fp16, not quantized": the dtypes the weights are stored in and their quantization.
std::string weightFormat(const std::vector<weights::ParamSlot>& slots) {
  std::vector<std::string> dtypes;
  bool quantized = false;
  for (const auto& slot : slots) {
    const at::ScalarType t = slot.tensor->scalar_type();
    quantized = quantized || at::isQIntType(t);
    std::string name = t == at::kFloat      ? "fp32"
                       : t == at::kHalf     ? "fp16"
                       : t == at::kBFloat16 ? "bf16"
                                            : at::toString(t);
    if (std::find(dtypes.begin(), dtypes.end(), name) == dtypes.end())
      dtypes.push_back(std::move(name));
  }
  std::string out;
  for (const auto& d : dtypes) out += (out.empty() ? "" : "+") + d;
  if (out.empty()) return "";
  return ", " + out + (quantized ? ", quantized" : ", not quantized");
}

}  // namespace

std::string ComponentPlacement::describe() const {
  return component_.name + " (" + component_.model_class + ", " + formatBytes(weight_bytes_) +
         weightFormat(slots_) + "): " + describeDecision(decision_, residentBytes());
}

// ------------------------------------------------------------------------- hooks

void ComponentPlacement::enterCall() {
  // A call inside another (each tile of a tiled decode inside the whole decode) finds
  // the weights where the outer call put them.
  if (call_depth_++ > 0) return;
  switch (decision_.mode) {
    case OffloadMode::Model:
      if (on_model_call_) on_model_call_(*this);
      for (std::size_t i = 0; i < slots_.size(); ++i) toDevice(i);
      break;
    case OffloadMode::GroupBlock:
    case OffloadMode::Balanced:
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].group < 0) toDevice(i);
      break;
    case OffloadMode::GroupLeaf:
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (!slots_[i].leaf) toDevice(i);
      break;
    case OffloadMode::None:
    case OffloadMode::Invalid:
      break;
  }
}

void ComponentPlacement::leaveCall() {
  if (call_depth_ > 0 && --call_depth_ > 0) return;
  // Also the way out of a call that threw part-way: nothing streamed stays behind.
  dropPrefetch();
  if (decision_.mode == OffloadMode::Model && !decision_.offload_after_call) return;
  if (decision_.mode != OffloadMode::None) offloadAll();
}

void ComponentPlacement::dropPrefetch() {
  if (prefetch_.valid()) prefetch_.wait();
  prefetch_ = {};
  if (queue_) {
    // Copies into memory the compute stream frees must land before it is reused.
    queue_->waitOnCompute();
    queued_.clear();
    queue_->finish();
  }
  prefetched_chunk_ = static_cast<std::size_t>(-1);
}

std::vector<at::Tensor> ComponentPlacement::takePrefetch() {
  if (prefetch_.valid()) return prefetch_.get();  // rethrows the worker's error
  queue_->waitOnCompute();
  return std::exchange(queued_, {});
}

void ComponentPlacement::prefetch(std::size_t chunk) {
  std::vector<std::size_t> slots = chunkSlots(chunk);
  if (slots.empty()) return;
  std::vector<at::Tensor> sources;
  for (std::size_t i : slots) sources.push_back(host_[i].defined() ? host_[i] : *slots_[i].tensor);
  prefetched_chunk_ = chunk;
  const bool stage = decision_.pin == PinMode::PerGroup;
  if (!device_.computeDevice().is_cpu()) {
    // A GPU: the copies are queued on a side stream from this thread, ordered by events.
    if (!queue_) queue_ = std::make_unique<CopyQueue>(device_.computeDevice());
    if (stage)
      for (auto& s : sources) s = device_.pin(s);
    queued_ = queue_->upload(sources, decision_.record_stream);
    return;
  }
  // The simulated device: a worker thread copies, as a DMA engine would.
  if (!copies_) copies_ = std::make_unique<CopyStream>();
  prefetch_ = copies_->submit([this, stage, sources = std::move(sources)] {
    std::vector<at::Tensor> copies;
    for (const auto& s : sources) copies.push_back(device_.upload(stage ? device_.pin(s) : s));
    return copies;
  });
}

void ComponentPlacement::loadChunk(std::size_t chunk) {
  const std::vector<std::size_t> slots = chunkSlots(chunk);
  if (prefetch_.valid() || !queued_.empty()) {
    std::vector<at::Tensor> copies = takePrefetch();
    const bool ours = prefetched_chunk_ == chunk;
    prefetched_chunk_ = static_cast<std::size_t>(-1);
    if (ours) {
      for (std::size_t k = 0; k < slots.size(); ++k) {
        at::Tensor& t = *slots_[slots[k]].tensor;
        if (device_.holds(t)) continue;
        if (!host_[slots[k]].defined()) host_[slots[k]] = t;
        t = copies[k];
        ++counters_.uploads;
        counters_.uploaded_bytes += bytesOf(t);
      }
      return;
    }
  }
  for (std::size_t i : slots) toDevice(i);
}

void ComponentPlacement::enterGroup(std::size_t group) {
  if (decision_.mode != OffloadMode::GroupBlock && decision_.mode != OffloadMode::Balanced) return;
  const std::size_t chunk = chunkOf(group);
  if (group % static_cast<std::size_t>(decision_.blocks_per_group) == 0 ||
      prefetched_chunk_ == chunk)
    loadChunk(chunk);
  else
    for (std::size_t i : chunkSlots(chunk)) toDevice(i);
  if (decision_.streams && group % static_cast<std::size_t>(decision_.blocks_per_group) == 0)
    prefetch(chunk + 1);
}

void ComponentPlacement::leaveGroup(std::size_t group) {
  if (decision_.mode != OffloadMode::GroupBlock && decision_.mode != OffloadMode::Balanced) return;
  const auto n = static_cast<std::size_t>(decision_.blocks_per_group);
  const bool last = group % n == n - 1 || group + 1 == component_.params->groups().size();
  if (!last) return;
  for (std::size_t i : chunkSlots(chunkOf(group))) toHost(i);
}

void ComponentPlacement::enterLeaf(const at::Tensor* weight, const at::Tensor* bias) {
  if (decision_.mode != OffloadMode::GroupLeaf) return;
  for (const at::Tensor* t : {weight, bias})
    if (t)
      if (auto it = slot_of_.find(t); it != slot_of_.end()) toDevice(it->second);
}

void ComponentPlacement::leaveLeaf(const at::Tensor* weight, const at::Tensor* bias) {
  if (decision_.mode != OffloadMode::GroupLeaf) return;
  for (const at::Tensor* t : {weight, bias})
    if (t)
      if (auto it = slot_of_.find(t); it != slot_of_.end()) toHost(it->second);
}

}  // namespace kiln::memory
