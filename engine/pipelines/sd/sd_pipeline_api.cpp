// SdPipeline as a Pipeline: the stages of sd_pipeline.cpp with ComfyUI's sampler and
// scheduler names and one seed per latent.
#include "kiln/error.h"
#include "pipelines/sd/sd_pipeline.h"
#include "sampling/sampler_names.h"

namespace kiln::pipelines {

LatentFormat SdPipeline::latentFormat() const {
  const int64_t f = checkpoint_.spec.vae.downscale();
  return {unet_->config().in_channels, f, f, 0, checkpoint_.spec.vae.scaling_factor};
}

NativeSize SdPipeline::nativeSize() const {
  const models::SdModelSpec& spec = checkpoint_.spec;
  return {spec.native_width > 0 ? spec.native_width : 512,
          spec.native_height > 0 ? spec.native_height : 512, 1};
}

PromptEncoding SdPipeline::promptEncoding(const std::string& text,
                                          const PromptOptions& options) const {
  TextEncoding enc = encodeWeighted(text, options.clip_skip, options.embeddings);
  return {std::move(enc.context), std::move(enc.pooled), std::nullopt};
}

at::Tensor SdPipeline::sampleLatent(const SampleRequest& r, const SampleProgress& on_step) const {
  if (r.frames > 0)
    throw Error(ErrorKind::InvalidArgument,
                "an image model samples an image latent; a video latent needs a video model");
  // Classifier-free guidance's pair: the negative first, as the UNet's batch takes them.
  Conditioning cond{batchContexts(r.negative.context, r.positive.context), {}};
  if (r.positive.pooled.defined() && r.negative.pooled.defined())
    cond.pooled = at::cat({r.negative.pooled, r.positive.pooled}, 0);
  const LatentFormat format = latentFormat();
  SeededNoise seeded = seededNoiseSource(
      r.seed, {1, format.channels, r.height / format.spatial, r.width / format.spatial});
  SamplerSettings settings;
  settings.sampler = sampling::parseSampler(r.sampler);
  settings.schedule = sampling::parseSchedule(r.scheduler);
  settings.noise = std::move(seeded.more);
  settings.prediction = r.prediction;
  settings.zero_terminal_snr = r.zero_terminal_snr;
  return sample(
      cond, seeded.initial, r.steps, r.cfg, r.sizes,
      [&](const sampling::StepInfo& s) {
        if (on_step) on_step({s.step, s.total, s.denoised});
      },
      r.init, settings);
}

int64_t SdPipeline::sampleWorkingBytes(int64_t height, int64_t width, int64_t,
                                       int64_t context_tokens) const {
  const int64_t f = checkpoint_.spec.vae.downscale();
  return samplingWorkingBytes(height / f, width / f, context_tokens);
}

std::string SdPipeline::samplerLabel(const SampleRequest& r) const {
  return sampling::a1111SamplerName(sampling::parseSampler(r.sampler),
                                    sampling::parseSchedule(r.scheduler));
}

}  // namespace kiln::pipelines
