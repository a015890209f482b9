// UNet step time through Kiln's sampling loop (CFG batching, schedule, Euler update,
// finiteness checks, progress callback) against the bare UNet forward on the same
// inputs, measured in the same run so the ratio shows the engine's overhead.
//
// Usage: bench_unet_step [--model PATH] [--steps N] [--size WxH] [--dtype fp32|bf16]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "kiln/error.h"
#include "pipelines/sd/sd_pipeline.h"

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

using kiln::bench::median;

}  // namespace

int main(int argc, char** argv) {
  const kiln::bench::UNetBenchArgs args = kiln::bench::parseUNetBenchArgs(argc, argv);
  const std::string& model = args.model;
  const int steps = args.steps, width = args.width, height = args.height;
  const at::ScalarType dtype = args.dtype;
  try {
    kiln::bench::UNetBench bench(args);
    kiln::pipelines::SdPipeline& pipe = bench.pipe;
    const auto& cond = bench.cond;
    const auto& noise = bench.noise;
    const auto& sizes = bench.sizes;
    const kiln::models::UNetInputs& in = bench.in;
    const int64_t f = pipe.spec().vae.downscale();

    // Baseline: the bare forward on the CFG batch the loop would build.
    pipe.unet().forward(in);  // warm-up
    std::vector<double> bare;
    for (int i = 0; i < steps; ++i) {
      const auto t0 = Clock::now();
      pipe.unet().forward(in);
      bare.push_back(msSince(t0));
    }

    // The sampling loop, timed per step from the callback.
    pipe.sample(cond, noise, 2, 7.0, sizes);  // warm-up
    std::vector<double> loop;
    auto last = Clock::now();
    pipe.sample(cond, noise, steps, 7.0, sizes, [&](const kiln::sampling::StepInfo&) {
      loop.push_back(msSince(last));
      last = Clock::now();
    });
    const double b = median(bare), l = median(loop);
    std::printf("model: %s (%s, %s)\n", model.c_str(), kiln::models::familyName(pipe.spec().family),
                dtype == at::kFloat ? "fp32" : "bf16");
    std::printf("latent %dx%d, %d steps, %d threads\n", width / static_cast<int>(f),
                height / static_cast<int>(f), steps, at::get_num_threads());
    std::printf("bare UNet forward (CFG batch 2): median %.2f ms\n", b);
    std::printf("sampling loop step:              median %.2f ms\n", l);
    std::printf("loop / bare ratio: %.3f (engine overhead %.2f ms per step)\n", l / b, l - b);
    return 0;
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "bench_unet_step: %s\n", e.what());
    return 1;
  }
}
