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
  f.open = [](const ModelRequest& r, const LoadProgress& progress) -> std::unique_ptr<ModelParts> {
    core::checkInterrupt();
    models::Checkpoint checkpoint = models::openCheckpoint(r.path);
    core::checkInterrupt();
    return std::make_unique<SdPipeline>(std::move(checkpoint), r.dtype, progress);
  };
  return f;
}

}  // namespace kiln::pipelines
