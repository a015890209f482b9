// The render settings' helpers the nodes and the jobs share: defaults, names, the starter
// model's place and the A1111 parameters text.
#include "core/data_paths.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "kiln/units.h"
#include "nodes/run_environment.h"
#include "pipelines/registry.h"

namespace kiln {

using nodes::hasImage;

RenderParams defaultRenderParams() {
  RenderParams p;
  p.prompt.text = "a large orange star";
  p.sampling.seed = 1;
  p.sampling.steps = 20;
  p.sampling.cfg_scale = 5.0;
  return p;
}

RenderParams defaultRenderParams(const std::string& model_path) {
  RenderParams p = defaultRenderParams();
  p.model.path = model_path;
  if (model_path.empty()) return p;
  try {
    const pipelines::Family& family = pipelines::familyOf(model_path);
    if (const auto d = family.inspect(model_path).sampling) {
      p.sampling.steps = static_cast<int>(d->steps);
      p.sampling.cfg_scale = d->cfg;
      p.sampling.sampler = d->sampler;
      p.sampling.scheduler = d->scheduler;
    }
  } catch (const Error&) {
    // the render says what is wrong with the model
  }
  return p;
}

std::string modelFamily(const std::string& model_path) {
  return pipelines::familyOf(model_path).name;
}

const char* vaeTilingName(VaeTiling mode) noexcept {
  switch (mode) {
    case VaeTiling::Auto:
      return "auto";
    case VaeTiling::Always:
      return "always";
    case VaeTiling::Never:
      return "never";
    case VaeTiling::Invalid:
      break;
  }
  return "invalid";
}

VaeTiling parseVaeTiling(const std::string& text) noexcept {
  for (VaeTiling m : {VaeTiling::Auto, VaeTiling::Always, VaeTiling::Never})
    if (text == vaeTilingName(m)) return m;
  return VaeTiling::Invalid;
}

std::string starterModelPath() {
  return core::findDataFile("models/kiln-starter.safetensors");
}

std::string formatA1111Parameters(const RenderParams& p, const std::string& sampler,
                                  const std::string& model_name) {
  return p.prompt.text + "\nNegative prompt: " + p.prompt.negative +
         "\nSteps: " + std::to_string(p.sampling.steps) + ", Sampler: " + sampler +
         ", CFG scale: " + formatNumber(p.sampling.cfg_scale) +
         ", Seed: " + std::to_string(p.sampling.seed) + ", Size: " + std::to_string(p.size.width) +
         "x" + std::to_string(p.size.height) + ", Model: " + model_name +
         (hasImage(p.init.image) ? ", Denoising strength: " + formatNumber(p.init.denoise)
                                 : std::string()) +
         (hasImage(p.init.mask) && p.init.mask_feather > 0
              ? ", Mask blur: " + std::to_string(p.init.mask_feather)
              : std::string());
}

}  // namespace kiln
