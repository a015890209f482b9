// Offload modes on a device (the simulated accelerator unless --device names a GPU): time
// per UNet step relative to resident weights, and the step's peak device bytes relative
// to the UNet's weight bytes, all measured in the same run.
//
// Usage: bench_offload [--model PATH] [--steps N] [--size WxH] [--dtype fp32|bf16|fp16]
//                      [--device sim:64G|cuda:N]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"
#include "kiln/error.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "memory/offload.h"
#include "pipelines/sd/sd_pipeline.h"

namespace {

using Clock = std::chrono::steady_clock;
using kiln::memory::OffloadMode;

using kiln::bench::median;

struct Row {
  const char* name;
  OffloadMode mode;
  int blocks;
  bool streams;
  double budget_fraction;  // balanced: resident share of the weights
};

}  // namespace

int main(int argc, char** argv) {
  const kiln::bench::UNetBenchArgs args = kiln::bench::parseUNetBenchArgs(argc, argv);
  try {
    kiln::bench::UNetBench bench(args);

    const std::unique_ptr<kiln::memory::Device> device = kiln::memory::makeDevice(args.device);
    kiln::memory::Device& dev = *device;
    // The step's inputs where the UNet computes; the weights move as each row places them.
    const at::Device compute = dev.computeDevice();
    kiln::models::UNetInputs in = bench.in;
    for (at::Tensor* t : {&in.latent, &in.timesteps, &in.context, &in.y})
      if (t->defined()) *t = t->to(compute);
    const kiln::memory::ComponentInfo unet{
        "unet", "UNetModel", kiln::memory::ComponentRole::Denoiser, &bench.pipe.unet().params()};
    const std::vector<Row> rows{
        {"none (resident)", OffloadMode::None, 1, false, 0},
        {"model", OffloadMode::Model, 1, false, 0},
        {"group-block 1", OffloadMode::GroupBlock, 1, false, 0},
        {"group-block 1 + streams", OffloadMode::GroupBlock, 1, true, 0},
        {"group-block 4 + streams", OffloadMode::GroupBlock, 4, true, 0},
        {"group-leaf", OffloadMode::GroupLeaf, 1, false, 0},
        {"balanced 50%", OffloadMode::Balanced, 1, false, 0.5},
        {"balanced 50% + streams", OffloadMode::Balanced, 1, true, 0.5},
    };
    std::printf("UNet of %s, %dx%d, %s, %d steps, on %s\n", args.model.c_str(), args.width,
                args.height,
                args.dtype == at::kBFloat16 ? "bf16"
                : args.dtype == at::kHalf   ? "fp16"
                                            : "fp32",
                args.steps, dev.name().c_str());
    // Rows take turns, a few steps each round, so that a slow spell of the machine lands on
    // every row alike instead of on whichever row ran during it.
    constexpr int kRounds = 4;
    const int per_round = std::max(1, args.steps / kRounds);
    std::vector<std::vector<double>> ms(rows.size());
    std::vector<int64_t> peaks(rows.size(), 0), resident(rows.size(), 0);
    int64_t weight_bytes = 0;
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const Row& row = rows[r];
        kiln::memory::ComponentPlacement place(dev, unet);
        weight_bytes = place.weightBytes();
        kiln::memory::PlacementDecision d;
        d.mode = row.mode;
        d.blocks_per_group = row.blocks;
        d.streams = row.streams;
        place.apply(d,
                    static_cast<int64_t>(row.budget_fraction * static_cast<double>(weight_bytes)));
        const auto run = [&] {
          kiln::memory::DeviceScope scope(dev);
          // Reading one number back waits for a GPU's queued work, so the time is the step's.
          (void)bench.pipe.unet().forward(in).sum().item<double>();
        };
        run();  // warm-up (model mode onloads here)
        dev.emptyCache();
        dev.resetPeak();
        resident[r] = dev.memory().allocated_bytes;
        for (int i = 0; i < per_round; ++i) {
          const auto t0 = Clock::now();
          run();
          ms[r].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        peaks[r] = std::max(peaks[r], dev.memory().peak_allocated_bytes);
        place.teardown();
      }
    }
    const double resident_ms = median(ms[0]);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double step = median(ms[r]);
      std::printf(
          "  %-26s %8.1f ms/step  x%.2f of resident   peak %10s = %.2f x weights (%s resident)\n",
          rows[r].name, step, step / resident_ms, kiln::formatBytes(peaks[r]).c_str(),
          static_cast<double>(peaks[r]) / static_cast<double>(weight_bytes),
          kiln::formatBytes(resident[r]).c_str());
    }
    std::printf("UNet weights: %s\n", kiln::formatBytes(weight_bytes).c_str());
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "bench_offload: %s\n", e.what());
    return 1;
  }
  return 0;
}
