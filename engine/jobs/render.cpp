#include "kiln/render.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <cstdio>
#include <thread>

#include "core/data_paths.h"
#include "kiln/error.h"
#include "nodes/sd_pipeline.h"

namespace kiln {
namespace {

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void validate(const RenderParams& p) {
  if (p.steps < 1 || p.steps > 1000)
    throw Error(ErrorKind::InvalidArgument,
                "steps must be between 1 and 1000, got " + std::to_string(p.steps));
  if (!std::isfinite(p.cfg_scale) || p.cfg_scale < 0 || p.cfg_scale > 100)
    throw Error(ErrorKind::InvalidArgument,
                "CFG scale must be between 0 and 100, got " + formatNumber(p.cfg_scale));
  const bool native = p.width == 0 && p.height == 0;
  if (!native && (p.width < 8 || p.height < 8 || p.width > 8192 || p.height > 8192))
    throw Error(ErrorKind::InvalidArgument,
                "width and height must be between 8 and 8192 pixels (or both 0 for the "
                "model's native size), got " +
                    std::to_string(p.width) + "x" + std::to_string(p.height));
  if (p.original_width < 0 || p.original_height < 0 || p.crop_top < 0 || p.crop_left < 0)
    throw Error(ErrorKind::InvalidArgument, "original size and crop offsets cannot be negative");
  if (p.dtype == ComputeDType::Invalid)
    throw Error(ErrorKind::InvalidArgument, "no compute dtype set");
}

// Converts [1, 3, H, W] in [-1, 1] to interleaved RGB in [0, 1].
Image toImage(const at::Tensor& decoded) {
  const at::Tensor rgb =
      ((decoded[0] / 2 + 0.5).clamp(0, 1)).permute({1, 2, 0}).contiguous().to(at::kFloat);
  Image image;
  image.height = static_cast<int>(rgb.size(0));
  image.width = static_cast<int>(rgb.size(1));
  image.channels = 3;
  const float* src = rgb.data_ptr<float>();
  image.pixels.assign(src, src + rgb.numel());
  return image;
}

}  // namespace

RenderParams defaultRenderParams() {
  RenderParams p;
  p.prompt = "a large orange star";
  p.seed = 1;
  p.steps = 20;
  p.cfg_scale = 5.0;
  return p;
}

std::string starterModelPath() { return core::findDataFile("models/kiln-starter.safetensors"); }

std::string formatA1111Parameters(const RenderParams& p, const std::string& sampler,
                                  const std::string& model_name) {
  return p.prompt + "\nNegative prompt: " + p.negative_prompt +
         "\nSteps: " + std::to_string(p.steps) + ", Sampler: " + sampler +
         ", CFG scale: " + formatNumber(p.cfg_scale) + ", Seed: " + std::to_string(p.seed) +
         ", Size: " + std::to_string(p.width) + "x" + std::to_string(p.height) +
         ", Model: " + model_name;
}

namespace {

RenderResult renderUnchecked(const RenderParams& in, const ProgressFn& progress) {
  validate(in);
  RenderParams p = in;
  RenderResult result;
  at::set_num_threads(p.threads > 0
                          ? p.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));

  const auto report = [&](const char* stage, int64_t done, int64_t total, const char* unit) {
    if (progress) progress({stage, done, total, unit});
  };
  if (p.model_path.empty()) p.model_path = starterModelPath();
  models::Checkpoint ck = models::openCheckpoint(p.model_path);
  if (p.width == 0 && p.height == 0) {
    p.width = ck.spec.native_width > 0 ? ck.spec.native_width : 512;
    p.height = ck.spec.native_height > 0 ? ck.spec.native_height : 512;
  }
  const int64_t f = ck.spec.vae.downscale();
  if (p.width % f != 0 || p.height % f != 0) {
    const int w = static_cast<int>(std::max<int64_t>(f, p.width / f * f));
    const int h = static_cast<int>(std::max<int64_t>(f, p.height / f * f));
    result.notices.push_back("size " + std::to_string(p.width) + "x" + std::to_string(p.height) +
                             " is not a multiple of " + std::to_string(f) + "; rendering " +
                             std::to_string(w) + "x" + std::to_string(h) + " instead");
    p.width = w;
    p.height = h;
  }
  result.model_family = models::familyName(ck.spec.family);
  const std::string model_name = ck.display_name;
  const at::ScalarType dtype = p.dtype == ComputeDType::BFloat16 ? at::kBFloat16 : at::kFloat;

  report("Loading model", 0, 1, "tensors");
  nodes::SdPipeline pipeline(std::move(ck), dtype, [&](std::size_t done, std::size_t total) {
    report("Loading model", static_cast<int64_t>(done), static_cast<int64_t>(total), "tensors");
  });

  report("Encoding prompt", 0, 1, "prompts");
  const nodes::Conditioning cond = pipeline.encodePrompts(p.prompt, p.negative_prompt);
  report("Encoding prompt", 1, 1, "prompts");

  const int64_t channels = pipeline.spec().unet.in_channels;
  const at::Tensor noise = nodes::seededNoise(p.seed, {1, channels, p.height / f, p.width / f});
  const nodes::SizeConditioning sizes{p.original_height > 0 ? p.original_height : p.height,
                                      p.original_width > 0 ? p.original_width : p.width,
                                      p.crop_top,
                                      p.crop_left,
                                      p.height,
                                      p.width};
  report("Denoising", 0, p.steps, "steps");
  const at::Tensor latent = pipeline.sample(
      cond, noise, p.steps, p.cfg_scale, sizes,
      [&](const sampling::StepInfo& s) { report("Denoising", s.step + 1, s.total, "steps"); });

  report("Decoding", 0, 1, "images");
  result.image = toImage(pipeline.decode(latent));
  report("Decoding", 1, 1, "images");
  result.image.text["parameters"] = formatA1111Parameters(p, "Euler", model_name);
  return result;
}

}  // namespace

RenderResult render(const RenderParams& params, const ProgressFn& progress) {
  try {
    return renderUnchecked(params, progress);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::OutOfMemory,
                "out of memory while rendering; try a smaller size or bf16 compute");
  } catch (const c10::Error& e) {
    // libtorch reports allocation failures as c10::Error; everything else is a bug.
    const std::string what = e.what_without_backtrace();
    if (what.find("alloc") != std::string::npos || what.find("out of memory") != std::string::npos)
      throw Error(ErrorKind::OutOfMemory, "out of memory while rendering: " + what);
    throw Error(ErrorKind::Internal, "internal error while rendering: " + what);
  }
}

}  // namespace kiln
