#include "jobs/job_runner.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/atomic_file.h"
#include "core/interrupt.h"
#include "jobs/model_loading.h"
#include "jobs/progress_tracker.h"
#include "jobs/stage_timings.h"
#include "jobs/vae_stage.h"
#include "jobs/video_job.h"
#include "kiln/render_workflow.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "pipelines/common/image_prep.h"
#include "pipelines/sd/sd_pipeline.h"
#include "pipelines/wan/wan_pipeline.h"

namespace kiln::jobs {

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

namespace {

// [1, 3, H, W] in [-1, 1] -> interleaved RGB in [0, 1].
Image toImage(const at::Tensor& decoded) {
  return imageFromRgb((decoded[0] / 2 + 0.5).clamp(0, 1).permute({1, 2, 0}));
}

// "out.png" for the first image, "out-2.png", "out-3.png" ... for the others.
std::string outputPathFor(const std::string& path, int image) {
  if (image == 0) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() /
          (p.stem().string() + "-" + std::to_string(image + 1) + p.extension().string()))
      .string();
}

}  // namespace

void saveImage(const std::string& path, const Image& image, const RunEnvironment& env) {
  core::checkInterrupt();
  core::AtomicFile file(path);
  env.write_image(file.temporaryPath(), image);
  core::checkInterrupt();
  file.commit();
}

std::string saveNewImage(const std::string& dir, const std::string& prefix, int& number,
                         const Image& image, const RunEnvironment& env) {
  const auto nameFor = [&](int n) {
    char name[32];
    std::snprintf(name, sizeof name, "-%05d.png", n);
    return (std::filesystem::path(dir) / (prefix + name)).string();
  };
  const auto nextFree = [&] {
    std::string path;
    do path = nameFor(number++);
    while (std::filesystem::exists(path));
    return path;
  };
  core::checkInterrupt();
  core::AtomicFile file(nextFree());
  env.write_image(file.temporaryPath(), image);
  core::checkInterrupt();
  while (!file.commitIfAbsent()) file.retarget(nextFree());  // taken since: the next one
  return file.finalPath();
}

void placeModel(LoadedModel& model, RunEnvironment& env, memory::Device& device,
                int64_t working_bytes) {
  if (!device.isAccelerator()) return;
  // The working reserve is kept free beside the weights where the device has room for it.
  int64_t reserve = env.offload.working_reserve_bytes;
  int64_t available = 0;
  const int64_t needed = model.deviceBytesNeeded(env.offload);
  if (env.cache && needed + working_bytes + reserve == 0) {
    available = env.cache->availableDeviceBytes();  // placed already, no work to make room for
  } else if (env.cache) {
    memory::MakeRoomResult room;
    try {
      room = env.cache->makeRoom(needed, working_bytes + reserve);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::OutOfMemory || reserve == 0) throw;
      env.emit(logEvent("the working reserve of " + formatBytes(reserve) + " does not fit beside " +
                        model.describe() + " on " + device.name() + "; placing without it"));
      reserve = 0;
      room = env.cache->makeRoom(needed, working_bytes);
    }
    for (const auto& w : room.warnings) env.emit(logEvent(w));
    for (const auto& m : room.offloaded)
      env.emit(logEvent("moved " + m + " off " + device.name() + " to make room"));
    available = room.available_bytes;
  } else {
    available = device.memory().free_bytes;
  }
  // Balanced mode keeps resident what fits beside the work and the reserve.
  // Each line as it happens: a component's before its pin step, which may take long.
  (void)model.place(env.offload, std::max<int64_t>(available - working_bytes - reserve, 0),
                    [&](const std::string& line) { env.emit(logEvent(line)); });
}

Event logEvent(std::string message) {
  Event e;
  e.type = EventType::Log;
  e.message = std::move(message);
  return e;
}

bool hasImage(const Image& image) {
  return image.width != 0 || image.height != 0 || image.channels != 0 || !image.pixels.empty();
}

void validateJob(const Job& job) {
  const RenderParams& p = job.params;
  if (p.lora_mode == LoraMode::Invalid) throw Error(ErrorKind::InvalidArgument, "no LoRA mode set");
  if (p.lora_mode == LoraMode::Merge)
    for (const auto& l : p.loras)
      if (!l.keyframes.empty())
        throw Error(
            ErrorKind::InvalidArgument,
            "LoRA '" + l.path + "' changes strength over the steps, which needs hook or auto mode");
  if (p.steps < 1 || p.steps > 1000)
    throw Error(ErrorKind::InvalidArgument,
                "steps must be between 1 and 1000, got " + std::to_string(p.steps));
  if (p.frames < 0 || p.frames > 1025)
    throw Error(ErrorKind::InvalidArgument,
                "frames must be between 1 and 1025 (0: the model's default), got " +
                    std::to_string(p.frames));
  if (!std::isfinite(p.cfg_scale) || p.cfg_scale < 0 || p.cfg_scale > 100)
    throw Error(ErrorKind::InvalidArgument,
                "CFG scale must be between 0 and 100, got " + formatNumber(p.cfg_scale));
  const bool native = p.width == 0 && p.height == 0;
  if (!native && (p.width < 8 || p.height < 8 || p.width > 8192 || p.height > 8192))
    throw Error(ErrorKind::InvalidArgument,
                "width and height must be between 8 and 8192 pixels (or both 0 for the "
                "model's native size), got " +
                    std::to_string(p.width) + "x" + std::to_string(p.height));
  if (p.original_width < 0 || p.original_height < 0 || p.crop_top < 0 || p.crop_left < 0)
    throw Error(ErrorKind::InvalidArgument, "original size and crop offsets cannot be negative");
  if (p.dtype == ComputeDType::Invalid)
    throw Error(ErrorKind::InvalidArgument, "no compute dtype set");
  (void)sampling::parseSampler(p.sampler);  // an unknown name throws, naming the ones Kiln has
  (void)sampling::parseSchedule(p.scheduler);
  pipelines::validateTiling(vaeTilingSettings(p));
  if (!std::isfinite(p.denoise) || p.denoise <= 0 || p.denoise > 1)
    throw Error(ErrorKind::InvalidArgument,
                "denoise must be more than 0 and at most 1, got " + formatNumber(p.denoise));
  const bool init = hasImage(p.init_image), mask = hasImage(p.mask);
  if (init) pipelines::checkImage(p.init_image, "the init image");
  if (mask && !init)
    throw Error(ErrorKind::InvalidArgument,
                "a mask needs an init image: inpainting repaints part of a picture");
  if (mask) {
    pipelines::checkImage(p.mask, "the mask");
    if (p.mask.width != p.init_image.width || p.mask.height != p.init_image.height)
      throw Error(ErrorKind::InvalidArgument,
                  "the mask is " + std::to_string(p.mask.width) + "x" +
                      std::to_string(p.mask.height) + " pixels but the init image is " +
                      std::to_string(p.init_image.width) + "x" +
                      std::to_string(p.init_image.height) + "; they must be the same size");
  }
  if (p.mask_feather < 0 || p.mask_feather > 256)
    throw Error(
        ErrorKind::InvalidArgument,
        "the mask feather must be between 0 and 256 pixels, got " + std::to_string(p.mask_feather));
  if (job.batch < 1 || job.batch > 1000)
    throw Error(ErrorKind::InvalidArgument,
                "a batch has 1 to 1000 images, got " + std::to_string(job.batch));
}

std::string drawingWorkflow(const RenderParams& asked, const RenderParams& image) {
  RenderParams w = image;
  w.model_path = asked.model_path;  // the starter model stays "the starter model"
  try {
    return workflowToJson(renderWorkflow(w));
  } catch (const Error&) {
    return {};
  }
}

JobResult runJob(const Job& job, RunEnvironment& env, int* failed_stage) {
  validateJob(job);
  RenderParams p = job.params;
  at::set_num_threads(p.threads > 0
                          ? p.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  if (p.model_path.empty()) p.model_path = starterModelPath();
  if (pipelines::familyOf(p.model_path).video) {
    Job video = job;
    video.params.model_path = p.model_path;
    return runVideoJob(video, env, failed_stage);
  }
  if (p.frames > 1)
    throw Error(ErrorKind::InvalidArgument,
                "'" + p.model_path + "' is an image model; " + std::to_string(p.frames) +
                    " frames need a video model (Wan 2.1 text-to-video)");
  memory::CpuDevice cpu;
  memory::Device& device = env.device ? *env.device : cpu;
  const at::ScalarType dtype = computeScalarType(p.dtype, device);
  checkComputeDtype(dtype, device);
  const std::string cache_key = modelKey(p.model_path, dtype);
  const bool cached = env.cache && env.cache->contains(cache_key);
  std::optional<models::Checkpoint> checkpoint;
  core::checkInterrupt();
  if (!cached) checkpoint = models::openCheckpoint(p.model_path);
  core::checkInterrupt();
  // A cached model's spec without taking it: the plan comes before the lease.
  memory::ModelCache::Lease lease;
  if (cached)
    lease = env.cache->acquire(cache_key, [] { return std::shared_ptr<memory::CachedModel>(); });
  const auto* held =
      lease ? &static_cast<LoadedModel&>(lease.model()).as<pipelines::SdPipeline>() : nullptr;
  const models::SdModelSpec spec = held ? held->spec() : checkpoint->spec;
  const std::string model_name = held ? held->checkpoint().display_name : checkpoint->display_name;

  JobResult result;
  result.model_family = models::familyName(spec.family);
  const bool has_init = hasImage(p.init_image), has_mask = hasImage(p.mask);
  if (has_init && p.width == 0 && p.height == 0) {
    p.width = p.init_image.width;
    p.height = p.init_image.height;
  }
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

  // Image-to-image runs the last floor(steps * denoise) steps of the schedule.
  const int64_t steps_run =
      has_init
          ? std::min<int64_t>(p.steps, static_cast<int64_t>(std::floor(p.steps * p.denoise + 1e-9)))
          : p.steps;
  if (steps_run < 1)
    throw Error(ErrorKind::InvalidArgument,
                "denoise " + formatNumber(p.denoise) + " of " + std::to_string(p.steps) +
                    " steps runs no step; raise the denoise strength or the steps");
  if (!has_init && p.denoise != 1.0)
    result.notices.push_back("denoise " + formatNumber(p.denoise) +
                             " applies to image-to-image only; ignored");
  const pipelines::VaeTilingSettings tiling = vaeTilingSettings(p);
  const auto vaePlan = [&](pipelines::VaeWork work) {
    return pipelines::planVae(work, tiling, spec.vae, p.height, p.width,
                              pipelines::vaeComputeDtype(dtype), availableWorkBytes(device));
  };
  const auto tilePixels = [](const pipelines::VaePlan& plan) {
    return plan.tiled ? plan.tile_pixels * plan.tile_pixels : 0;
  };

  // The plan: every stage with its unit and (where known) its size, before any runs.
  ProgressTracker tracker(env, {StageKind::Invalid, result.model_family,
                                static_cast<int64_t>(p.width) * p.height, computeDtypeName(dtype)});
  const bool save = !job.output_path.empty();
  const int load = cached ? -1
                          : tracker.add(StageKind::LoadModel, "Loading model", "bytes", 0, -1,
                                        static_cast<int64_t>(checkpoint->index.entries().size()));
  const auto encoders = static_cast<int64_t>(spec.text_encoders.size());
  const int encode =
      tracker.add(StageKind::EncodePrompt, "Encoding prompt", "encoders", encoders, -1, encoders);
  int encode_image = -1;
  if (has_init) {
    const pipelines::VaePlan plan = vaePlan(pipelines::VaeWork::Encode);
    encode_image = tracker.add(StageKind::EncodeImage, "Encoding image", "tile passes",
                               plan.units(), -1, plan.units(), tilePixels(plan));
  }
  const pipelines::VaePlan decode_plan = vaePlan(pipelines::VaeWork::Decode);
  std::vector<int> denoise, decode, store;
  for (int i = 0; i < job.batch; ++i) {
    const std::string of =
        job.batch > 1 ? " image " + std::to_string(i + 1) + " of " + std::to_string(job.batch) : "";
    denoise.push_back(
        tracker.add(StageKind::Denoise, "Denoising" + of, "steps", steps_run, i, steps_run));
    decode.push_back(tracker.add(StageKind::Decode, "Decoding" + of, "tile passes",
                                 decode_plan.units(), i, decode_plan.units(),
                                 tilePixels(decode_plan)));
    if (save) store.push_back(tracker.add(StageKind::Save, "Saving" + of, "files", 1, i, 1));
  }
  tracker.plan();
  for (const auto& n : result.notices) env.emit(logEvent(n));

  JobBytes bytes(env.job_bytes);
  try {
    std::shared_ptr<LoadedModel> uncached;
    if (!cached) {
      const auto loadPipeline = [&] {
        tracker.start(load);
        auto loaded = std::make_unique<pipelines::SdPipeline>(
            std::move(*checkpoint), dtype, [&](std::size_t done, std::size_t total) {
              tracker.progress(load, static_cast<int64_t>(done), static_cast<int64_t>(total));
            });
        checkpoint.reset();
        tracker.finish(load);
        return std::make_shared<LoadedModel>(std::move(loaded), device);
      };
      if (env.cache)
        lease = env.cache->acquire(cache_key, loadPipeline);
      else
        uncached = loadPipeline();
    }
    LoadedModel& model = uncached ? *uncached : static_cast<LoadedModel&>(lease.model());
    pipelines::SdPipeline* pipeline = &model.as<pipelines::SdPipeline>();
    model.applyLoras(p.loras, p.lora_mode, env.offload);
    for (const LoraReport& r : model.loraReports())
      result.notices.push_back("LoRA: " + r.describe());
    if (device.isAccelerator()) {
      // The stages run one after the other: room for the largest.
      const pipelines::VaeCodec codec = pipeline->codec();
      const int64_t f = spec.vae.downscale();
      int64_t working = std::max({pipeline->encodingWorkingBytes(),
                                  pipeline->samplingWorkingBytes(p.height / f, p.width / f),
                                  vaeStageWorkingBytes(pipelines::VaeWork::Decode, codec, tiling,
                                                       p.height, p.width, device)});
      if (has_init)
        working = std::max(working, vaeStageWorkingBytes(pipelines::VaeWork::Encode, codec, tiling,
                                                         p.height, p.width, device));
      placeModel(model, env, device, working);
    }
    memory::DeviceScope on_device(device);

    tracker.start(encode);
    pipelines::Conditioning cond;
    {
      std::vector<std::string> dirs = p.embedding_dirs;
      dirs.insert(dirs.end(), env.embedding_dirs.begin(), env.embedding_dirs.end());
      const models::EmbeddingLibrary embeddings(dirs);
      const pipelines::TextEncoding positive = pipeline->encodeWeighted(p.prompt, 1, &embeddings);
      const pipelines::TextEncoding negative =
          pipeline->encodeWeighted(p.negative_prompt, 1, &embeddings);
      if (!at::isfinite(positive.context).all().item<bool>() ||
          !at::isfinite(negative.context).all().item<bool>())
        throw Error(ErrorKind::NonFinite,
                    "the text encoder produced NaN or infinity (encoding the prompt); "
                    "the checkpoint's text encoder weights are probably damaged");
      cond.context = pipelines::batchContexts(negative.context, positive.context);
      if (positive.pooled.defined()) cond.pooled = at::cat({negative.pooled, positive.pooled}, 0);
    }
    bytes.add(static_cast<int64_t>(cond.context.nbytes()));
    tracker.progress(encode, encoders, encoders);
    tracker.finish(encode);

    // Image-to-image: the picture fitted to the canvas, encoded; inpainting: its mask.
    sampling::LatentInit init;
    at::Tensor init_rgb, pixel_mask;
    if (has_init) {
      tracker.start(encode_image);
      bool cropped = false;
      const at::Tensor picture = pipelines::fitImage(
          pipelines::rgbOf(pipelines::imageTensor(p.init_image)), p.height, p.width, &cropped);
      if (p.init_image.width != p.width || p.init_image.height != p.height)
        result.notices.push_back("the init image (" + std::to_string(p.init_image.width) + "x" +
                                 std::to_string(p.init_image.height) + ") was " +
                                 (cropped ? "scaled and centre-cropped" : "scaled") + " to " +
                                 std::to_string(p.width) + "x" + std::to_string(p.height));
      init_rgb = picture * 2 - 1;
      init.latent = runVaeStage(pipelines::VaeWork::Encode, *pipeline, init_rgb,
                                {tracker, encode_image, env, device, tiling, {}});
      init.start_step = p.steps - steps_run;
      if (has_mask) {
        pixel_mask = pipelines::featherMask(
            pipelines::fitImage(pipelines::maskTensor(p.mask), p.height, p.width), p.mask_feather);
        init.mask = pipelines::latentMask(pixel_mask, f);
      }
      bytes.add(static_cast<int64_t>(init_rgb.nbytes() + init.latent.nbytes()));
      tracker.finish(encode_image);
    }

    const int64_t channels = spec.unet.in_channels;
    const sampling::SamplerKind sampler_kind = sampling::parseSampler(p.sampler);
    const sampling::Schedule schedule = sampling::parseSchedule(p.scheduler);
    const pipelines::SizeConditioning sizes{p.original_height > 0 ? p.original_height : p.height,
                                            p.original_width > 0 ? p.original_width : p.width,
                                            p.crop_top,
                                            p.crop_left,
                                            p.height,
                                            p.width,
                                            p.aesthetic_score,
                                            p.negative_aesthetic_score};
    for (int i = 0; i < job.batch; ++i) {
      RenderParams pi = p;
      pi.seed = p.seed + i;
      pipelines::SeededNoise seeded =
          pipelines::seededNoiseSource(pi.seed, {1, channels, p.height / f, p.width / f});
      const at::Tensor noise = seeded.initial;
      pipelines::SamplerSettings settings;
      settings.sampler = sampler_kind;
      settings.schedule = schedule;
      settings.noise = std::move(seeded.more);
      tracker.start(denoise[static_cast<std::size_t>(i)]);
      model.setLoraProgress(0.0);  // keyframed LoRA strengths follow the steps
      const at::Tensor latent = pipeline->sample(
          cond, noise, p.steps, p.cfg_scale, sizes,
          [&](const sampling::StepInfo& s) {
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
          },
          has_init ? &init : nullptr, settings);
      bytes.add(static_cast<int64_t>(latent.nbytes()));
      tracker.finish(denoise[static_cast<std::size_t>(i)]);

      tracker.start(decode[static_cast<std::size_t>(i)]);
      at::Tensor decoded =
          runVaeStage(pipelines::VaeWork::Decode, *pipeline, latent,
                      {tracker, decode[static_cast<std::size_t>(i)], env, device, tiling, {}});
      // Outside the mask the picture stays exactly as it was.
      if (pixel_mask.defined()) decoded = init_rgb + (decoded - init_rgb) * pixel_mask;
      Image image = toImage(decoded);
      bytes.add(static_cast<int64_t>(image.pixels.size() * sizeof(float)));
      image.text["parameters"] =
          formatA1111Parameters(pi, sampling::a1111SamplerName(sampler_kind, schedule), model_name);
      if (std::string workflow = drawingWorkflow(job.params, pi); !workflow.empty())
        image.text["kiln_workflow"] = std::move(workflow);
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
        env.emit(logEvent("skipped the batch's remaining " + std::to_string(job.batch - i - 1) +
                          " image(s)"));
        break;
      }
    }
  } catch (...) {
    if (failed_stage) *failed_stage = tracker.current();
    throw;
  }
  return result;
}

namespace {

bool isAllocationMessage(const std::string& what) {
  return what.find("alloc") != std::string::npos || what.find("out of memory") != std::string::npos;
}

}  // namespace

bool isOutOfMemory(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return e.kind() == ErrorKind::OutOfMemory;
  } catch (const std::bad_alloc&) {
    return true;
  } catch (const c10::OutOfMemoryError&) {
    return true;
  } catch (const c10::Error& e) {
    return isAllocationMessage(e.what_without_backtrace());
  } catch (...) {
    return false;
  }
}

[[noreturn]] void rethrowAsError() {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::OutOfMemory,
                "out of memory while rendering; try a smaller size or bf16 compute");
  } catch (const c10::Error& e) {
    // libtorch reports allocation failures as c10::Error; everything else is a bug.
    const std::string what = e.what_without_backtrace();
    if (isAllocationMessage(what))
      throw Error(ErrorKind::OutOfMemory, "out of memory while rendering: " + what);
    throw Error(ErrorKind::Internal, "internal error while rendering: " + what);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, std::string("internal error while rendering: ") + e.what());
  }
}

}  // namespace kiln::jobs
