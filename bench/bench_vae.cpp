// VAE decode, whole picture against tiles: time and peak working memory at 1024 and 2048
// pixels, each relative to the full decode of the same size in the same run. The peak is
// what the counting allocator of a simulated device saw, so it is exact and does not
// depend on what else the machine is doing; the estimate the planner uses is printed
// beside it.
//
// Usage: bench_vae [--model PATH] [--dtype fp32|bf16] [--sizes 1024,2048] [--tiles 512,256]
//                  [--repeats N]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "kiln/error.h"
#include "memory/device.h"
#include "models/vae/vae_tiling.h"
#include "pipelines/sd/sd_pipeline.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string model =
      std::string(KILN_SHARED_DIR) + "/conformance/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors";
  at::ScalarType dtype = at::kFloat;
  std::vector<int64_t> sizes{1024, 2048};
  std::vector<int64_t> tiles{512, 256};
  int repeats = 3;
};

std::vector<int64_t> parseList(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(std::stoll(part));
  return out;
}

Args parseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--model")
      a.model = v;
    else if (k == "--dtype")
      a.dtype = v == "bf16" ? at::kBFloat16 : at::kFloat;
    else if (k == "--sizes")
      a.sizes = parseList(v);
    else if (k == "--tiles")
      a.tiles = parseList(v);
    else if (k == "--repeats")
      a.repeats = std::max(1, std::stoi(v));
  }
  return a;
}

struct Measure {
  double ms = 0;
  int64_t peak = 0;
};

// Median time of `repeats` runs of `fn` and the peak bytes of the first, charged to a
// simulated device large enough never to refuse.
template <typename Fn>
Measure measure(int repeats, Fn&& fn) {
  Measure m;
  kiln::memory::SimulatedDevice dev(int64_t{256} << 30);
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    kiln::memory::DeviceScope scope(dev);
    const auto t0 = Clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (i == 0) m.peak = dev.memory().peak_allocated_bytes;
  }
  m.ms = kiln::bench::median(ms);
  return m;
}

double mib(int64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parseArgs(argc, argv);
  try {
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    at::NoGradGuard no_grad;
    const kiln::pipelines::SdPipeline pipe(kiln::models::openCheckpoint(args.model), args.dtype);
    const auto& vae = pipe.vae();
    const auto& config = vae.config();
    const int64_t f = config.downscale();
    std::printf(
        "VAE decode of %s, %s, median of %d runs; peak = working memory the allocator saw\n",
        args.model.c_str(), args.dtype == at::kBFloat16 ? "bf16" : "fp32", args.repeats);
    for (const int64_t size : args.sizes) {
      const int64_t lat = size / f;
      const at::Tensor z =
          kiln::pipelines::seededNoise(7, {1, config.embed_dim, lat, lat}).to(args.dtype);
      const Measure full = measure(args.repeats, [&] { (void)vae.decode(z).to(at::kFloat); });
      const int64_t full_estimate = kiln::models::decodeWorkingBytes(config, lat, lat, args.dtype);
      std::printf("%lldx%lld\n", static_cast<long long>(size), static_cast<long long>(size));
      std::printf("  %-26s %9.0f ms  x1.00   peak %8.1f MiB  x1.000  (estimate %.1f MiB)\n", "full",
                  full.ms, mib(full.peak), mib(full_estimate));
      for (const int64_t tile_px : args.tiles) {
        if (tile_px >= size) continue;
        const kiln::tiling::Tiles tiles{tile_px / f, 64 / f};
        const Measure tiled =
            measure(args.repeats, [&] { (void)kiln::models::decodeTiled(vae, z, tiles); });
        const int64_t estimate =
            kiln::models::tiledDecodeWorkingBytes(config, lat, lat, tiles, args.dtype);
        const std::string label = std::to_string(kiln::tiling::tileCount(lat, lat, tiles)) +
                                  " tiles of " + std::to_string(tile_px) + " px";
        std::printf("  %-26s %9.0f ms  x%.2f   peak %8.1f MiB  x%.3f  (estimate %.1f MiB)\n",
                    label.c_str(), tiled.ms, tiled.ms / full.ms, mib(tiled.peak),
                    static_cast<double>(tiled.peak) / static_cast<double>(full.peak),
                    mib(estimate));
      }
    }
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "bench_vae: %s\n", e.what());
    return 1;
  }
  return 0;
}
