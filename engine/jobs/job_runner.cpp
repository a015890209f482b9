#include "jobs/job_runner.h"

#include <ATen/Parallel.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/atomic_file.h"
#include "core/interrupt.h"
#include "jobs/pipeline_model.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "jobs/stage_timings.h"
#include "nodes/sd_pipeline.h"

namespace kiln::jobs {
namespace {

using Clock = std::chrono::steady_clock;

// The bytes a job holds in tensors and images, counted into the engine's accounting and
// given back when the job ends, however it ends.
class JobBytes {
 public:
  explicit JobBytes(std::atomic<int64_t>* counter) : counter_(counter) {}
  ~JobBytes() {
    if (counter_) counter_->fetch_sub(held_);
  }
  JobBytes(const JobBytes&) = delete;
  JobBytes& operator=(const JobBytes&) = delete;
  void add(int64_t bytes) {
    held_ += bytes;
    if (counter_) counter_->fetch_add(bytes);
  }

 private:
  std::atomic<int64_t>* counter_ = nullptr;
  int64_t held_ = 0;
};

// Turns stage progress into events with the overall fraction and ETA, and records how
// long each finished stage took.
class ProgressTracker {
 public:
  ProgressTracker(RunEnvironment& env, TimingKey base) : env_(env), base_(std::move(base)) {}

  int add(StageKind kind, std::string name, std::string unit, int64_t total, int image,
          int64_t expected_units) {
    Stage s;
    s.kind = kind;
    s.name = std::move(name);
    s.unit = std::move(unit);
    s.total = total;
    s.image = image;
    TimingKey key = base_;
    key.kind = kind;
    s.expected_seconds = env_.timings ? env_.timings->secondsPerUnit(key) * static_cast<double>(expected_units) : 1.0;
    stages_.push_back(std::move(s));
    fraction_done_.push_back(0);
    return static_cast<int>(stages_.size()) - 1;
  }

  void plan() {
    Event e;
    e.type = EventType::StagePlanned;
    e.stages = stages_;
    e.eta_seconds = remainingExpected();
    env_.emit(std::move(e));
    job_start_ = Clock::now();
  }

  void start(int i) {
    current_ = i;
    stage_start_ = Clock::now();
    Event e;
    e.type = EventType::StageStarted;
    e.stage = i;
    e.total = stages_[static_cast<std::size_t>(i)].total;
    e.unit = stages_[static_cast<std::size_t>(i)].unit;
    fill(e);
    env_.emit(std::move(e));
  }

  // Progress events at most every 10 ms, and always for the first and the last unit.
  void progress(int i, int64_t done, int64_t total) {
    Stage& s = stages_[static_cast<std::size_t>(i)];
    s.total = total;
    fraction_done_[static_cast<std::size_t>(i)] =
        total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0) : 0.0;
    const auto now = Clock::now();
    if (done != total && done != 1 && now - last_progress_ < std::chrono::milliseconds(10)) return;
    last_progress_ = now;
    Event e;
    e.type = EventType::Progress;
    e.stage = i;
    e.done = done;
    e.total = total;
    e.unit = s.unit;
    fill(e);
    env_.emit(std::move(e));
  }

  void finish(int i) {
    Stage& s = stages_[static_cast<std::size_t>(i)];
    fraction_done_[static_cast<std::size_t>(i)] = 1.0;
    const double seconds = std::chrono::duration<double>(Clock::now() - stage_start_).count();
    if (env_.timings) {
      TimingKey key = base_;
      key.kind = s.kind;
      env_.timings->record(key, s.total, seconds);
    }
    Event e;
    e.type = EventType::StageFinished;
    e.stage = i;
    e.done = s.total;
    e.total = s.total;
    e.unit = s.unit;
    fill(e);
    env_.emit(std::move(e));
    current_ = -1;
  }

  // Stages that will not run (a skipped batch) stop counting towards the whole.
  void drop(int from) {
    for (std::size_t k = static_cast<std::size_t>(from); k < stages_.size(); ++k)
      stages_[k].expected_seconds = 0;
  }

  int current() const noexcept { return current_; }
  const Stage& stage(int i) const { return stages_[static_cast<std::size_t>(i)]; }
  int size() const noexcept { return static_cast<int>(stages_.size()); }

 private:
  double expectedTotal() const {
    double t = 0;
    for (const auto& s : stages_) t += s.expected_seconds;
    return t;
  }
  double expectedDone() const {
    double t = 0;
    for (std::size_t k = 0; k < stages_.size(); ++k) t += stages_[k].expected_seconds * fraction_done_[k];
    return t;
  }
  double remainingExpected() const { return std::max(0.0, expectedTotal() - expectedDone()); }

  void fill(Event& e) const {
    const double total = expectedTotal();
    const double done = expectedDone();
    e.fraction = total > 0 ? std::clamp(done / total, 0.0, 1.0) : 0.0;
    // Scale the remaining expectation by how this run compares with it so far.
    const double elapsed = std::chrono::duration<double>(Clock::now() - job_start_).count();
    const double speed = done > 0.05 * total && done > 0 ? std::clamp(elapsed / done, 0.2, 5.0) : 1.0;
    e.eta_seconds = std::max(0.0, total - done) * speed;
  }

  RunEnvironment& env_;
  TimingKey base_;
  std::vector<Stage> stages_;
  std::vector<double> fraction_done_;
  int current_ = -1;
  Clock::time_point job_start_ = Clock::now(), stage_start_ = Clock::now(), last_progress_{};
};

Event logEvent(std::string message) {
  Event e;
  e.type = EventType::Log;
  e.message = std::move(message);
  return e;
}

// [H, W, 3] float in [0, 1] -> Image.
Image imageFromRgb(const at::Tensor& rgb) {
  const at::Tensor hwc = rgb.to(at::kFloat).contiguous();
  Image image;
  image.height = static_cast<int>(hwc.size(0));
  image.width = static_cast<int>(hwc.size(1));
  image.channels = 3;
  const float* src = hwc.data_ptr<float>();
  image.pixels.assign(src, src + hwc.numel());
  return image;
}

// [1, 3, H, W] in [-1, 1] -> interleaved RGB in [0, 1].
Image toImage(const at::Tensor& decoded) {
  return imageFromRgb((decoded[0] / 2 + 0.5).clamp(0, 1).permute({1, 2, 0}));
}

// "out.png" for the first image, "out-2.png", "out-3.png" ... for the others.
std::string outputPathFor(const std::string& path, int image) {
  if (image == 0) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "-" + std::to_string(image + 1) + p.extension().string())).string();
}

// Written under a temporary name and renamed into place only if the job was not
// cancelled meanwhile: an interrupted or failed save leaves no file behind.
void saveImage(const std::string& path, const Image& image, const RunEnvironment& env) {
  core::checkInterrupt();
  core::AtomicFile file(path);
  env.write_image(file.temporaryPath(), image);
  core::checkInterrupt();
  file.commit();
}

}  // namespace

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void validateJob(const Job& job) {
  const RenderParams& p = job.params;
  if (p.lora_mode == LoraMode::Invalid) throw Error(ErrorKind::InvalidArgument, "no LoRA mode set");
  if (p.lora_mode == LoraMode::Merge)
    for (const auto& l : p.loras)
      if (!l.keyframes.empty())
        throw Error(ErrorKind::InvalidArgument, "LoRA '" + l.path +
                                                    "' changes strength over the steps, which needs hook or auto mode");
  if (p.steps < 1 || p.steps > 1000)
    throw Error(ErrorKind::InvalidArgument, "steps must be between 1 and 1000, got " + std::to_string(p.steps));
  if (!std::isfinite(p.cfg_scale) || p.cfg_scale < 0 || p.cfg_scale > 100)
    throw Error(ErrorKind::InvalidArgument, "CFG scale must be between 0 and 100, got " + formatNumber(p.cfg_scale));
  const bool native = p.width == 0 && p.height == 0;
  if (!native && (p.width < 8 || p.height < 8 || p.width > 8192 || p.height > 8192))
    throw Error(ErrorKind::InvalidArgument,
                "width and height must be between 8 and 8192 pixels (or both 0 for the "
                "model's native size), got " +
                    std::to_string(p.width) + "x" + std::to_string(p.height));
  if (p.original_width < 0 || p.original_height < 0 || p.crop_top < 0 || p.crop_left < 0)
    throw Error(ErrorKind::InvalidArgument, "original size and crop offsets cannot be negative");
  if (p.dtype == ComputeDType::Invalid) throw Error(ErrorKind::InvalidArgument, "no compute dtype set");
  if (job.batch < 1 || job.batch > 1000)
    throw Error(ErrorKind::InvalidArgument, "a batch has 1 to 1000 images, got " + std::to_string(job.batch));
}

JobResult runJob(const Job& job, RunEnvironment& env, int* failed_stage) {
  validateJob(job);
  RenderParams p = job.params;
  at::set_num_threads(p.threads > 0 ? p.threads
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  if (p.model_path.empty()) p.model_path = starterModelPath();
  const at::ScalarType dtype = p.dtype == ComputeDType::BFloat16 ? at::kBFloat16 : at::kFloat;
  memory::CpuDevice cpu;
  memory::Device& device = env.device ? *env.device : cpu;
  const std::string cache_key = modelKey(p.model_path, dtype);
  const bool cached = env.cache && env.cache->contains(cache_key);
  std::optional<models::Checkpoint> checkpoint;
  core::checkInterrupt();
  if (!cached) checkpoint = models::openCheckpoint(p.model_path);
  core::checkInterrupt();
  // A cached model's spec without taking it: the plan comes before the lease.
  memory::ModelCache::Lease lease;
  if (cached) lease = env.cache->acquire(cache_key, [] { return std::shared_ptr<memory::CachedModel>(); });
  const auto* held = lease ? &static_cast<PipelineModel&>(lease.model()).pipeline() : nullptr;
  const models::SdModelSpec spec = held ? held->spec() : checkpoint->spec;
  const std::string model_name = held ? held->checkpoint().display_name : checkpoint->display_name;

  JobResult result;
  result.model_family = models::familyName(spec.family);
  if (p.width == 0 && p.height == 0) {
    p.width = spec.native_width > 0 ? spec.native_width : 512;
    p.height = spec.native_height > 0 ? spec.native_height : 512;
  }
  const int64_t f = spec.vae.downscale();
  if (p.width % f != 0 || p.height % f != 0) {
    const int w = static_cast<int>(std::max<int64_t>(f, p.width / f * f));
    const int h = static_cast<int>(std::max<int64_t>(f, p.height / f * f));
    result.notices.push_back("size " + std::to_string(p.width) + "x" + std::to_string(p.height) +
                             " is not a multiple of " + std::to_string(f) + "; rendering " +
                             std::to_string(w) + "x" + std::to_string(h) + " instead");
    p.width = w;
    p.height = h;
  }

  // The plan: every stage with its unit and (where known) its size, before any runs.
  ProgressTracker tracker(env, {StageKind::Invalid, result.model_family,
                                static_cast<int64_t>(p.width) * p.height,
                                dtype == at::kBFloat16 ? "bf16" : "fp32"});
  const bool save = !job.output_path.empty();
  const int load = cached ? -1
                         : tracker.add(StageKind::LoadModel, "Loading model", "tensors", 0, -1,
                                          static_cast<int64_t>(checkpoint->index.entries().size()));
  const auto encoders = static_cast<int64_t>(spec.text_encoders.size());
  const int encode = tracker.add(StageKind::EncodePrompt, "Encoding prompt", "encoders", encoders, -1, encoders);
  std::vector<int> denoise, decode, store;
  for (int i = 0; i < job.batch; ++i) {
    const std::string of = job.batch > 1 ? " image " + std::to_string(i + 1) + " of " + std::to_string(job.batch) : "";
    denoise.push_back(tracker.add(StageKind::Denoise, "Denoising" + of, "steps", p.steps, i, p.steps));
    decode.push_back(tracker.add(StageKind::Decode, "Decoding" + of, "tiles", 1, i, 1));
    if (save) store.push_back(tracker.add(StageKind::Save, "Saving" + of, "files", 1, i, 1));
  }
  tracker.plan();
  for (const auto& n : result.notices) env.emit(logEvent(n));

  JobBytes bytes(env.job_bytes);
  try {
    std::shared_ptr<PipelineModel> uncached;
    if (!cached) {
      const auto loadPipeline = [&] {
        tracker.start(load);
        auto loaded = std::make_unique<nodes::SdPipeline>(
            std::move(*checkpoint), dtype, [&](std::size_t done, std::size_t total) {
              tracker.progress(load, static_cast<int64_t>(done), static_cast<int64_t>(total));
            });
        checkpoint.reset();
        tracker.finish(load);
        return std::make_shared<PipelineModel>(std::move(loaded), device);
      };
      if (env.cache) lease = env.cache->acquire(cache_key, loadPipeline);
      else uncached = loadPipeline();
    }
    PipelineModel& model = uncached ? *uncached : static_cast<PipelineModel&>(lease.model());
    nodes::SdPipeline* pipeline = &model.pipeline();
    model.applyLoras(p.loras, p.lora_mode, env.offload);
    for (const LoraReport& r : model.loraReports()) result.notices.push_back("LoRA: " + r.describe());
    if (device.isAccelerator()) {
      // Room on the device for the weights that are not there yet and for the work.
      const int64_t working = estimateWorkingBytes(spec, p.width, p.height, dtype);
      int64_t available = 0;
      if (env.cache) {
        const memory::MakeRoomResult room = env.cache->makeRoom(model.deviceBytesNeeded(env.offload), working);
        for (const auto& w : room.warnings) env.emit(logEvent(w));
        for (const auto& m : room.offloaded) env.emit(logEvent("moved " + m + " off " + device.name() + " to make room"));
        available = room.available_bytes;
      } else {
        available = device.memory().free_bytes;
      }
      // Balanced mode keeps resident what fits beside the work.
      for (const auto& line : model.place(env.offload, std::max<int64_t>(available - working, 0)))
        env.emit(logEvent(line));
    }
    memory::DeviceScope on_device(device);

    tracker.start(encode);
    const nodes::Conditioning cond = pipeline->encodePrompts(p.prompt, p.negative_prompt);
    bytes.add(static_cast<int64_t>(cond.context.nbytes()));
    tracker.progress(encode, encoders, encoders);
    tracker.finish(encode);

    const int64_t channels = spec.unet.in_channels;
    const nodes::SizeConditioning sizes{p.original_height > 0 ? p.original_height : p.height,
                                        p.original_width > 0 ? p.original_width : p.width,
                                        p.crop_top,
                                        p.crop_left,
                                        p.height,
                                        p.width};
    for (int i = 0; i < job.batch; ++i) {
      RenderParams pi = p;
      pi.seed = p.seed + i;
      const at::Tensor noise = nodes::seededNoise(pi.seed, {1, channels, p.height / f, p.width / f});
      tracker.start(denoise[static_cast<std::size_t>(i)]);
      model.setLoraProgress(0.0);  // keyframed LoRA strengths follow the steps
      const at::Tensor latent = pipeline->sample(
          cond, noise, p.steps, p.cfg_scale, sizes, [&](const sampling::StepInfo& s) {
            model.setLoraProgress(static_cast<double>(s.step + 1) / static_cast<double>(s.total));
            tracker.progress(denoise[static_cast<std::size_t>(i)], s.step + 1, s.total);
            if (job.previews) {
              Event e;
              e.type = EventType::Preview;
              e.stage = denoise[static_cast<std::size_t>(i)];
              e.done = s.step + 1;
              e.total = s.total;
              e.image = imageFromRgb(pipeline->previewRgb(*s.denoised));
              env.emit(std::move(e));
            }
          });
      bytes.add(static_cast<int64_t>(latent.nbytes()));
      tracker.finish(denoise[static_cast<std::size_t>(i)]);

      tracker.start(decode[static_cast<std::size_t>(i)]);
      Image image = toImage(pipeline->decode(latent));
      bytes.add(static_cast<int64_t>(image.pixels.size() * sizeof(float)));
      image.text["parameters"] = formatA1111Parameters(pi, "Euler", model_name);
      tracker.progress(decode[static_cast<std::size_t>(i)], 1, 1);
      tracker.finish(decode[static_cast<std::size_t>(i)]);

      if (save) {
        const std::string path = outputPathFor(job.output_path, i);
        tracker.start(store[static_cast<std::size_t>(i)]);
        saveImage(path, image, env);
        tracker.progress(store[static_cast<std::size_t>(i)], 1, 1);
        tracker.finish(store[static_cast<std::size_t>(i)]);
        result.paths.push_back(path);
      }
      result.images.push_back(std::move(image));
      if (env.skip && env.skip->load() && i + 1 < job.batch) {
        tracker.drop(denoise[static_cast<std::size_t>(i + 1)]);
        env.emit(logEvent("skipped the batch's remaining " + std::to_string(job.batch - i - 1) + " image(s)"));
        break;
      }
    }
  } catch (...) {
    if (failed_stage) *failed_stage = tracker.current();
    throw;
  }
  return result;
}

[[noreturn]] void rethrowAsError() {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::OutOfMemory, "out of memory while rendering; try a smaller size or bf16 compute");
  } catch (const c10::Error& e) {
    // libtorch reports allocation failures as c10::Error; everything else is a bug.
    const std::string what = e.what_without_backtrace();
    if (what.find("alloc") != std::string::npos || what.find("out of memory") != std::string::npos)
      throw Error(ErrorKind::OutOfMemory, "out of memory while rendering: " + what);
    throw Error(ErrorKind::Internal, "internal error while rendering: " + what);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, std::string("internal error while rendering: ") + e.what());
  }
}

}  // namespace kiln::jobs
