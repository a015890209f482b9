// A render job: its settings resolved against the model (size, grid, steps), then drawn as
// its template workflow by the workflow runner, one picture of the batch after another.
#include <algorithm>
#include <cmath>

#include "core/interrupt.h"
#include "graph/result_cache.h"
#include "jobs/render_graph.h"
#include "jobs/render_job.h"
#include "jobs/workflow_runner.h"
#include "kiln/render_workflow.h"
#include "kiln/units.h"
#include "kiln/video_io.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "nodes/model_loading.h"
#include "nodes/vae_stage.h"
#include "pipelines/common/image_prep.h"
#include "pipelines/registry.h"
#include "sampling/flow_match.h"
#include "sampling/sampler_names.h"

namespace kiln::jobs {
namespace {

// What the image model at `path` is: the cached model's, else its files'.
pipelines::ModelInfo modelInfo(const pipelines::Family& family, const std::string& path,
                               const std::string& key, const RunEnvironment& env) {
  if (env.cache && env.cache->contains(key)) {
    const memory::ModelCache::Lease lease =
        env.cache->acquire(key, [] { return std::shared_ptr<memory::CachedModel>(); });
    const auto& pipe = static_cast<LoadedModel&>(lease.model()).as<pipelines::Pipeline>();
    return {pipe.kindName(), pipe.nativeSize(), pipe.latentFormat().side_multiple};
  }
  return family.inspect(path);
}

// The size to draw: the asked one, else the init image's, else the model's native size,
// snapped down to the model's grid (saying so in `notices`).
void resolveSize(RenderParams& p, const pipelines::ModelInfo& model,
                 std::vector<std::string>& notices) {
  if (hasImage(p.init.image) && p.size.width == 0 && p.size.height == 0) {
    p.size.width = p.init.image.width;
    p.size.height = p.init.image.height;
  }
  if (p.size.width == 0 && p.size.height == 0) {
    p.size.width = static_cast<int>(model.native.width);
    p.size.height = static_cast<int>(model.native.height);
  }
  const int64_t f = model.side_multiple;
  if (f > 1 && (p.size.width % f != 0 || p.size.height % f != 0)) {
    const int w = static_cast<int>(std::max<int64_t>(f, p.size.width / f * f));
    const int h = static_cast<int>(std::max<int64_t>(f, p.size.height / f * f));
    notices.push_back("size " + std::to_string(p.size.width) + "x" + std::to_string(p.size.height) +
                      " is not a multiple of " + std::to_string(f) + "; rendering " +
                      std::to_string(w) + "x" + std::to_string(h) + " instead");
    p.size.width = w;
    p.size.height = h;
  }
}

// Image-to-image runs the last floor(steps * denoise) steps: at least one.
void checkSteps(const RenderParams& p, std::vector<std::string>& notices) {
  if (!hasImage(p.init.image)) {
    if (p.init.denoise != 1.0)
      notices.push_back("denoise " + formatNumber(p.init.denoise) +
                        " applies to image-to-image only; ignored");
    return;
  }
  if (std::floor(p.sampling.steps * p.init.denoise + 1e-9) < 1)
    throw Error(ErrorKind::InvalidArgument,
                "denoise " + formatNumber(p.init.denoise) + " of " +
                    std::to_string(p.sampling.steps) +
                    " steps runs no step; raise the denoise strength or the steps");
}

const NodeLibrary& nodeLibrary() {
  static const NodeLibrary library = builtinNodes();
  return library;
}

// A video model's settings, checked, with the frames and size it draws when none are
// asked (the model snaps them to its grid, saying so).
void resolveVideo(const Job& job, RenderParams& p, const pipelines::NativeSize& native) {
  if (hasImage(p.init.image) || hasImage(p.init.mask))
    throw Error(ErrorKind::InvalidArgument,
                "video models render from text only here (no init image or mask)");
  if (job.batch != 1)
    throw Error(ErrorKind::InvalidArgument, "video models render one video per job");
  if (!(p.video.fps > 0.0) || p.video.fps > 240.0)
    throw Error(ErrorKind::InvalidArgument,
                "the frame rate must be above 0 and at most 240, not " + formatNumber(p.video.fps));
  if (p.sampling.flow_shift < 0.0)
    throw Error(ErrorKind::InvalidArgument, "the flow shift must be positive (0: the model's)");
  (void)sampling::flowSolverNamed(p.sampling.sampler);  // names the ones video models have
  const std::string& out = job.output_path;
  const bool image_out = !out.empty() && videoFormatFor(out) == VideoFormat::Invalid;
  if (p.video.frames == 0) p.video.frames = image_out ? 1 : static_cast<int>(native.frames);
  if (image_out && p.video.frames > 1)
    throw Error(ErrorKind::InvalidArgument,
                std::to_string(p.video.frames) +
                    " frames need a video file (.mp4, .webm, .mov) or a folder for PNG frames (a "
                    "name ending in '/'), not '" +
                    out + "'");
  if (p.size.width == 0 && p.size.height == 0) {
    p.size.width = static_cast<int>(native.width);
    p.size.height = static_cast<int>(native.height);
  }
}

// Runs a render's graph with the job's embeddings folders first, then the engine's.
JobResult runRenderGraph(const Job& job, RenderGraph& graph, const RenderParams& p,
                         RunEnvironment& env, int* failed_stage) {
  graph.layout.threads = p.model.threads;
  const NodeLibrary& library = nodeLibrary();
  if (const std::vector<WorkflowProblem> problems =
          validateWorkflow(graph.workflow, library.schemas());
      !problems.empty())
    throw Error(ErrorKind::InvalidArgument,
                "these render settings cannot be drawn:\n" + describeProblems(problems));
  RunEnvironment render_env = env;
  render_env.embedding_dirs = p.prompt.embedding_dirs;
  render_env.embedding_dirs.insert(render_env.embedding_dirs.end(), env.embedding_dirs.begin(),
                                   env.embedding_dirs.end());
  graph::ResultCache nodes(0);  // a render shares its nodes' results within the job only
  return runGraph(job, graph.workflow, render_env, library, nodes, graph.layout, failed_stage);
}

}  // namespace

void validateJob(const Job& job) {
  const RenderParams& p = job.params;
  if (p.model.lora_mode == LoraMode::Invalid)
    throw Error(ErrorKind::InvalidArgument, "no LoRA mode set");
  if (p.model.lora_mode == LoraMode::Merge)
    for (const auto& l : p.model.loras)
      if (!l.keyframes.empty())
        throw Error(
            ErrorKind::InvalidArgument,
            "LoRA '" + l.path + "' changes strength over the steps, which needs hook or auto mode");
  if (p.sampling.seed < 0)
    throw Error(ErrorKind::InvalidArgument,
                "the seed must be 0 or more, got " + std::to_string(p.sampling.seed));
  if (p.sampling.steps < 1 || p.sampling.steps > 1000)
    throw Error(ErrorKind::InvalidArgument,
                "steps must be between 1 and 1000, got " + std::to_string(p.sampling.steps));
  if (p.video.frames < 0 || p.video.frames > 1025)
    throw Error(ErrorKind::InvalidArgument,
                "frames must be between 1 and 1025 (0: the model's default), got " +
                    std::to_string(p.video.frames));
  if (!std::isfinite(p.sampling.cfg_scale) || p.sampling.cfg_scale < 0 ||
      p.sampling.cfg_scale > 100)
    throw Error(ErrorKind::InvalidArgument,
                "CFG scale must be between 0 and 100, got " + formatNumber(p.sampling.cfg_scale));
  const bool native = p.size.width == 0 && p.size.height == 0;
  if (!native &&
      (p.size.width < 8 || p.size.height < 8 || p.size.width > 8192 || p.size.height > 8192))
    throw Error(ErrorKind::InvalidArgument,
                "width and height must be between 8 and 8192 pixels (or both 0 for the "
                "model's native size), got " +
                    std::to_string(p.size.width) + "x" + std::to_string(p.size.height));
  if (p.size.original_width < 0 || p.size.original_height < 0 || p.size.crop_top < 0 ||
      p.size.crop_left < 0)
    throw Error(ErrorKind::InvalidArgument, "original size and crop offsets cannot be negative");
  if (p.model.dtype == ComputeDType::Invalid)
    throw Error(ErrorKind::InvalidArgument, "no compute dtype set");
  // An unknown name throws, naming the ones Kiln has.
  (void)sampling::parseSampler(p.sampling.sampler);
  (void)sampling::parseSchedule(p.sampling.scheduler);
  tiling::validateTiling(nodes::vaeTilingSettings(p));
  if (!std::isfinite(p.init.denoise) || p.init.denoise <= 0 || p.init.denoise > 1)
    throw Error(ErrorKind::InvalidArgument,
                "denoise must be more than 0 and at most 1, got " + formatNumber(p.init.denoise));
  const bool init = hasImage(p.init.image), mask = hasImage(p.init.mask);
  if (init) pipelines::checkImage(p.init.image, "the init image");
  if (mask && !init)
    throw Error(ErrorKind::InvalidArgument,
                "a mask needs an init image: inpainting repaints part of a picture");
  if (mask) {
    pipelines::checkImage(p.init.mask, "the mask");
    if (p.init.mask.width != p.init.image.width || p.init.mask.height != p.init.image.height)
      throw Error(ErrorKind::InvalidArgument,
                  "the mask is " + std::to_string(p.init.mask.width) + "x" +
                      std::to_string(p.init.mask.height) + " pixels but the init image is " +
                      std::to_string(p.init.image.width) + "x" +
                      std::to_string(p.init.image.height) + "; they must be the same size");
  }
  if (p.init.mask_feather < 0 || p.init.mask_feather > 256)
    throw Error(ErrorKind::InvalidArgument,
                "the mask feather must be between 0 and 256 pixels, got " +
                    std::to_string(p.init.mask_feather));
  if (job.batch < 1 || job.batch > 1000)
    throw Error(ErrorKind::InvalidArgument,
                "a batch has 1 to 1000 images, got " + std::to_string(job.batch));
}

std::string drawingWorkflow(const RenderParams& asked, const RenderParams& image) {
  RenderParams w = image;
  w.model.path = asked.model.path;  // the starter model stays "the starter model"
  try {
    return workflowToJson(renderWorkflow(w));
  } catch (const Error&) {
    return {};
  }
}

JobResult runJob(const Job& job, RunEnvironment& env, int* failed_stage) {
  validateJob(job);
  RenderParams p = job.params;
  if (p.model.path.empty()) p.model.path = starterModelPath();
  memory::CpuDevice cpu;
  const memory::Device& device = env.device ? *env.device : cpu;
  const at::ScalarType dtype = computeScalarType(p.model.dtype, device);
  checkComputeDtype(dtype, device);
  const pipelines::Family& family = pipelines::familyOf(p.model.path);
  if (family.video) {
    resolveVideo(job, p, family.inspect(p.model.path).native);
    RenderGraph graph = renderVideoJobGraph(job, p);
    graph.layout.timing = {StageKind::Invalid, family.name,
                           static_cast<int64_t>(p.size.width) * p.size.height * p.video.frames,
                           computeDtypeName(dtype)};
    JobResult result = runRenderGraph(job, graph, p, env, failed_stage);
    if (result.frames.empty()) {  // a still saved as a picture
      result.frames = result.images;
      result.fps = p.video.fps;
    }
    return result;
  }
  if (p.video.frames > 1)
    throw Error(ErrorKind::InvalidArgument,
                "'" + p.model.path + "' is an image model; " + std::to_string(p.video.frames) +
                    " frames need a video model (Wan 2.1 text-to-video)");
  core::checkInterrupt();
  const pipelines::ModelInfo model =
      modelInfo(family, p.model.path, family.cacheKey({p.model.path, {}, {}, dtype, {}}), env);
  core::checkInterrupt();
  std::vector<std::string> notices;
  resolveSize(p, model, notices);
  checkSteps(p, notices);
  for (const std::string& n : notices) env.emit(logEvent(n));

  RenderGraph graph = renderJobGraph(job, p);
  graph.layout.timing = {StageKind::Invalid, model.kind,
                         static_cast<int64_t>(p.size.width) * p.size.height,
                         computeDtypeName(dtype)};
  JobResult result = runRenderGraph(job, graph, p, env, failed_stage);
  result.notices.insert(result.notices.begin(), notices.begin(), notices.end());
  return result;
}

}  // namespace kiln::jobs
