// What the UNet benchmarks share: their command line, the pipeline and the inputs of one
// CFG-batched UNet step, and the median of their timings.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "pipelines/sd/sd_pipeline.h"

namespace kiln::bench {

struct UNetBenchArgs {
  std::string model =
      std::string(KILN_SHARED_DIR) + "/conformance/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors";
  int steps = 10, width = 256, height = 256;
  at::ScalarType dtype = at::kFloat;
  std::string device = "sim:64G";  // bench_offload: where the UNet runs ("cuda:0", ...)
};

// [--model PATH] [--steps N] [--size WxH] [--dtype fp32|bf16|fp16] [--device D]
inline UNetBenchArgs parseUNetBenchArgs(int argc, char** argv) {
  UNetBenchArgs a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--model")
      a.model = v;
    else if (k == "--steps")
      a.steps = std::max(2, std::stoi(v));
    else if (k == "--size")
      std::sscanf(v.c_str(), "%dx%d", &a.width, &a.height);
    else if (k == "--dtype")
      a.dtype = v == "bf16" ? at::kBFloat16 : v == "fp16" ? at::kHalf : at::kFloat;
    else if (k == "--device")
      a.device = v;
  }
  return a;
}

// The model loaded, the prompts encoded, and the bare UNet inputs the sampling loop would
// build for one CFG step at timestep 500. Uses every core.
struct UNetBench {
  explicit UNetBench(const UNetBenchArgs& args)
      : pipe(kiln::models::openCheckpoint(args.model), args.dtype),
        cond(pipe.encodePrompts("a lighthouse on a cliff at dawn", "blurry")),
        sizes(kiln::pipelines::SizeConditioning::forImage(args.height, args.width)) {
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    const int64_t f = pipe.spec().vae.downscale();
    noise = kiln::pipelines::seededNoise(
        1, {1, pipe.spec().unet.in_channels, args.height / f, args.width / f});
    in.latent = at::cat({noise, noise}, 0);
    in.timesteps = at::full({2}, 500.0f);
    in.context = cond.context;
    if (pipe.spec().unet.adm_in_channels > 0)
      in.y =
          pipe.unet().timeIdConditioning(cond.pooled, kiln::pipelines::SdPipeline::timeIds(sizes));
  }

  kiln::pipelines::SdPipeline pipe;
  kiln::pipelines::Conditioning cond;
  kiln::pipelines::SizeConditioning sizes;
  at::Tensor noise;
  kiln::models::UNetInputs in;
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace kiln::bench
