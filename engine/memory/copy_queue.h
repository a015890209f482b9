// Host-to-device copies on a GPU's side stream, ordered by events, through libtorch's
// device-generic stream API (so the same code serves CUDA and ROCm). The destination is
// allocated on the compute stream, the copy stream first waits for the work queued on
// the compute stream so far (the destination's memory may have just been freed there),
// and the compute stream waits on the copies' event before it uses them: the next group
// of weights arrives while the current one computes, and nothing is read before it has
// landed. With record_stream the destination is allocated on the copy stream instead and
// marked as used by the compute stream.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>

#include <vector>

namespace kiln::memory {

class Device;

class CopyQueue {
 public:
  // A copy stream from libtorch's pool for `device` (a GPU).
  explicit CopyQueue(at::Device device);

  // Queues copies of `sources` (host tensors; pinned ones copy asynchronously) and
  // returns their device tensors, not to be read before waitOnCompute(). Keeps `sources`
  // alive until the copies have run.
  std::vector<at::Tensor> upload(const std::vector<at::Tensor>& sources, bool record_stream);
  // Makes the current stream wait for every copy queued so far.
  void waitOnCompute();
  // Waits on the host until the queued copies have run, then lets their sources go.
  void finish();

 private:
  at::Device device_;
  c10::Stream copy_;
  c10::Event ready_;                   // recorded on the compute stream before each batch of copies
  c10::Event done_;                    // recorded on the copy stream after it
  std::vector<at::Tensor> in_flight_;  // sources of copies that may still be running
};

}  // namespace kiln::memory
