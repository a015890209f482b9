// The render settings' helpers the nodes and the jobs share: defaults, names, the starter
// model's place and the A1111 parameters text.
#include "core/data_paths.h"
#include "kiln/render.h"
#include "kiln/units.h"
#include "nodes/run_environment.h"

namespace kiln {

using nodes::hasImage;

RenderParams defaultRenderParams() {
  RenderParams p;
  p.prompt = "a large orange star";
  p.seed = 1;
  p.steps = 20;
  p.cfg_scale = 5.0;
  return p;
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
  return p.prompt + "\nNegative prompt: " + p.negative_prompt +
         "\nSteps: " + std::to_string(p.steps) + ", Sampler: " + sampler +
         ", CFG scale: " + formatNumber(p.cfg_scale) + ", Seed: " + std::to_string(p.seed) +
         ", Size: " + std::to_string(p.width) + "x" + std::to_string(p.height) +
         ", Model: " + model_name +
         (hasImage(p.init_image) ? ", Denoising strength: " + formatNumber(p.denoise)
                                 : std::string()) +
         (hasImage(p.mask) && p.mask_feather > 0 ? ", Mask blur: " + std::to_string(p.mask_feather)
                                                 : std::string());
}

}  // namespace kiln
