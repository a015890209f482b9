#include "pipelines/flux/flux_family.h"

#include "pipelines/common/vae_codec.h"
#include "pipelines/flux/flux_pipeline.h"

namespace kiln::pipelines {

Family fluxFamily() {
  Family f;
  f.name = "flux1";
  f.detect = isFluxModel;
  f.separate_parts = true;
  // The request's text encoders: CLIP-L first, T5 second.
  f.resolve = [](const ModelRequest& r) {
    const FluxModelPaths paths =
        resolveFluxModel(r.path, r.vae_path, r.text_encoder_path, r.text_encoder_2_path);
    ModelRequest out = r;
    out.vae_path = paths.vae;
    out.text_encoder_path = paths.clip_l;
    out.text_encoder_2_path = paths.t5;
    return out;
  };
  f.cacheKey = [](const ModelRequest& r) {
    const at::ScalarType vae = vaeComputeDtype(r.dtype);
    return modelKey(r.path, r.dtype) + "|" + modelKey(r.vae_path, vae) + "|" +
           modelKey(r.text_encoder_path, r.dtype) + "|" + modelKey(r.text_encoder_2_path, r.dtype);
  };
  f.inspect = [](const std::string& path) {
    // Guidance-distilled: no classifier-free guidance (CFG 1); schnell draws in 4 steps.
    const bool dev = fluxHasGuidance(path);
    return ModelInfo{"flux1", fluxNativeSize(), 16,
                     SamplingDefaults{dev ? 20 : 4, 1.0, "euler", "simple"}};
  };
  f.open = [](const ModelRequest& r, const LoadProgress& progress) -> std::unique_ptr<ModelParts> {
    const FluxModelPaths paths =
        resolveFluxModel(r.path, r.vae_path, r.text_encoder_path, r.text_encoder_2_path);
    return std::make_unique<FluxPipeline>(paths, r.dtype, vaeComputeDtype(r.dtype), progress);
  };
  return f;
}

}  // namespace kiln::pipelines
