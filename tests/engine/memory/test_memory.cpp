// The memory module on the simulated accelerator: counted allocations, the caching
// allocator's reserved-but-free memory, out-of-memory errors, and the model cache's
// budgets, locks, make-room semantics and failure handling.
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <future>
#include <thread>

#include "core/torch_compat.h"
#include "kiln/error.h"
#include "kiln/units.h"
#include "memory/copy_stream.h"
#include "memory/device.h"
#include "memory/gpu_device.h"
#include "memory/model_cache.h"

using namespace kiln;
using namespace kiln::memory;

namespace {

constexpr int64_t kMiB = 1024 * 1024;

// Host blocks for a pool, counted: what a GPU's pinned allocator is to its pinned pool.
class BlockSource final : public c10::Allocator {
 public:
  static inline std::atomic<int> live{0};
  c10::DataPtr allocate(std::size_t bytes) KILN_ALLOCATE_CONST override {
    void* data = std::malloc(std::max<std::size_t>(bytes, 1));
    ++live;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  KILN_ALLOCATOR_COPY_DATA

 private:
  static void release(void* data) {
    --live;
    std::free(data);
  }
};

// A model made of real tensors that live on the host or on a device: what the cache holds.
class TensorModel final : public CachedModel {
 public:
  TensorModel(const Device& device, std::string name, int tensors, int64_t bytes_each)
      : device_(device), name_(std::move(name)) {
    for (int i = 0; i < tensors; ++i)
      weights_.push_back(at::full({bytes_each / 4}, float(i), at::kFloat));
  }
  std::string describe() const override { return name_; }
  int64_t hostBytes() const override { return bytes(false); }
  int64_t deviceBytes() const override { return bytes(true); }
  void offload() override {
    for (std::size_t i = 0; i < weights_.size(); ++i) {
      if (fail_offload_ && i == weights_.size() / 2)  // half has left when the host runs out
        throw Error(ErrorKind::OutOfMemory, "host memory ran out");
      weights_[i] = device_.download(weights_[i]);
    }
  }
  void failOffload() { fail_offload_ = true; }
  void onload() {
    for (auto& w : weights_) w = device_.upload(w);
  }
  // Every weight still holds the value it was made with, wherever it is.
  bool intact() const {
    for (std::size_t i = 0; i < weights_.size(); ++i)
      if (!weights_[i].eq(float(i)).all().item<bool>()) return false;
    return true;
  }

 private:
  int64_t bytes(bool on_device) const {
    int64_t total = 0;
    if (!device_.isAccelerator()) on_device = !on_device;  // the CPU holds host memory
    for (const auto& w : weights_)
      if (device_.holds(w) == on_device) total += w.nbytes();
    return total;
  }
  const Device& device_;
  std::string name_;
  std::vector<at::Tensor> weights_;
  bool fail_offload_ = false;
};

std::shared_ptr<TensorModel> onDevice(const Device& d, const std::string& name, int64_t mib) {
  auto m = std::make_shared<TensorModel>(d, name, 4, mib * kMiB / 4);
  m->onload();
  return m;
}

}  // namespace

class MemoryTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void byteCountsParseAndPrint_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("bytes");
    QTest::newRow("plain") << "4096" << qint64(4096);
    QTest::newRow("G") << "8G" << qint64(8) * 1024 * 1024 * 1024;
    QTest::newRow("MiB space") << "512 MiB" << qint64(512) * kMiB;
    QTest::newRow("GB decimal") << "1.5GB" << qint64(1500000000);
    QTest::newRow("lower k") << "64k" << qint64(65536);
    QTest::newRow("junk") << "lots" << qint64(-1);
    QTest::newRow("bad unit") << "3 parsecs" << qint64(-1);
    QTest::newRow("negative") << "-1G" << qint64(-1);
  }
  void byteCountsParseAndPrint() {
    QFETCH(QString, text);
    QFETCH(qint64, bytes);
    const auto parsed = parseBytes(text.toStdString());
    QCOMPARE(parsed.has_value() ? qint64(*parsed) : qint64(-1), bytes);
    QCOMPARE(formatBytes(1536 * kMiB), std::string("1.50 GiB"));
    QCOMPARE(formatBytes(512), std::string("512 B"));
    // Progress amounts: counts as they are, bytes in the total's decimal unit.
    QCOMPARE(formatProgressAmount(12, 30, "steps"), std::string("12/30 steps"));
    QCOMPARE(formatProgressAmount(1'234'000'000, 2'132'000'000, "bytes"),
             std::string("1.2/2.1 GB"));
    QCOMPARE(formatProgressAmount(5'000'000, 14'500'000, "bytes"), std::string("5/14 MB"));
    QCOMPARE(formatProgressAmount(0, 999, "bytes"), std::string("0/999 B"));
    QCOMPARE(formatProgressAmount(3, 4, ""), std::string("3/4"));
  }

  void deviceSpecsAreParsedOrRefusedClearly() {
    QCOMPARE(makeDevice("cpu")->kind(), DeviceKind::Cpu);
    const auto sim = makeDevice("sim:64MiB");
    QCOMPARE(sim->kind(), DeviceKind::Simulated);
    QCOMPARE(sim->memory().total_bytes, 64 * kMiB);
    for (const char* bad : {"sim:", "sim:zero", "gpu", "sim:0"}) {
      try {
        makeDevice(bad);
        QFAIL(bad);
      } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
        QVERIFY2(std::string(e.what()).find("sim:") != std::string::npos, e.what());
      }
    }
  }

  // A GPU is refused clearly where this build's libtorch has none (test_gpu covers builds
  // that have one).
  void gpuDevicesAreRefusedClearlyWithoutGpuSupport() {
    if (gpuBackend()) QSKIP("this build has GPU support; test_gpu checks its devices");
    for (const char* spec : {"cuda", "cuda:0", "cuda:7"}) {
      try {
        makeDevice(spec);
        QFAIL(spec);
      } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
        QVERIFY2(std::string(e.what()).find("no GPU support") != std::string::npos, e.what());
      }
    }
    QVERIFY(describeGpus().empty());
  }

  // DeviceScope names where computation runs, and nested scopes restore it.
  void deviceScopeNamesTheComputeDevice() {
    SimulatedDevice sim(64 * kMiB);
    CpuDevice cpu;
    QVERIFY(computeDevice().is_cpu());
    QVERIFY(sim.computeDevice().is_cpu());  // host memory charged to its pool
    {
      DeviceScope outer(sim);
      QCOMPARE(computeDevice(), sim.computeDevice());
      {
        DeviceScope inner(cpu);
        QCOMPARE(computeDevice(), cpu.computeDevice());
        // Allocations in the inner scope are ordinary host memory again.
        QVERIFY(cpu.holds(at::ones({16})));
      }
      QVERIFY(sim.holds(at::ones({16})));
    }
    QVERIFY(computeDevice().is_cpu());
  }

  // A pool's blocks can come from another allocator (a GPU's pinned host memory): taken
  // from it, counted, and given back to it as soon as they are free (it may still be
  // copying from them), so nothing of it stays cached.
  void poolBlocksComeFromTheAllocatorGiven() {
    BlockSource source;
    auto pool = std::make_shared<MemoryPool>("pinned host memory", 0, &source);
    at::Tensor a;
    {
      PoolScope scope(pool);
      a = at::empty({256 * 1024}, at::kFloat);  // 1 MiB, one block
    }
    a.copy_(at::arange(256 * 1024, at::kFloat));  // outside the scope: ordinary memory
    QCOMPARE(BlockSource::live.load(), 1);
    QVERIFY(pool->owns(a.storage()));
    QCOMPARE(a[12345].item<float>(), 12345.0f);
    QCOMPARE(pool->stats().allocated_bytes, kMiB);
    a.reset();
    QCOMPARE(BlockSource::live.load(), 0);
    QCOMPARE(pool->stats().reserved_bytes, int64_t{0});
    pool->setCapacity(kMiB / 2);  // a limit still holds
    {
      PoolScope scope(pool);
      QVERIFY_THROWS_EXCEPTION(c10::OutOfMemoryError, at::zeros({256 * 1024}, at::kFloat));
    }
    QCOMPARE(BlockSource::live.load(), 0);
    QCOMPARE(pool->emptyCache(), int64_t{0});
  }

  void simulatedDeviceCountsWhatTensorsHold() {
    SimulatedDevice dev(64 * kMiB);
    const at::Tensor host = at::ones({1024, 1024}, at::kFloat);  // 4 MiB
    QVERIFY(!dev.holds(host));
    {
      const at::Tensor on = dev.upload(host);
      QVERIFY(dev.holds(on));
      QVERIFY(CpuDevice().holds(host));
      QVERIFY(!CpuDevice().holds(on));
      QCOMPARE(dev.memory().allocated_bytes, 4 * kMiB);
      QVERIFY(on.equal(host));
      // Work done in the device's scope allocates there.
      at::Tensor sum;
      {
        DeviceScope scope(dev);
        sum = on + on;
      }
      QVERIFY(dev.holds(sum));
      QCOMPARE(dev.memory().allocated_bytes, 8 * kMiB);
      const at::Tensor back = dev.download(sum);
      QVERIFY(!dev.holds(back));
      QCOMPARE(back.sum().item<double>(), 2.0 * 1024 * 1024);
    }
    const DeviceMemory after = dev.memory();
    QCOMPARE(after.allocated_bytes, int64_t{0});
    QCOMPARE(after.peak_allocated_bytes, 8 * kMiB);
    // The caching allocator keeps the blocks: reserved, yet free for new work.
    QCOMPARE(after.reserved_bytes, 8 * kMiB);
    QCOMPARE(after.free_bytes, 64 * kMiB);
    QCOMPARE(dev.emptyCache(), 8 * kMiB);
    QCOMPARE(dev.memory().reserved_bytes, int64_t{0});
  }

  // Uploads keep values and dtype whatever the source's layout.
  void uploadsCopyStridedAndReducedPrecisionSources() {
    SimulatedDevice dev(64 * kMiB);
    const at::Tensor base = at::arange(12 * 34, at::kFloat).reshape({12, 34});
    for (const at::Tensor& src : {base.t(), base.to(at::kBFloat16), base.narrow(1, 3, 5)}) {
      const at::Tensor on = dev.upload(src);
      QVERIFY(dev.holds(on));
      QVERIFY(on.is_contiguous());
      QCOMPARE(on.scalar_type(), src.scalar_type());
      QVERIFY(on.equal(src));
      const at::Tensor pinned = dev.pin(src);
      QVERIFY(dev.isPinned(pinned));
      QVERIFY(pinned.equal(src));
    }
  }

  // The copy worker runs jobs in order, hands back results and errors, and finishes what
  // was queued before it goes away.
  void copyStreamRunsJobsInOrder() {
    std::vector<int> order;
    std::future<int> last;
    std::future<int> failed;
    {
      CopyStream stream;
      for (int i = 0; i < 20; ++i)
        last = stream.submit([&order, i] {
          order.push_back(i);
          return i * 2;
        });
      failed = stream.submit([]() -> int { throw Error(ErrorKind::OutOfMemory, "no room"); });
    }
    QCOMPARE(static_cast<int>(order.size()), 20);
    for (int i = 0; i < 20; ++i) QCOMPARE(order[static_cast<std::size_t>(i)], i);
    QCOMPARE(last.get(), 38);
    QVERIFY_THROWS_EXCEPTION(Error, failed.get());
  }

  void exhaustingTheDeviceThrowsTheDevicesOutOfMemoryError() {
    SimulatedDevice dev(10 * kMiB);
    const at::Tensor a = dev.upload(at::zeros({6 * kMiB / 4}));
    bool threw = false;
    try {
      (void)dev.upload(at::zeros({6 * kMiB / 4}));
    } catch (const c10::OutOfMemoryError& e) {
      threw = true;
      QVERIFY2(std::string(e.what()).find("out of memory") != std::string::npos, e.what());
    }
    QVERIFY(threw);
    QCOMPARE(dev.pool().stats().failed_allocations, int64_t{1});
    QCOMPARE(dev.memory().allocated_bytes, 6 * kMiB);
  }

  // Memory the allocator caches is not "used": a differently sized allocation that needs
  // it succeeds, because the allocator gives its cache back before failing.
  void cachedBlocksDoNotCauseFalseOutOfMemory() {
    SimulatedDevice dev(10 * kMiB);
    (void)dev.upload(at::zeros({6 * kMiB / 4}));  // freed at once, kept in the cache
    QCOMPARE(dev.memory().reserved_bytes, 6 * kMiB);
    const at::Tensor b = dev.upload(at::zeros({7 * kMiB / 4}));
    QCOMPARE(dev.memory().allocated_bytes, 7 * kMiB);
    QCOMPARE(dev.memory().reserved_bytes, 7 * kMiB);
  }

  void makeRoomOffloadsLeastRecentlyUsedUnlockedModels() {
    SimulatedDevice dev(100 * kMiB);
    ModelCache cache(dev, {});
    auto a = cache.acquire("a", [&] { return onDevice(dev, "model a", 40); });
    auto b = cache.acquire("b", [&] { return onDevice(dev, "model b", 40); });
    QCOMPARE(cache.availableDeviceBytes(), 20 * kMiB);
    a = {};  // a is no longer in use; b still is
    b = {};
    auto b_again = cache.acquire("b", [] { return std::shared_ptr<CachedModel>(); });  // a hit
    QCOMPARE(cache.counters().hits, int64_t{1});
    const MakeRoomResult r = cache.makeRoom(30 * kMiB, 10 * kMiB);
    QCOMPARE(r.offloaded, std::vector<std::string>{"model a"});
    QCOMPARE(r.freed_bytes, 40 * kMiB);
    QCOMPARE(r.available_bytes, 60 * kMiB);
    QCOMPARE(dev.memory().allocated_bytes, 40 * kMiB);
    // Offloaded, not dropped: a is still cached, in host memory, with its values.
    const auto entries = cache.entries();
    QCOMPARE(entries.size(), std::size_t{2});
    QCOMPARE(entries[1].key, std::string("a"));
    QCOMPARE(entries[1].device_bytes, int64_t{0});
    QCOMPARE(entries[1].host_bytes, 40 * kMiB);
    QVERIFY(static_cast<TensorModel&>(b_again.model()).intact());
  }

  // With two unlocked models, makeRoom stops as soon as enough is free: the least recently
  // used one leaves, the other stays.
  void makeRoomStopsOnceEnoughIsFree() {
    SimulatedDevice dev(100 * kMiB);
    ModelCache cache(dev, {});
    (void)cache.acquire("a", [&] { return onDevice(dev, "model a", 30); });
    (void)cache.acquire("b", [&] { return onDevice(dev, "model b", 30); });
    const MakeRoomResult r = cache.makeRoom(50 * kMiB, 10 * kMiB);
    QCOMPARE(r.offloaded, std::vector<std::string>{"model a"});
    QCOMPARE(r.available_bytes, 70 * kMiB);
    QCOMPARE(cache.deviceBytes(), 30 * kMiB);  // b is still on the device
    QCOMPARE(cache.counters().offloads, int64_t{1});
  }

  // A model that fails to leave the device is named in the warnings, keeps counting what
  // stayed, and the sweep goes on to the next model.
  void makeRoomGoesOnPastAModelThatFailsToMove() {
    SimulatedDevice dev(100 * kMiB);
    ModelCache cache(dev, {});
    const auto stuck = onDevice(dev, "model a", 30);
    stuck->failOffload();
    (void)cache.acquire("a", [&] { return stuck; });  // least recently used: tried first
    (void)cache.acquire("b", [&] { return onDevice(dev, "model b", 30); });
    const MakeRoomResult r = cache.makeRoom(60 * kMiB);
    QCOMPARE(r.offloaded, std::vector<std::string>{"model b"});
    QCOMPARE(r.warnings.size(), std::size_t{1});
    QVERIFY2(r.warnings[0].find("could not move model a") != std::string::npos,
             r.warnings[0].c_str());
    QVERIFY2(r.warnings[0].find("host memory ran out") != std::string::npos, r.warnings[0].c_str());
    QCOMPARE(stuck->deviceBytes(), 15 * kMiB);  // half of it left before the failure
    QCOMPARE(r.available_bytes, 85 * kMiB);
    QCOMPARE(cache.deviceBytes(), 15 * kMiB);
  }

  void lockedModelsAreNeverTouchedAndShortfallsSayWhy() {
    SimulatedDevice dev(100 * kMiB);
    ModelCache cache(dev, {});
    auto a = cache.acquire("a", [&] { return onDevice(dev, "model a", 60); });
    try {
      cache.makeRoom(50 * kMiB);
      QFAIL("no error");
    } catch (const Error& e) {
      QCOMPARE(e.kind(), ErrorKind::OutOfMemory);
      const std::string m = e.what();
      QVERIFY2(m.find("model a") != std::string::npos, e.what());
      QVERIFY2(m.find("50.0 MiB") != std::string::npos, e.what());
      QVERIFY2(m.find("offload mode") != std::string::npos, e.what());
    }
    QCOMPARE(a.model().deviceBytes(), 60 * kMiB);
    QCOMPARE(cache.counters().offloads, int64_t{0});
  }

  void deviceBudgetCapsWhatIsAvailable() {
    SimulatedDevice dev(100 * kMiB);
    ModelCache cache(dev, {.device_bytes = 50 * kMiB});
    auto a = cache.acquire("a", [&] { return onDevice(dev, "model a", 20); });
    QCOMPARE(cache.availableDeviceBytes(), 30 * kMiB);
    QVERIFY_THROWS_EXCEPTION(Error, cache.makeRoom(40 * kMiB));
    a = {};
    QCOMPARE(cache.makeRoom(40 * kMiB).freed_bytes, 20 * kMiB);
  }

  void zeroByteRequestWarns() {
    SimulatedDevice dev(100 * kMiB);
    ModelCache cache(dev, {});
    {
      auto a = cache.acquire("a", [&] { return onDevice(dev, "model a", 20); });
    }
    const MakeRoomResult r = cache.makeRoom(0, 0);
    QCOMPARE(r.warnings.size(), std::size_t{1});
    QVERIFY(r.warnings[0].find("estimate") != std::string::npos);
    QCOMPARE(r.freed_bytes, int64_t{0});
    QCOMPARE(cache.deviceBytes(), 20 * kMiB);  // nothing offloaded
  }

  void failedLoadReleasesEverythingAndCachesNothing() {
    SimulatedDevice dev(100 * kMiB);
    ModelCache cache(dev, {});
    for (int attempt = 0; attempt < 3; ++attempt) {
      try {
        (void)cache.acquire("broken", [&]() -> std::shared_ptr<CachedModel> {
          auto half = onDevice(dev, "half-loaded", 30);
          throw Error(ErrorKind::CorruptFile, "tensor 7 is truncated");
        });
        QFAIL("no error");
      } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::CorruptFile);
      }
      QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
      QVERIFY(cache.entries().empty());
    }
    QCOMPARE(cache.counters().failed_loads, int64_t{3});
    // Running out of device memory mid-load is the same.
    QVERIFY_THROWS_EXCEPTION(c10::OutOfMemoryError,
                             cache.acquire("huge", [&] { return onDevice(dev, "huge", 200); }));
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
  }

  void unloadingReturnsEveryByteOverManyCycles() {
    SimulatedDevice dev(100 * kMiB);
    ModelCache cache(dev, {});
    const int64_t baseline = dev.memory().allocated_bytes;
    for (int i = 0; i < 50; ++i) {
      {
        auto a = cache.acquire("m" + std::to_string(i % 3), [&] { return onDevice(dev, "m", 10); });
      }
      QVERIFY(cache.unload("m" + std::to_string(i % 3)));
      QCOMPARE(dev.memory().allocated_bytes, baseline);
    }
    auto held = cache.acquire("held", [&] { return onDevice(dev, "held", 10); });
    QVERIFY_THROWS_EXCEPTION(Error, cache.unload("held"));
    QVERIFY(!cache.unload("never loaded"));
    held = {};
    cache.clear();
    QCOMPARE(dev.memory().allocated_bytes, baseline);
    QCOMPARE(cache.hostBytes() + cache.deviceBytes(), int64_t{0});
  }

  void hostBudgetEvictsLeastRecentlyUsed() {
    CpuDevice cpu;
    ModelCache cache(cpu, {.host_bytes = 25 * kMiB});
    auto make = [&](const char* name) {
      return [&cpu, name] { return std::make_shared<TensorModel>(cpu, name, 2, 5 * kMiB); };
    };
    { auto a = cache.acquire("a", make("a")); }
    { auto b = cache.acquire("b", make("b")); }
    QCOMPARE(cache.entries().size(), std::size_t{2});
    { auto c = cache.acquire("c", make("c")); }  // 30 MiB > 25: a (oldest) goes
    const auto e = cache.entries();
    QCOMPARE(e.size(), std::size_t{2});
    QCOMPARE(e[0].key, std::string("c"));
    QCOMPARE(e[1].key, std::string("b"));
    QCOMPARE(cache.counters().evictions, int64_t{1});
  }

  // Two jobs asking for one model load it once; a slow load of one model never blocks
  // another model's load.
  void loadsRunOutsideTheCacheLock() {
    CpuDevice cpu;
    ModelCache cache(cpu, {});
    std::promise<void> release_slow;
    std::shared_future<void> released = release_slow.get_future().share();
    std::atomic<int> slow_loads{0};
    auto slow = [&] {
      ++slow_loads;
      released.wait();
      return std::make_shared<TensorModel>(cpu, "slow", 1, 1024);
    };
    auto first = std::async(std::launch::async,
                            [&] { return cache.acquire("slow", slow).model().describe(); });
    while (slow_loads.load() == 0) std::this_thread::yield();
    auto second = std::async(std::launch::async,
                             [&] { return cache.acquire("slow", slow).model().describe(); });
    // Meanwhile another model loads and is used at once.
    {
      auto fast = cache.acquire(
          "fast", [&] { return std::make_shared<TensorModel>(cpu, "fast", 1, 1024); });
      QCOMPARE(fast.model().describe(), std::string("fast"));
    }
    QCOMPARE(second.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
    release_slow.set_value();
    QCOMPARE(first.get(), std::string("slow"));
    QCOMPARE(second.get(), std::string("slow"));
    QCOMPARE(slow_loads.load(), 1);
    QCOMPARE(cache.counters().loads, int64_t{2});
  }
};

QTEST_GUILESS_MAIN(MemoryTest)
#include "test_memory.moc"
