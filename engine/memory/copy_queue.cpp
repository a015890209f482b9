#include "memory/copy_queue.h"

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace kiln::memory {
namespace {

c10::impl::VirtualGuardImpl guardFor(const at::Device& device) {
  return c10::impl::VirtualGuardImpl(device.type());
}

}  // namespace

CopyQueue::CopyQueue(at::Device device)
    : device_(device),
      copy_(guardFor(device).getStreamFromGlobalPool(device)),
      ready_(device.type()),
      done_(device.type()) {}

std::vector<at::Tensor> CopyQueue::upload(const std::vector<at::Tensor>& sources,
                                          bool record_stream) {
  const c10::impl::VirtualGuardImpl impl = guardFor(device_);
  const c10::Stream compute = impl.getStream(device_);
  if (done_.was_marked_for_recording() && done_.query()) in_flight_.clear();
  std::vector<at::Tensor> out;
  out.reserve(sources.size());
  if (!record_stream)
    for (const at::Tensor& s : sources)
      out.push_back(at::empty(s.sizes(), s.options().device(device_)));
  ready_.record(compute);
  {
    const c10::StreamGuard on_copy(copy_);
    ready_.block(copy_);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const at::Tensor& s = sources[i];
      if (record_stream) {
        at::Tensor d = at::empty(s.sizes(), s.options().device(device_));
        d.copy_(s, /*non_blocking=*/s.is_pinned());
        d.record_stream(compute);
        out.push_back(d);
      } else {
        out[i].copy_(s, /*non_blocking=*/s.is_pinned());
      }
      in_flight_.push_back(s);
    }
    done_.record(copy_);
  }
  return out;
}

void CopyQueue::waitOnCompute() {
  if (!done_.was_marked_for_recording()) return;
  const c10::impl::VirtualGuardImpl impl = guardFor(device_);
  done_.block(impl.getStream(device_));
}

void CopyQueue::finish() {
  guardFor(device_).synchronizeStream(copy_);
  in_flight_.clear();
}

}  // namespace kiln::memory
