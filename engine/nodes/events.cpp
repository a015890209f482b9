#include "nodes/events.h"

#include "kiln/error.h"
#include "nodes/run_environment.h"

namespace kiln {

const char* stageKindName(StageKind kind) noexcept {
  switch (kind) {
    case StageKind::LoadModel:
      return "load";
    case StageKind::ApplyLora:
      return "lora";
    case StageKind::EncodePrompt:
      return "encode";
    case StageKind::EncodeImage:
      return "encode_image";
    case StageKind::Denoise:
      return "denoise";
    case StageKind::Decode:
      return "decode";
    case StageKind::EncodeVideo:
      return "video";
    case StageKind::Save:
      return "save";
    case StageKind::Invalid:
      break;
  }
  return "invalid";
}

const char* eventTypeName(EventType type) noexcept {
  switch (type) {
    case EventType::JobQueued:
      return "job_queued";
    case EventType::JobStarted:
      return "job_started";
    case EventType::StagePlanned:
      return "stage_planned";
    case EventType::StageStarted:
      return "stage_started";
    case EventType::Progress:
      return "progress";
    case EventType::StageFinished:
      return "stage_finished";
    case EventType::StageUpdated:
      return "stage_updated";
    case EventType::Preview:
      return "preview";
    case EventType::JobFinished:
      return "job_finished";
    case EventType::JobFailed:
      return "job_failed";
    case EventType::JobCancelled:
      return "job_cancelled";
    case EventType::Log:
      return "log";
    case EventType::MemoryStats:
      return "memory_stats";
    case EventType::NodeState:
      return "node_state";
    case EventType::Invalid:
      break;
  }
  return "invalid";
}

}  // namespace kiln

namespace kiln::nodes {

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

}  // namespace kiln::nodes
