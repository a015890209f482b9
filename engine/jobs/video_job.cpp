#include "jobs/video_job.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>

#include "core/atomic_file.h"
#include "core/interrupt.h"
#include "jobs/model_loading.h"
#include "jobs/progress_tracker.h"
#include "jobs/vae_stage.h"
#include "kiln/error.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "pipelines/wan/wan_pipeline.h"

namespace kiln::jobs {
namespace {

constexpr int kDefaultFrames = 81;  // Wan 2.1's 5 seconds at 16 fps
constexpr int kDefaultWidth = 832, kDefaultHeight = 480;

// [1, 3, n, H, W] in [0, 1] -> n images.
void appendFrames(const at::Tensor& frames, std::vector<Image>& out) {
  for (int64_t i = 0; i < frames.size(2); ++i)
    out.push_back(imageFromRgb(frames[0].select(1, i).permute({1, 2, 0})));
}

}  // namespace

JobResult runVideoJob(const Job& job, RunEnvironment& env, int* failed_stage) {
  RenderParams p = job.params;
  memory::CpuDevice cpu;
  memory::Device& device = env.device ? *env.device : cpu;
  const at::ScalarType dtype = computeScalarType(p.dtype, device);
  checkComputeDtype(dtype, device);
  if (hasImage(p.init_image) || hasImage(p.mask))
    throw Error(ErrorKind::InvalidArgument,
                "video models render from text only here (no init image or mask)");
  if (job.batch != 1)
    throw Error(ErrorKind::InvalidArgument, "video models render one video per job");
  if (!(p.fps > 0.0) || p.fps > 240.0)
    throw Error(ErrorKind::InvalidArgument,
                "the frame rate must be above 0 and at most 240, not " + formatNumber(p.fps));
  if (p.flow_shift < 0.0)
    throw Error(ErrorKind::InvalidArgument, "the flow shift must be positive (0: the model's)");
  const sampling::FlowSolver solver = sampling::flowSolverNamed(p.sampler);

  const pipelines::Family& family = pipelines::familyOf(p.model_path);
  const pipelines::ModelRequest request =
      family.resolve({p.model_path, p.vae_path, p.text_encoder_path, dtype});
  const pipelines::WanModelPaths paths{
      request.path, request.vae_path, request.text_encoder_path, {}};
  const std::string cache_key = family.cacheKey(request);
  const bool cached = env.cache && env.cache->contains(cache_key);

  const std::string& out = job.output_path;
  const bool video_out = !out.empty() && videoFormatFor(out) != VideoFormat::Invalid;
  const bool image_out = !out.empty() && !video_out;
  JobResult result;
  result.model_family = family.name;
  if (p.frames < 0)
    throw Error(ErrorKind::InvalidArgument, "frames must be 1 or more (0: the model's default)");
  int64_t frames = p.frames > 0 ? p.frames : (image_out ? 1 : kDefaultFrames);
  if (image_out && frames > 1)
    throw Error(ErrorKind::InvalidArgument,
                std::to_string(frames) +
                    " frames need a video file (.mp4, .webm, .mov) or a "
                    "folder for PNG frames (a name ending in '/'), not '" +
                    out + "'");

  if (p.width == 0 && p.height == 0) {
    p.width = kDefaultWidth;
    p.height = kDefaultHeight;
  }
  // The model's grid (frames 1 + tf n, sides multiples of `grid`) from the cached model,
  // or from the files' headers and configs (the weights are read later, as a stage).
  memory::ModelCache::Lease lease;
  if (cached)
    lease = env.cache->acquire(cache_key, [] { return std::shared_ptr<memory::CachedModel>(); });
  int64_t tf = 0, grid = 0, tensors = 0;
  models::WanVaeConfig vae_config;
  if (lease) {
    const pipelines::WanPipeline& held =
        static_cast<LoadedModel&>(lease.model()).as<pipelines::WanPipeline>();
    tf = held.temporalFactor();
    grid = held.spatialMultiple();
    vae_config = held.vae().config();
  } else {
    const auto t = models::openWanTransformer(paths.transformer);
    const auto v = models::openWanVae(paths.vae);
    const auto u = models::openUmt5(paths.text_encoder);
    tf = v.config.temporalFactor();
    vae_config = v.config;
    grid = v.config.spatialFactor() * std::max(t.config.patch[1], t.config.patch[2]);
    tensors = static_cast<int64_t>(t.index.size() + v.index.size() + u.index.size());
  }
  const int64_t snapped = pipelines::snapFrames(frames, tf);
  if (snapped != frames) {
    result.notices.push_back(std::to_string(frames) +
                             " frames are not on the model's grid of 1 + " + std::to_string(tf) +
                             "n; rendering " + std::to_string(snapped));
    frames = snapped;
  }
  if (p.width % grid != 0 || p.height % grid != 0) {
    const int w = static_cast<int>(std::max<int64_t>(grid, p.width / grid * grid));
    const int h = static_cast<int>(std::max<int64_t>(grid, p.height / grid * grid));
    result.notices.push_back("size " + std::to_string(p.width) + "x" + std::to_string(p.height) +
                             " is not a multiple of " + std::to_string(grid) + "; rendering " +
                             std::to_string(w) + "x" + std::to_string(h) + " instead");
    p.width = w;
    p.height = h;
  }
  p.frames = static_cast<int>(frames);

  const int64_t latent_frames = 1 + (frames - 1) / tf;
  pipelines::WanSampleSettings settings;
  settings.steps = p.steps;
  settings.guidance = p.cfg_scale;
  settings.shift =
      p.flow_shift > 0 ? p.flow_shift : models::wanSamplingDefaults(paths.transformer).flow_shift;
  settings.solver = solver;

  // The plan: every stage with its unit and size, before any runs.
  ProgressTracker tracker(
      env, {StageKind::Invalid, family.name, static_cast<int64_t>(p.width) * p.height * frames,
            computeDtypeName(dtype)});
  const int load =
      lease ? -1
            : tracker.add(StageKind::LoadModel, "Loading model", "tensors", tensors, -1, tensors);
  const int encode = tracker.add(StageKind::EncodePrompt, "Encoding prompt", "prompts", 2, -1, 2);
  const int denoise = tracker.add(StageKind::Denoise, "Denoising", "steps", p.steps, 0, p.steps);
  // Decoding: one latent frame at a time (carrying the causal cache), in spatial tiles when
  // a whole frame's working set would not fit.
  const int64_t lh = p.height / vae_config.spatialFactor(),
                lw = p.width / vae_config.spatialFactor();
  const models::WanSpatialTiles tiles = pipelines::planVideoTiles(
      vae_config, lh, lw, 1, dtype == at::kHalf ? at::kFloat : dtype, p.vae_tiling, p.tile_size,
      p.tile_overlap, availableWorkBytes(device));
  const int64_t passes = latent_frames * pipelines::videoTileCount(lh, lw, tiles);
  if (tiles.tile > 0)
    result.notices.push_back("decoding in tiles of " +
                             std::to_string(tiles.tile * vae_config.spatialFactor()) + " pixels (" +
                             std::to_string(pipelines::videoTileCount(lh, lw, tiles)) +
                             " per frame chunk)");
  const int decode = tracker.add(StageKind::Decode, "Decoding", "tile passes", passes, 0, passes);
  const int save =
      video_out ? tracker.add(StageKind::EncodeVideo, "Encoding video", "frames", frames, 0, frames)
      : image_out ? tracker.add(StageKind::Save, "Saving", "files", 1, 0, 1)
                  : -1;
  tracker.plan();
  for (const auto& n : result.notices) env.emit(logEvent(n));

  JobBytes bytes(env.job_bytes);
  std::shared_ptr<LoadedModel> uncached;
  try {
    if (!lease) {
      const auto loadModel = [&] {
        tracker.start(load);
        auto loaded =
            jobs::loadModel(family, request, device, [&](std::size_t done, std::size_t total) {
              tracker.progress(load, static_cast<int64_t>(done), static_cast<int64_t>(total));
            });
        tracker.finish(load);
        return loaded;
      };
      if (env.cache)
        lease = env.cache->acquire(
            cache_key, [&] { return std::static_pointer_cast<memory::CachedModel>(loadModel()); });
      else
        uncached = loadModel();
    }
    LoadedModel& model = uncached ? *uncached : static_cast<LoadedModel&>(lease.model());
    const pipelines::WanPipeline& pipe = model.as<pipelines::WanPipeline>();
    for (const auto& n : pipe.notes()) env.emit(logEvent(n));
    model.applyLoras(p.loras, p.lora_mode, env.offload);  // the transformer's
    for (const LoraReport& r : model.loraReports())
      result.notices.push_back("LoRA: " + r.describe());
    if (device.isAccelerator())  // the stages run one after the other: room for the largest
      placeModel(model, env, device,
                 std::max({pipe.encodingWorkingBytes(),
                           pipe.samplingWorkingBytes(frames, p.height, p.width),
                           pipe.decodingWorkingBytes(p.height, p.width, tiles)}));
    memory::DeviceScope on_device(device);

    tracker.start(encode);
    const at::Tensor positive = pipe.encodePrompt(p.prompt);
    tracker.progress(encode, 1, 2);
    const at::Tensor negative = pipe.encodePrompt(p.negative_prompt);
    if (!at::isfinite(positive).all().item<bool>() || !at::isfinite(negative).all().item<bool>())
      throw Error(ErrorKind::NonFinite,
                  "the text encoder produced NaN or infinity (encoding the prompt); "
                  "its weights are probably damaged");
    bytes.add(static_cast<int64_t>(positive.nbytes() + negative.nbytes()));
    tracker.progress(encode, 2, 2);
    tracker.finish(encode);

    tracker.start(denoise);
    model.setLoraProgress(0.0);  // keyframed LoRA strengths follow the steps
    const at::Tensor latent = pipe.sample(
        positive, negative, frames, p.height, p.width, p.seed, settings,
        [&](const sampling::FlowStep& s) {
          model.setLoraProgress(static_cast<double>(s.step + 1) / static_cast<double>(s.total));
          tracker.progress(denoise, s.step + 1, s.total);
        });
    if (!at::isfinite(latent).all().item<bool>())
      throw Error(ErrorKind::NonFinite,
                  "denoising produced NaN or infinity; try fp32 or fewer steps");
    bytes.add(static_cast<int64_t>(latent.nbytes()));
    tracker.finish(denoise);

    tracker.start(decode);
    int64_t done = 0;
    pipe.decode(
        latent, 1,
        [&](const at::Tensor& rgb) {
          appendFrames(rgb, result.frames);
          bytes.add(static_cast<int64_t>(rgb.numel()) * static_cast<int64_t>(sizeof(float)));
        },
        tiles, [&] { tracker.progress(decode, ++done, passes); });
    tracker.finish(decode);

    const std::string sampler_name = solver == sampling::FlowSolver::UniPc ? "UniPC" : "Euler";
    // A still has no frame rate: its text is what a workflow's SaveImage writes.
    const std::string parameters = formatA1111Parameters(p, sampler_name, pipe.displayName()) +
                                   ", Frames: " + std::to_string(frames) +
                                   ", Shift: " + formatNumber(settings.shift) +
                                   (frames > 1 ? ", FPS: " + formatNumber(p.fps) : std::string());
    result.fps = p.fps;
    Image first = result.frames.front();
    first.text["parameters"] = parameters;
    if (frames == 1) {
      RenderParams still = p;
      still.frames = 1;
      if (std::string workflow = drawingWorkflow(job.params, still); !workflow.empty())
        first.text["kiln_workflow"] = std::move(workflow);
    }
    if (save >= 0) {
      tracker.start(save);
      if (video_out) {
        if (!env.write_video)
          throw Error(ErrorKind::InvalidArgument, "this engine cannot write videos");
        VideoWriteOptions options;
        options.fps = p.fps;
        options.metadata["parameters"] = parameters;
        options.metadata["comment"] = parameters;
        options.progress = [&](int done, int total) {
          tracker.progress(save, done, total);
          core::checkInterrupt();
        };
        env.write_video(out, result.frames, options);
      } else {
        saveImage(out, first, env);
        tracker.progress(save, 1, 1);
      }
      tracker.finish(save);
      result.paths.push_back(out);
    }
    result.images.push_back(std::move(first));
    if (result.frames.size() == 1) result.frames.front().text["parameters"] = parameters;
  } catch (...) {
    if (failed_stage) *failed_stage = tracker.current();
    throw;
  }
  return result;
}

}  // namespace kiln::jobs
