// A render job with a video model (Wan 2.1 text-to-video): load (or take from the cache),
// encode both prompts, sample, decode one latent frame at a time, save the video (or, for
// one frame, an image). Each is a stage with its own units; every stage can be cancelled.
#pragma once

#include "jobs/job_runner.h"

namespace kiln::jobs {

// Throws as runJob does.
JobResult runVideoJob(const Job& job, RunEnvironment& env, int* failed_stage = nullptr);

}  // namespace kiln::jobs
