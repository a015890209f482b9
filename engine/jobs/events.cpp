#include "jobs/events.h"

#include "jobs/job_runner.h"
#include "kiln/error.h"

namespace kiln::jobs {

Event logEvent(std::string message, JobId job) {
  Event e;
  e.type = EventType::Log;
  e.job = job;
  e.message = std::move(message);
  return e;
}

Event jobEvent(EventType type, JobId job) {
  Event e;
  e.type = type;
  e.job = job;
  return e;
}

Event finishedEvent(JobId job, JobResult&& result) {
  Event e = jobEvent(EventType::JobFinished, job);
  e.fraction = 1.0;
  e.outputs = std::move(result.images);
  e.output_paths = std::move(result.paths);
  e.notices = std::move(result.notices);
  e.model_family = std::move(result.model_family);
  return e;
}

Event failedEvent(JobId job, const Error& error, int stage) {
  const bool cancelled = error.kind() == ErrorKind::Cancelled;
  Event e = jobEvent(cancelled ? EventType::JobCancelled : EventType::JobFailed, job);
  e.error = error.kind();
  e.stage = stage;
  e.message = !cancelled   ? error.what()
              : stage >= 0 ? "cancelled while running stage " + std::to_string(stage + 1)
                           : "cancelled before the first stage";
  return e;
}

Event unstartedEvent(JobId job) {
  Event e = jobEvent(EventType::JobCancelled, job);
  e.error = ErrorKind::Cancelled;
  e.message = "cancelled before it started";
  return e;
}

Event memoryEvent(JobId job, MemoryStats memory) {
  Event e = jobEvent(EventType::MemoryStats, job);
  e.memory = std::move(memory);
  return e;
}

Event nodeEvent(std::string node, NodeState state, std::string message) {
  Event e;
  e.type = EventType::NodeState;
  e.node = std::move(node);
  e.node_state = state;
  e.message = std::move(message);
  return e;
}

Event previewEvent(int stage, int64_t done, int64_t total, Image image) {
  Event e;
  e.type = EventType::Preview;
  e.stage = stage;
  e.done = done;
  e.total = total;
  e.image = std::move(image);
  return e;
}

}  // namespace kiln::jobs
