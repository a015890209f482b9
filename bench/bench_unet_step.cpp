// UNet step time through Kiln's sampling loop (CFG batching, schedule, Euler update,
// finiteness checks, progress callback) against the bare UNet forward on the same
// inputs, measured in the same run so the ratio shows the engine's overhead.
//
// Usage: bench_unet_step [--model PATH] [--steps N] [--size WxH] [--dtype fp32|bf16]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kiln/error.h"
#include "nodes/sd_pipeline.h"

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string model =
      std::string(KILN_SHARED_DIR) + "/conformance/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors";
  int steps = 10, width = 256, height = 256;
  at::ScalarType dtype = at::kFloat;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--model")
      model = v;
    else if (k == "--steps")
      steps = std::max(2, std::stoi(v));
    else if (k == "--size")
      std::sscanf(v.c_str(), "%dx%d", &width, &height);
    else if (k == "--dtype")
      dtype = v == "bf16" ? at::kBFloat16 : at::kFloat;
  }
  at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  try {
    kiln::nodes::SdPipeline pipe(kiln::models::openCheckpoint(model), dtype);
    const auto cond = pipe.encodePrompts("a lighthouse on a cliff at dawn", "blurry");
    const int64_t f = pipe.spec().vae.downscale();
    const at::Tensor noise =
        kiln::nodes::seededNoise(1, {1, pipe.spec().unet.in_channels, height / f, width / f});
    const auto sizes = kiln::nodes::SizeConditioning::forImage(height, width);

    // Baseline: the bare forward on the CFG batch the loop would build.
    kiln::models::UNetInputs in;
    in.latent = at::cat({noise, noise}, 0);
    in.timesteps = at::full({2}, 500.0f);
    in.context = cond.context;
    if (pipe.spec().unet.adm_in_channels > 0)
      in.y = pipe.unet().timeIdConditioning(cond.pooled, kiln::nodes::SdPipeline::timeIds(sizes));
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
