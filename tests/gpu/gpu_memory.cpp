// The GPU device's memory, as the engine counts it: uploads land in the caching
// allocator's statistics and leave them, pinned host memory is counted and limited, and
// copies are exact both ways.
#include <c10/util/Exception.h>

#include <string>

#include "gpu_check.h"
#include "memory/device.h"
#include "memory/gpu_device.h"

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

}  // namespace

GPU_TEST(deviceNamesAndDescribesTheGpu) {
  const auto device = kiln::memory::makeDevice("cuda:0");
  GPU_CHECK(device->name() == "cuda:0", device->name());
  GPU_CHECK(device->computeDevice() == at::Device(at::kCUDA, 0), "computes on cuda:0");
  GPU_CHECK(!kiln::memory::describeGpus().empty(), "the GPU is listed");
  const kiln::memory::DeviceMemory m = device->memory();
  GPU_CHECK(m.total_bytes > 0 && m.free_bytes > 0 && m.free_bytes <= m.total_bytes,
            "total " + std::to_string(m.total_bytes) + ", free " + std::to_string(m.free_bytes));
  bool refused = false;
  try {
    (void)kiln::memory::makeDevice("cuda:99");
  } catch (const std::exception&) {
    refused = true;
  }
  GPU_CHECK(refused, "a GPU that is not there is refused");
}

GPU_TEST(uploadsAreCountedAndGiveTheirMemoryBack) {
  const auto device = kiln::memory::makeDevice("cuda:0");
  device->emptyCache();
  const int64_t before = device->memory().allocated_bytes;
  {
    const at::Tensor host = at::randn({64 * kMiB / 4});
    const at::Tensor up = device->upload(host);
    GPU_CHECK(device->holds(up) && !device->holds(host), "the copy is on the GPU");
    const int64_t during = device->memory().allocated_bytes;
    GPU_CHECK(during - before >= 64 * kMiB, "64 MiB allocated: " + std::to_string(during - before));
    GPU_CHECK(at::equal(device->download(up), host), "the round trip is exact");
  }
  GPU_CHECK(device->memory().allocated_bytes == before, "allocated back to where it was");
  GPU_CHECK(device->memory().reserved_bytes >= device->memory().allocated_bytes,
            "reserved counts what the allocator keeps");
  device->emptyCache();
  const kiln::memory::DeviceMemory m = device->memory();
  GPU_CHECK(m.reserved_bytes - m.allocated_bytes < 32 * kMiB,
            "the cache given back: " + std::to_string(m.reserved_bytes - m.allocated_bytes));
}

GPU_TEST(pinnedMemoryIsCountedLimitedAndExact) {
  const auto device = kiln::memory::makeDevice("cuda:0");
  GPU_CHECK(device->hasPinnedMemory(), "a GPU has pinned memory");
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const at::Tensor host = at::randn({16 * kMiB / 4}).to(dtype);
    const at::Tensor pinned = device->pin(host);
    GPU_CHECK(device->isPinned(pinned) && pinned.is_pinned(), "pinned for the driver too");
    GPU_CHECK(device->memory().pinned_bytes >= static_cast<int64_t>(host.nbytes()),
              "pinned bytes counted");
    const at::Tensor up = device->upload(pinned);  // an asynchronous copy
    GPU_CHECK(at::equal(device->download(up), host), "the asynchronous copy is exact");
  }
  GPU_CHECK(device->memory().pinned_bytes == 0, "pinned bytes given back with the tensors");
  device->setPinnedLimit(kMiB);
  bool refused = false;
  try {
    (void)device->pin(at::zeros({4 * kMiB / 4}));
  } catch (const c10::OutOfMemoryError&) {
    refused = true;
  }
  GPU_CHECK(refused, "pinning past the limit is refused as out of memory");
  device->emptyCache();
  GPU_CHECK(device->memory().pinned_reserved_bytes == 0, "the pinned cache given back");
}

GPU_TEST(outOfMemoryIsLibtorchsTypedError) {
  const auto device = kiln::memory::makeDevice("cuda:0");
  const int64_t too_much = device->memory().total_bytes * 2;
  bool typed = false;
  try {
    (void)at::empty({too_much}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA, 0));
  } catch (const c10::OutOfMemoryError&) {
    typed = true;
  }
  GPU_CHECK(typed, "twice the GPU's memory fails with c10::OutOfMemoryError");
  device->emptyCache();
}
