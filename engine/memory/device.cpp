#include "memory/device.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kiln/error.h"
#include "kiln/units.h"
#include "memory/gpu_device.h"

namespace kiln::memory {
namespace {

std::optional<int64_t> meminfoField(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(field.size() + 1));
    int64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

bool onCpu(const at::Tensor& t) {
  return t.defined() && t.has_storage() && t.device().is_cpu();
}

thread_local at::Device t_compute_device = at::kCPU;

// The device a GPU's guard makes current; none for the CPU and the simulated device.
c10::optional<at::Device> gpuOf(const Device& device) {
  const at::Device d = device.computeDevice();
  if (d.is_cpu()) return c10::nullopt;
  return d;
}

}  // namespace

DeviceScope::DeviceScope(const Device& device)
    : scope_(device.computePool()), guard_(gpuOf(device)), previous_(t_compute_device) {
  t_compute_device = device.computeDevice();
}

DeviceScope::~DeviceScope() {
  t_compute_device = previous_;
}

at::Device computeDevice() noexcept {
  return t_compute_device;
}

// Contiguous sources are copied with one memcpy, the way a DMA engine moves bytes without
// compute threads; going through ATen's copy would start an OpenMP team on whatever thread
// runs the copy.
at::Tensor contiguousCopy(const at::Tensor& src) {
  at::Tensor out = at::empty_like(src, src.options(), at::MemoryFormat::Contiguous);
  if (src.is_contiguous() && src.scalar_type() == out.scalar_type())
    std::memcpy(out.data_ptr(), src.data_ptr(), static_cast<std::size_t>(src.nbytes()));
  else
    out.copy_(src);
  return out;
}

void addPinnedMemory(DeviceMemory& m, const MemoryPool& pinned) {
  const PoolStats p = pinned.stats();
  m.pinned_bytes = p.allocated_bytes;
  m.pinned_reserved_bytes = p.reserved_bytes;
  m.pinned_peak_bytes = p.peak_allocated_bytes;
  m.pinned_limit_bytes = p.capacity_bytes;
}

void limitPinnedPool(MemoryPool& pool, int64_t bytes) {
  pool.emptyCache();
  // A pool's capacity 0 means unlimited: a limit of nothing is one byte.
  pool.setCapacity(
      std::max<int64_t>(pool.stats().allocated_bytes + std::max<int64_t>(bytes, 0), 1));
}

const char* deviceKindName(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::Cpu:
      return "cpu";
    case DeviceKind::Cuda:
      return "cuda";
    case DeviceKind::Simulated:
      return "simulated";
    case DeviceKind::Invalid:
      break;
  }
  return "invalid";
}

std::optional<int64_t> availableHostBytes() {
  return meminfoField("MemAvailable");
}

DeviceMemory CpuDevice::memory() const {
  DeviceMemory m;
  m.total_bytes = meminfoField("MemTotal").value_or(0);
  m.free_bytes = availableHostBytes().value_or(0);
  m.allocated_bytes = m.reserved_bytes = m.total_bytes - m.free_bytes;
  m.peak_allocated_bytes = m.allocated_bytes;
  return m;
}

at::Tensor CpuDevice::download(const at::Tensor& t) const {
  if (holds(t)) return t;
  PoolScope host(nullptr);
  return t.to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
}

bool CpuDevice::holds(const at::Tensor& t) const {
  // Host memory is anything on the CPU that no counted pool owns.
  return onCpu(t) && poolOf(t.storage()) == nullptr;
}

SimulatedDevice::SimulatedDevice(int64_t capacity_bytes)
    : pool_(std::make_shared<MemoryPool>("simulated device (" + formatBytes(capacity_bytes) + ")",
                                         capacity_bytes)),
      pinned_(std::make_shared<MemoryPool>("pinned host memory", 0)) {
  if (capacity_bytes <= 0)
    throw Error(ErrorKind::InvalidArgument, "a simulated device needs a capacity above zero bytes");
}

std::string SimulatedDevice::name() const {
  return "sim:" + formatBytes(pool_->stats().capacity_bytes);
}

DeviceMemory SimulatedDevice::memory() const {
  const PoolStats s = pool_->stats();
  DeviceMemory m;
  m.total_bytes = s.capacity_bytes;
  m.allocated_bytes = s.allocated_bytes;
  m.reserved_bytes = s.reserved_bytes;
  m.free_bytes = s.capacity_bytes - s.allocated_bytes;
  m.peak_allocated_bytes = s.peak_allocated_bytes;
  addPinnedMemory(m, *pinned_);
  return m;
}

at::Tensor SimulatedDevice::pin(const at::Tensor& host) const {
  if (isPinned(host)) return host;
  PoolScope scope(pinned_);
  return contiguousCopy(host);
}

bool SimulatedDevice::isPinned(const at::Tensor& t) const {
  return onCpu(t) && pinned_->owns(t.storage());
}

void SimulatedDevice::setPinnedLimit(int64_t bytes) const {
  limitPinnedPool(*pinned_, bytes);
}

at::Tensor SimulatedDevice::upload(const at::Tensor& t) const {
  if (holds(t)) return t;
  uploads_.fetch_add(1);
  PoolScope scope(pool_);
  return contiguousCopy(t);
}

at::Tensor SimulatedDevice::download(const at::Tensor& t) const {
  if (!holds(t)) return t;
  PoolScope host(nullptr);
  return contiguousCopy(t);
}

bool SimulatedDevice::holds(const at::Tensor& t) const {
  return onCpu(t) && pool_->owns(t.storage());
}

std::unique_ptr<Device> makeDevice(std::string_view spec) {
  if (spec == "cpu") return std::make_unique<CpuDevice>();
  if (spec.rfind("sim:", 0) == 0) {
    const auto bytes = parseBytes(spec.substr(4));
    if (!bytes || *bytes <= 0)
      throw Error(ErrorKind::InvalidArgument, "cannot read the simulated device's capacity in '" +
                                                  std::string(spec) +
                                                  "'; write it like sim:8G or sim:512MiB");
    return std::make_unique<SimulatedDevice>(*bytes);
  }
  if (spec == "cuda" || spec.rfind("cuda:", 0) == 0) {
    const GpuBackend* backend = gpuBackend();
    if (!backend)
      throw Error(ErrorKind::InvalidArgument,
                  "this build of Kiln has no GPU support (its libtorch is CPU-only), so '" +
                      std::string(spec) +
                      "' is not available; use cpu, or sim:BYTES to simulate an accelerator");
    const std::string_view digits = spec == "cuda" ? std::string_view("0") : spec.substr(5);
    int index = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty())
      throw Error(ErrorKind::InvalidArgument,
                  "cannot read the GPU number in '" + std::string(spec) + "'; write cuda:0");
    return std::make_unique<GpuDevice>(*backend, index);
  }
  throw Error(ErrorKind::InvalidArgument,
              "unknown device '" + std::string(spec) +
                  "'; use cpu, cuda:N or sim:BYTES (for example sim:8G)");
}

}  // namespace kiln::memory
