#include "pipelines/wan/wan_family.h"

#include "models/text/t5_tokenizer.h"
#include "pipelines/wan/wan_pipeline.h"

namespace kiln::pipelines {

Family wanFamily() {
  Family f;
  f.name = "wan21";
  f.video = true;
  f.separate_parts = true;
  f.detect = isWanModel;
  f.resolve = [](const ModelRequest& r) {
    const WanModelPaths paths = resolveWanModel(r.path, r.vae_path, r.text_encoder_path);
    ModelRequest out = r;
    out.path = paths.transformer;
    out.vae_path = paths.vae;
    out.text_encoder_path = paths.text_encoder;
    return out;
  };
  // The VAE loads in fp32 when the rest is fp16, whose range it needs.
  const auto vaeDtype = [](at::ScalarType dtype) {
    return dtype == at::kHalf ? at::kFloat : dtype;
  };
  f.cacheKey = [](const ModelRequest& r) {
    return modelKey(r.path, r.dtype) + "|" + modelKey(r.vae_path, at::kFloat) + "|" +
           modelKey(r.text_encoder_path, r.dtype);
  };
  f.inspect = [](const std::string&) {
    return ModelInfo{"wan21", wanNativeSize(), 0, std::nullopt};
  };
  f.open = [vaeDtype](const ModelRequest& r,
                      const LoadProgress& progress) -> std::unique_ptr<ModelParts> {
    const WanModelPaths paths{r.path, r.vae_path, r.text_encoder_path,
                              models::findT5TokenizerModel(r.text_encoder_path)};
    return std::make_unique<WanPipeline>(paths, r.dtype, vaeDtype(r.dtype), progress);
  };
  return f;
}

}  // namespace kiln::pipelines
