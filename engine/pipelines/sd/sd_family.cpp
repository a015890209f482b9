#include "pipelines/sd/sd_family.h"

#include "core/interrupt.h"
#include "models/sd/sd_checkpoint.h"
#include "pipelines/sd/sd_pipeline.h"

namespace kiln::pipelines {

Family sdFamily() {
  Family f;
  f.name = "sd";
  // Whatever no other family claims: its loader names what is wrong with a file that is
  // not an SD checkpoint either.
  f.detect = [](const std::string&) { return true; };
  f.resolve = [](const ModelRequest& r) { return r; };
  f.cacheKey = [](const ModelRequest& r) { return modelKey(r.path, r.dtype); };
  f.inspect = [](const std::string& path) {
    const models::SdModelSpec spec = models::openCheckpoint(path).spec;
    ModelInfo info;
    info.kind = models::familyName(spec.family);
    if (spec.native_width > 0) info.native.width = spec.native_width;
    if (spec.native_height > 0) info.native.height = spec.native_height;
    info.side_multiple = spec.vae.downscale();
    return info;
  };
  f.open = [](const ModelRequest& r, const LoadProgress& progress) -> std::unique_ptr<ModelParts> {
    core::checkInterrupt();
    models::Checkpoint checkpoint = models::openCheckpoint(r.path);
    core::checkInterrupt();
    return std::make_unique<SdPipeline>(std::move(checkpoint), r.dtype, progress);
  };
  return f;
}

}  // namespace kiln::pipelines
