#include "kiln/render.h"
#include "core/out_of_memory.h"

#include "core/data_paths.h"
#include "jobs/render_job.h"
#include "kiln/error.h"

namespace kiln {

// One job run on the caller's thread, with no cache and no interruption.
RenderResult render(const RenderParams& params, const ProgressFn& progress) {
  try {
    Job job;
    job.params = params;
    std::vector<Stage> stages;
    nodes::RunEnvironment env;
    env.emit = [&](const Event& e) {
      if (e.type == EventType::StagePlanned) stages = e.stages;
      if (!progress || e.stage < 0) return;
      if (e.type == EventType::StageStarted || e.type == EventType::Progress) {
        const Stage& s = stages.at(static_cast<std::size_t>(e.stage));
        progress({s.name, e.type == EventType::StageStarted ? 0 : e.done, e.total, e.unit});
      }
    };
    nodes::JobResult r = jobs::runJob(job, env);
    RenderResult result;
    result.image = std::move(r.images.at(0));
    result.frames = std::move(r.frames);
    result.fps = r.fps;
    result.notices = std::move(r.notices);
    result.model_family = std::move(r.model_family);
    return result;
  } catch (...) {
    core::rethrowAsError();
  }
}

}  // namespace kiln
