#include "kiln/engine.h"
#include "core/out_of_memory.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/interrupt.h"
#include "jobs/render_job.h"
#include "jobs/workflow_runner.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "nodes/model_loading.h"
#include "nodes/stage_timings.h"

namespace kiln {

const char* nodeStateName(NodeState state) noexcept {
  switch (state) {
    case NodeState::Queued:
      return "queued";
    case NodeState::Running:
      return "running";
    case NodeState::Cached:
      return "cached";
    case NodeState::Done:
      return "done";
    case NodeState::Failed:
      return "failed";
    case NodeState::Invalid:
      break;
  }
  return "invalid";
}

std::string defaultTimingsPath() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir;
  if (cache != nullptr && *cache == '/')
    dir = cache;
  else if (home != nullptr && *home != '\0')
    dir = std::filesystem::path(home) / ".cache";
  else
    return {};
  dir /= "kiln";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return ec ? std::string() : (dir / "stage-timings.json").string();
}

namespace {

int64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

struct JobRecord {
  JobId id = 0;
  Job job;
  core::CancelToken token;
  std::atomic<bool> skip{false};
};

}  // namespace

struct Engine::Impl {
  EngineOptions options;
  // Lock order: sink_mutex before mutex; the engine thread never emits while holding mutex.
  std::recursive_mutex sink_mutex;
  mutable std::mutex mutex;
  std::condition_variable wake;
  mutable std::condition_variable idle;
  std::deque<std::shared_ptr<JobRecord>> queue;
  std::shared_ptr<JobRecord> running;
  JobId next_id = 1;
  bool stopping = false;
  bool replace_pending = false;  // new offload settings wait to be applied to loaded models
  bool replacing = false;        // the engine thread is applying them

  // Touched only by the engine thread, except for the atomics.
  std::unique_ptr<memory::Device> device;
  memory::ModelCache cache;
  nodes::StageTimings timings;
  std::atomic<int64_t> job_bytes{0};
  InterruptStats interrupt_stats;  // guarded by mutex
  const nodes::NodeLibrary nodes = nodes::builtinNodes();
  graph::ResultCache node_cache;

  std::thread thread;

  OffloadSettings offload;  // guarded by mutex
  int64_t placed_reserve =
      0;  // engine thread: the working reserve the loaded models were placed with

  explicit Impl(EngineOptions o)
      : options(std::move(o)),
        device(memory::makeDevice(options.device)),
        cache(*device,
              {options.device_budget_bytes, options.host_budget_bytes, options.cached_models}),
        node_cache(options.node_cache_bytes) {
    options.offload.validate();
    offload = options.offload;
  }

  void emit(Event e) {
    std::lock_guard<std::recursive_mutex> lock(sink_mutex);
    if (options.sink) options.sink(e);
  }

  kiln::MemoryStats memory() const {
    kiln::MemoryStats m;
    m.cached_model_bytes = cache.hostBytes() + cache.deviceBytes();
    m.cached_model_device_bytes = cache.deviceBytes();
    const auto entries = cache.entries();
    m.cached_models = static_cast<int>(entries.size());
    for (const auto& e : entries)
      m.placements.insert(m.placements.end(), e.placements.begin(), e.placements.end());
    m.job_bytes = job_bytes.load();
    m.resident_bytes = residentBytes();
    const memory::DeviceMemory d = device->memory();
    m.device = device->name();
    m.device_total_bytes = d.total_bytes;
    m.device_allocated_bytes = d.allocated_bytes;
    m.device_reserved_bytes = d.reserved_bytes;
    m.device_peak_bytes = d.peak_allocated_bytes;
    m.pinned_bytes = d.pinned_bytes;
    m.pinned_reserved_bytes = d.pinned_reserved_bytes;
    m.pinned_peak_bytes = d.pinned_peak_bytes;
    m.node_cache_bytes = node_cache.bytes();
    m.node_cache_entries = static_cast<int>(node_cache.size());
    return m;
  }

  void emitMemory(JobId id) { emit(nodes::memoryEvent(id, memory())); }

  void loop() {
    for (;;) {
      std::shared_ptr<JobRecord> rec;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || !queue.empty() || replace_pending; });
        if (stopping) return;
        if (queue.empty()) {
          replace_pending = false;
          replacing = true;
          const OffloadSettings settings = offload;
          lock.unlock();
          replaceLoaded(settings);
          lock.lock();
          replacing = false;
          lock.unlock();
          idle.notify_all();
          continue;
        }
        replace_pending = false;  // the job places its models with the new settings
        rec = queue.front();
        queue.pop_front();
        running = rec;
      }
      run(*rec);
      {
        std::lock_guard<std::mutex> lock(mutex);
        running.reset();
      }
      idle.notify_all();
    }
  }

  // Places the loaded models as `settings` say, without reloading them (engine thread,
  // between jobs), then reports the new placement.
  void replaceLoaded(const OffloadSettings& settings) {
    // A new working reserve changes what balanced mode keeps resident: placed afresh
    // (from the host copies; nothing is read from the file again).
    const bool afresh = settings.working_reserve_bytes != placed_reserve;
    placed_reserve = settings.working_reserve_bytes;
    nodes::RunEnvironment env;
    env.cache = &cache;
    env.device = device.get();
    env.offload = settings;
    env.emit = [&](Event e) { emit(std::move(e)); };
    for (const memory::CacheEntryInfo& info : cache.entries()) {
      memory::ModelCache::Lease lease = cache.find(info.key);
      if (!lease) continue;
      try {
        // Models resting in host memory are placed by the job that uses them next.
        if (device->isAccelerator() && lease.model().deviceBytes() == 0) continue;
        // No work follows: room only for the weights (and the reserve); balanced mode
        // still keeps room for the work of the model's native size (see placeModel).
        if (auto* m = dynamic_cast<pipelines::LoadedModel*>(&lease.model())) {
          if (afresh) m->offload();
          nodes::placeModel(*m, env, *device, 0);
        }
      } catch (const std::exception& e) {
        emit(nodes::logEvent("could not place " + info.description +
                             " with the new memory settings (the next job " +
                             "tries again): " + e.what()));
      }
    }
    emitMemory(0);
  }

  // What a job runs with: the cache, the device, the offload settings of now, the writers,
  // its embeddings folders before the engine's, its Skip flag.
  nodes::RunEnvironment environmentFor(JobRecord& rec) {
    nodes::RunEnvironment env;
    env.cache = &cache;
    env.device = device.get();
    {
      std::lock_guard<std::mutex> lock(mutex);
      env.offload = offload;
    }
    env.timings = &timings;
    env.emit = [&](Event e) {
      e.job = rec.id;
      emit(std::move(e));
    };
    env.write_image = options.write_image;
    env.read_image = options.read_image;
    env.write_video = options.write_video;
    // A workflow's TextEncode nodes look in the job's folders first, as a render does.
    env.embedding_dirs =
        rec.job.workflow ? rec.job.params.prompt.embedding_dirs : std::vector<std::string>{};
    env.embedding_dirs.insert(env.embedding_dirs.end(), options.embedding_dirs.begin(),
                              options.embedding_dirs.end());
    env.skip = &rec.skip;
    env.job_bytes = &job_bytes;
    return env;
  }

  void run(JobRecord& rec) {
    emit(nodes::jobEvent(EventType::JobStarted, rec.id));
    emitMemory(rec.id);
    nodes::RunEnvironment env = environmentFor(rec);
    placed_reserve = env.offload.working_reserve_bytes;
    device->resetPeak();
    Event end;
    end.job = rec.id;
    int failed_stage = -1;
    {
      core::InterruptScope scope(rec.token);
      try {
        try {
          // Node results share the host budget with the cached models' weights.
          if (options.host_budget_bytes > 0)
            node_cache.setLimit(
                std::clamp<int64_t>(options.host_budget_bytes - cache.hostBytes(), 0,
                                    std::max<int64_t>(options.node_cache_bytes, 0)));
          end = nodes::finishedEvent(
              rec.id, rec.job.workflow
                          ? jobs::runWorkflow(rec.job, env, nodes, node_cache, &failed_stage)
                          : jobs::runJob(rec.job, env, &failed_stage));
        } catch (...) {
          core::rethrowAsError();
        }
      } catch (const Error& e) {
        end = nodes::failedEvent(rec.id, e, failed_stage);
      }
      const core::InterruptStats s = scope.stats();
      std::lock_guard<std::mutex> lock(mutex);
      interrupt_stats.checks += s.checks;
      if (s.longest_gap_seconds > interrupt_stats.longest_gap_seconds) {
        interrupt_stats.longest_gap_seconds = s.longest_gap_seconds;
        interrupt_stats.longest_gap_from = s.longest_gap_from;
        interrupt_stats.longest_gap_to = s.longest_gap_to;
      }
    }
    if (!options.timings_path.empty() && end.type != EventType::JobFailed) {
      try {
        timings.save(options.timings_path);
      } catch (const Error& e) {
        emit(nodes::logEvent(e.what(), rec.id));
      }
    }
    emit(std::move(end));
    emitMemory(rec.id);
  }
};

Engine::Engine(EngineOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  std::string problem;
  impl_->timings = nodes::StageTimings::load(impl_->options.timings_path, &problem);
  if (!problem.empty()) impl_->emit(nodes::logEvent(problem));
  impl_->thread = std::thread([this] { impl_->loop(); });
}

Engine::~Engine() {
  cancelAll();
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->thread.join();
}

JobId Engine::submit(Job job) {
  if (job.workflow)
    jobs::validateWorkflowJob(job, impl_->nodes);
  else
    jobs::validateJob(job);
  const bool video_out =
      !job.output_path.empty() && videoFormatFor(job.output_path) != VideoFormat::Invalid;
  if (!job.output_path.empty() && !video_out && !impl_->options.write_image)
    throw Error(ErrorKind::InvalidArgument,
                "this engine was set up without an image writer, so it cannot save '" +
                    job.output_path + "'");
  if (video_out && !impl_->options.write_video)
    throw Error(ErrorKind::InvalidArgument,
                "this engine was set up without a video writer, so it cannot save '" +
                    job.output_path + "'");
  auto rec = std::make_shared<JobRecord>();
  rec->job = std::move(job);
  std::lock_guard<std::recursive_mutex> sink_lock(impl_->sink_mutex);
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->stopping) throw Error(ErrorKind::InvalidArgument, "the engine is shutting down");
    rec->id = impl_->next_id++;
    impl_->queue.push_back(rec);
  }
  // Still holding the sink: JobQueued reaches the sink before the job's JobStarted.
  impl_->emit(nodes::jobEvent(EventType::JobQueued, rec->id));
  impl_->wake.notify_one();
  return rec->id;
}

bool Engine::cancel(JobId id) {
  std::lock_guard<std::recursive_mutex> sink_lock(impl_->sink_mutex);
  std::shared_ptr<JobRecord> removed;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->running && impl_->running->id == id) {
      impl_->running->token.cancel();
      return true;
    }
    auto& q = impl_->queue;
    const auto it = std::find_if(q.begin(), q.end(), [&](const auto& r) { return r->id == id; });
    if (it == q.end()) return false;
    removed = *it;
    q.erase(it);
  }
  impl_->emit(nodes::unstartedEvent(id));
  impl_->idle.notify_all();
  return true;
}

void Engine::cancelAll() {
  std::lock_guard<std::recursive_mutex> sink_lock(impl_->sink_mutex);
  std::deque<std::shared_ptr<JobRecord>> removed;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->running) impl_->running->token.cancel();
    removed.swap(impl_->queue);
  }
  for (const auto& r : removed) impl_->emit(nodes::unstartedEvent(r->id));
  impl_->idle.notify_all();
}

bool Engine::skip(JobId id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->running && impl_->running->id == id) {
    impl_->running->skip = true;
    return true;
  }
  for (const auto& r : impl_->queue)
    if (r->id == id) {
      r->job.batch = 1;
      return true;
    }
  return false;
}

bool Engine::waitIdle(double timeout_seconds) const {
  std::unique_lock<std::mutex> lock(impl_->mutex);
  return impl_->idle.wait_for(lock, std::chrono::duration<double>(std::max(0.0, timeout_seconds)),
                              [&] {
                                return impl_->queue.empty() && !impl_->running &&
                                       !impl_->replace_pending && !impl_->replacing;
                              });
}

std::size_t Engine::queuedJobs() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->queue.size();
}

MemoryStats Engine::memoryStats() const {
  return impl_->memory();
}

MemoryPlan Engine::planMemory(const MemoryPlanRequest& request) const {
  request.offload.validate();
  if (request.width < 0 || request.height < 0 || request.frames < 0)
    throw Error(ErrorKind::InvalidArgument, "a memory plan's size cannot be negative");
  MemoryPlan plan;
  const memory::Device& device = *impl_->device;
  plan.device = device.name();
  plan.accelerator = device.isAccelerator();
  if (!plan.accelerator) return plan;  // weights stay in host memory; nothing is placed
  // What each model may have besides its own weights and pins (LoadedModel::planMemory
  // adds those): the device's free memory within the budget, as nodes::placeModel counts
  // it, and the host memory free for pinning less the reserve.
  memory::PlanRoom room;
  room.device_bytes = impl_->cache.availableDeviceBytes();
  if (device.hasPinnedMemory())
    room.pinned_bytes = std::max<int64_t>(
        memory::availableHostBytes().value_or(0) - request.offload.pin_reserve_bytes, 0);
  plan.busy = !impl_->cache.tryForEachModel([&](const memory::CachedModel& model) {
    plan.models.push_back(
        model.planMemory(request.offload, room, request.width, request.height, request.frames));
  });
  return plan;
}

void Engine::setOffloadSettings(const OffloadSettings& settings) {
  settings.validate();
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->offload = settings;
    impl_->replace_pending = true;
  }
  impl_->wake.notify_one();
}

OffloadSettings Engine::offloadSettings() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->offload;
}

void Engine::unloadModels() {
  impl_->node_cache.clear();  // its model handles name models by key; they are loaded again on use
  impl_->cache.clear();
  impl_->device->emptyCache();
}

const std::vector<NodeSchema>& Engine::nodeSchemas() const {
  return impl_->nodes.schemas();
}

void Engine::clearNodeCache() {
  impl_->node_cache.clear();
}

InterruptStats Engine::interruptStats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->interrupt_stats;
}

}  // namespace kiln
