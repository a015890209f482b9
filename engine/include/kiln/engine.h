// The engine: a queue of jobs run one at a time on the engine's own thread, with
// interruption at every stage and progress reported per stage. Callers submit, cancel
// and skip from any thread and never wait on model work.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/error.h"
#include "kiln/image.h"
#include "kiln/memory_plan.h"
#include "kiln/offload.h"
#include "kiln/render.h"
#include "kiln/video_io.h"
#include "kiln/workflow.h"

namespace kiln {

using JobId = uint64_t;  // 0 is never a job

// One job: a workflow, or (without one) a text-to-image render of `batch` images, image i
// rendered with seed params.sampling.seed + i.
struct Job {
  // When set, the job runs this workflow (validated at submit) and `params`, `batch` and
  // `output_path` are not used; SaveImage nodes write into `output_dir`.
  std::shared_ptr<const Workflow> workflow;
  std::string output_dir;
  // A workflow job uses only params.embedding_dirs of it (its TextEncode nodes' folders,
  // searched before EngineOptions::embedding_dirs).
  RenderParams params;
  int batch = 1;
  // Where to save the images (by extension; needs EngineOptions::write_image). Image i of
  // a batch (i >= 1) goes to "<stem>-<i+1><ext>". Empty: images are only returned. A video
  // model's frames go to a video file (.mp4, .webm, .mov) or a PNG folder (a name ending
  // in '/'; needs EngineOptions::write_video), or, for one frame, to an image file.
  std::string output_path;
  bool previews = false;  // send a Preview event after each denoising step
};

enum class StageKind {
  Invalid = 0,
  LoadModel,
  ApplyLora,
  EncodePrompt,
  EncodeImage,
  Denoise,
  Decode,
  EncodeVideo,
  Save
};
const char* stageKindName(StageKind kind) noexcept;  // "load", "lora", "encode", ...

struct Stage {
  StageKind kind = StageKind::Invalid;
  std::string name;  // for people: "Loading model", "Denoising image 2 of 3"
  std::string
      unit;  // what `total` counts: "bytes" (of a file read), "steps", "tile passes", "files", ...
  int64_t total = 0;            // 0 while not yet known (a later Progress event carries it)
  int image = -1;               // the batch image the stage belongs to; -1 for job-wide stages
  double expected_seconds = 0;  // calibrated from earlier runs on this machine
};

struct MemoryStats {
  int64_t cached_model_bytes = 0;  // weights of the models the cache keeps between jobs
  int cached_models = 0;
  int64_t job_bytes = 0;       // tensors and images the running job holds
  int64_t resident_bytes = 0;  // the process's resident set (0 where unknown)
  // The device jobs run on ("cpu", "sim:8.00 GiB", ...) and its memory; for the CPU the
  // device figures are the host's.
  std::string device;
  int64_t device_total_bytes = 0;
  int64_t device_allocated_bytes = 0;     // held by live tensors
  int64_t device_reserved_bytes = 0;      // allocated plus the allocator's cache
  int64_t device_peak_bytes = 0;          // most allocated during the last (or current) job
  int64_t cached_model_device_bytes = 0;  // of the cached weights, those on the device
  int64_t pinned_bytes = 0;               // pinned host memory held for the device
  int64_t pinned_reserved_bytes = 0;      // the same with the blocks its allocator keeps for reuse
  int64_t pinned_peak_bytes = 0;
  // Where each cached model's components live: "unet (UNetModel, 1.64 GiB, BFloat16):
  // group-block, 1 block per group, streams".
  std::vector<std::string> placements;
  int64_t node_cache_bytes = 0;  // workflow node results kept for the next run
  int node_cache_entries = 0;
};

// A workflow node's state during a job (EventType::NodeState).
enum class NodeState { Invalid = 0, Queued, Running, Cached, Done, Failed };
const char* nodeStateName(NodeState state) noexcept;  // "queued", "running", ...

enum class EventType {
  Invalid = 0,
  JobQueued,
  JobStarted,
  StagePlanned,   // `stages`: the whole plan, before any stage runs
  StageStarted,   // `stage`
  Progress,       // `stage`, `done` of `total` `unit`, `fraction`, `eta_seconds`
  StageFinished,  // `stage`
  StageUpdated,   // `stage`, `stages`: that stage's new plan (name, total), e.g. a decode
                  // that turned tiled after running out of memory
  Preview,        // `stage`, `image`: a cheap picture of the current latent
  JobFinished,    // `outputs`, `output_paths`, `notices`, `model_family`
  JobFailed,      // `error`, `message`
  JobCancelled,   // `message` says when
  Log,            // `message`
  MemoryStats,    // `memory`
  NodeState,      // `node`, `node_state`; `message` when failed (workflow jobs)
};
const char* eventTypeName(EventType type) noexcept;

struct Event {
  EventType type = EventType::Invalid;
  JobId job = 0;
  std::vector<Stage> stages;
  int stage = -1;  // index into the planned stages
  int64_t done = 0;
  int64_t total = 0;
  std::string unit;
  double fraction = 0;      // of the whole job, 0 to 1, from the calibrated stage weights
  double eta_seconds = -1;  // -1 while unknown
  Image image;
  std::vector<Image> outputs;
  std::vector<std::string> output_paths;
  std::vector<std::string> notices;
  std::string model_family;  // "sd1", "sd2", "sdxl", "sdxl_refiner", "wan21"
  ErrorKind error = ErrorKind::Invalid;
  std::string message;
  kiln::MemoryStats memory;
  std::string node;  // a workflow node's id
  kiln::NodeState node_state = kiln::NodeState::Invalid;
};

// Receives every event. Called on the engine thread, and on the caller's thread for
// JobQueued and for the JobCancelled of a job that never started; calls never overlap
// and arrive in order for each job. It may call back into the Engine, but must return
// quickly: the engine thread waits for it.
using EventSink = std::function<void(const Event&)>;

struct EngineOptions {
  EventSink sink;
  // The save stage: writes `image` to exactly `path` (the engine picks a temporary name
  // and renames it into place, so a cancelled or failed save leaves nothing behind).
  std::function<void(const std::string& path, const Image& image)> write_image;
  // Reads an image file for LoadImage and LoadMask nodes (kiln::readImage where the media
  // library is linked). Unset: workflows that load images fail with a clear message.
  std::function<Image(const std::string& path)> read_image;
  // The save stage of video jobs: writes `frames` as a video at exactly `path` (.mp4,
  // .webm, .mov or a folder of PNGs; kiln::writeVideo where the media library is linked),
  // leaving nothing when it throws; options.progress reports frames and may throw to stop.
  std::function<void(const std::string& path, const std::vector<Image>& frames,
                     const VideoWriteOptions& options)>
      write_video;
  // Most bytes of workflow node results kept between jobs (images, latents, conditioning);
  // with a host budget, at most what the cached models' weights leave of it.
  int64_t node_cache_bytes = int64_t{1} << 30;
  // JSON file where measured stage durations persist between runs; empty: not persisted.
  std::string timings_path;
  int cached_models = 1;  // models kept loaded between jobs (0: load for every job)
  // Where jobs compute: "cpu", "sim:BYTES" (a simulated accelerator of that capacity) or
  // "cuda:N" where this build has GPU support. An unknown device makes the Engine
  // constructor throw kiln::Error(InvalidArgument).
  std::string device = "cpu";
  int64_t device_budget_bytes = 0;  // most device memory Kiln uses; 0: all of it
  int64_t host_budget_bytes = 0;    // most host memory cached models hold; 0: no limit
  // How weights are spread between the device and host memory (see kiln/offload.h).
  OffloadSettings offload;
  // Folders of textual-inversion embeddings for every job's prompts (TextEncode nodes and
  // renders, after RenderParams::prompt.embedding_dirs); see embeddingFolders().
  std::vector<std::string> embedding_dirs;
};

// Where applications keep the stage timings: $XDG_CACHE_HOME/kiln/stage-timings.json
// (else ~/.cache/kiln/...), the folder created if needed; empty when there is no home.
std::string defaultTimingsPath();

// Interruption statistics over the jobs run so far.
struct InterruptStats {
  int64_t checks = 0;
  double longest_gap_seconds = 0;                // the longest time between two cancellation checks
  std::string longest_gap_from, longest_gap_to;  // where those two checks are in the source
};

class Engine {
 public:
  explicit Engine(EngineOptions options);
  ~Engine();  // cancels every job and joins the engine thread
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a job. Throws kiln::Error(InvalidArgument) for parameters that can never work
  // (the model file itself is checked when the job runs).
  JobId submit(Job job);
  // Cancels a queued or running job; false when the id is unknown or the job is over.
  bool cancel(JobId id);
  void cancelAll();
  // Finishes the image being rendered, drops the batch's remaining images and keeps the
  // finished ones; for a queued job, limits it to its first image. False when unknown.
  bool skip(JobId id);

  // Blocks until no job is queued or running, at most `timeout_seconds`; true when idle.
  bool waitIdle(double timeout_seconds) const;
  std::size_t queuedJobs() const;
  kiln::MemoryStats memoryStats() const;
  InterruptStats interruptStats() const;
  // Drops every cached model no job is using, returning its host and device memory, and
  // the cached workflow node results.
  void unloadModels();
  // The node types workflows can use.
  const std::vector<NodeSchema>& nodeSchemas() const;
  // Forgets the workflow node results kept between jobs.
  void clearNodeCache();
  // New offload settings, applied to loaded models without reloading them: at once on the
  // engine thread when it is idle (a MemoryStats event with job 0 follows), else when the
  // next job starts. Throws kiln::Error(InvalidArgument) for settings that cannot work.
  void setOffloadSettings(const OffloadSettings& settings);
  OffloadSettings offloadSettings() const;
  // The memory map before settings are applied: for each loaded model, what
  // `request.offload` would put on the device and in pinned host memory beside the
  // working memory of the size asked, and what does not fit. Any thread; quick (sizes
  // only, nothing moves; never waits: `busy` while the engine moves models). Throws
  // kiln::Error(InvalidArgument) for settings that cannot work.
  MemoryPlan planMemory(const MemoryPlanRequest& request) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
