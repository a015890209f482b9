// The events the engine sends, each kind built in one place. The stage events
// (StagePlanned, StageStarted, Progress, StageUpdated, StageFinished) are the
// ProgressTracker's, which fills in the overall fraction and ETA.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/engine.h"

namespace kiln::nodes {

struct JobResult;

// A Log event carrying `message` (shown to the user as it is).
Event logEvent(std::string message, JobId job = 0);
// JobQueued or JobStarted.
Event jobEvent(EventType type, JobId job);
// JobFinished with what the job made.
Event finishedEvent(JobId job, JobResult&& result);
// JobCancelled (`error` of kind Cancelled) or JobFailed, while stage `stage` ran (-1: none).
Event failedEvent(JobId job, const Error& error, int stage);
// JobCancelled for a job taken off the queue before it started.
Event unstartedEvent(JobId job);
Event memoryEvent(JobId job, MemoryStats memory);
// A workflow node's state, with the error of a failed one.
Event nodeEvent(std::string node, NodeState state, std::string message = {});
// The sampler's clean estimate after step `done` of `total` of stage `stage`.
Event previewEvent(int stage, int64_t done, int64_t total, Image image);

}  // namespace kiln::nodes
