#include "kiln/render.h"

#include "core/data_paths.h"
#include "jobs/job_runner.h"
#include "kiln/error.h"

namespace kiln {

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
         (jobs::hasImage(p.init_image) ? ", Denoising strength: " + formatNumber(p.denoise)
                                       : std::string()) +
         (jobs::hasImage(p.mask) && p.mask_feather > 0
              ? ", Mask blur: " + std::to_string(p.mask_feather)
              : std::string());
}

// One job run on the caller's thread, with no cache and no interruption.
RenderResult render(const RenderParams& params, const ProgressFn& progress) {
  try {
    Job job;
    job.params = params;
    std::vector<Stage> stages;
    jobs::RunEnvironment env;
    env.emit = [&](const Event& e) {
      if (e.type == EventType::StagePlanned) stages = e.stages;
      if (!progress || e.stage < 0) return;
      if (e.type == EventType::StageStarted || e.type == EventType::Progress) {
        const Stage& s = stages.at(static_cast<std::size_t>(e.stage));
        progress({s.name, e.type == EventType::StageStarted ? 0 : e.done, e.total, e.unit});
      }
    };
    jobs::JobResult r = jobs::runJob(job, env);
    RenderResult result;
    result.image = std::move(r.images.at(0));
    result.frames = std::move(r.frames);
    result.fps = r.fps;
    result.notices = std::move(r.notices);
    result.model_family = std::move(r.model_family);
    return result;
  } catch (...) {
    jobs::rethrowAsError();
  }
}

}  // namespace kiln
