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
  if (hasImage(p.init_image) && p.width == 0 && p.height == 0) {
    p.width = p.init_image.width;
    p.height = p.init_image.height;
  }
  if (p.width == 0 && p.height == 0) {
    p.width = static_cast<int>(model.native.width);
    p.height = static_cast<int>(model.native.height);
  }
  const int64_t f = model.side_multiple;
  if (f > 1 && (p.width % f != 0 || p.height % f != 0)) {
    const int w = static_cast<int>(std::max<int64_t>(f, p.width / f * f));
    const int h = static_cast<int>(std::max<int64_t>(f, p.height / f * f));
    notices.push_back("size " + std::to_string(p.width) + "x" + std::to_string(p.height) +
                      " is not a multiple of " + std::to_string(f) + "; rendering " +
                      std::to_string(w) + "x" + std::to_string(h) + " instead");
    p.width = w;
    p.height = h;
  }
}

// Image-to-image runs the last floor(steps * denoise) steps: at least one.
void checkSteps(const RenderParams& p, std::vector<std::string>& notices) {
  if (!hasImage(p.init_image)) {
    if (p.denoise != 1.0)
      notices.push_back("denoise " + formatNumber(p.denoise) +
                        " applies to image-to-image only; ignored");
    return;
  }
  if (std::floor(p.steps * p.denoise + 1e-9) < 1)
    throw Error(ErrorKind::InvalidArgument,
                "denoise " + formatNumber(p.denoise) + " of " + std::to_string(p.steps) +
                    " steps runs no step; raise the denoise strength or the steps");
}

const NodeLibrary& nodeLibrary() {
  static const NodeLibrary library = builtinNodes();
  return library;
}

// A video model's settings, checked, with the frames and size it draws when none are
// asked (the model snaps them to its grid, saying so).
void resolveVideo(const Job& job, RenderParams& p, const pipelines::NativeSize& native) {
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
  (void)sampling::flowSolverNamed(p.sampler);  // names the ones video models have
  const std::string& out = job.output_path;
  const bool image_out = !out.empty() && videoFormatFor(out) == VideoFormat::Invalid;
  if (p.frames == 0) p.frames = image_out ? 1 : static_cast<int>(native.frames);
  if (image_out && p.frames > 1)
    throw Error(ErrorKind::InvalidArgument,
                std::to_string(p.frames) +
                    " frames need a video file (.mp4, .webm, .mov) or a folder for PNG frames (a "
                    "name ending in '/'), not '" +
                    out + "'");
  if (p.width == 0 && p.height == 0) {
    p.width = static_cast<int>(native.width);
    p.height = static_cast<int>(native.height);
  }
}

// Runs a render's graph with the job's embeddings folders first, then the engine's.
JobResult runRenderGraph(const Job& job, RenderGraph& graph, const RenderParams& p,
                         RunEnvironment& env, int* failed_stage) {
  graph.layout.threads = p.threads;
  const NodeLibrary& library = nodeLibrary();
  if (const std::vector<WorkflowProblem> problems =
          validateWorkflow(graph.workflow, library.schemas());
      !problems.empty())
    throw Error(ErrorKind::InvalidArgument,
                "these render settings cannot be drawn:\n" + describeProblems(problems));
  RunEnvironment render_env = env;
  render_env.embedding_dirs = p.embedding_dirs;
  render_env.embedding_dirs.insert(render_env.embedding_dirs.end(), env.embedding_dirs.begin(),
                                   env.embedding_dirs.end());
  graph::ResultCache nodes(0);  // a render shares its nodes' results within the job only
  return runGraph(job, graph.workflow, render_env, library, nodes, graph.layout, failed_stage);
}

}  // namespace

void validateJob(const Job& job) {
  const RenderParams& p = job.params;
  if (p.lora_mode == LoraMode::Invalid) throw Error(ErrorKind::InvalidArgument, "no LoRA mode set");
  if (p.lora_mode == LoraMode::Merge)
    for (const auto& l : p.loras)
      if (!l.keyframes.empty())
        throw Error(
            ErrorKind::InvalidArgument,
            "LoRA '" + l.path + "' changes strength over the steps, which needs hook or auto mode");
  if (p.seed < 0)
    throw Error(ErrorKind::InvalidArgument,
                "the seed must be 0 or more, got " + std::to_string(p.seed));
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
  tiling::validateTiling(nodes::vaeTilingSettings(p));
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
  if (p.model_path.empty()) p.model_path = starterModelPath();
  memory::CpuDevice cpu;
  const memory::Device& device = env.device ? *env.device : cpu;
  const at::ScalarType dtype = computeScalarType(p.dtype, device);
  checkComputeDtype(dtype, device);
  const pipelines::Family& family = pipelines::familyOf(p.model_path);
  if (family.video) {
    resolveVideo(job, p, family.inspect(p.model_path).native);
    RenderGraph graph = renderVideoJobGraph(job, p);
    graph.layout.timing = {StageKind::Invalid, family.name,
                           static_cast<int64_t>(p.width) * p.height * p.frames,
                           computeDtypeName(dtype)};
    JobResult result = runRenderGraph(job, graph, p, env, failed_stage);
    if (result.frames.empty()) {  // a still saved as a picture
      result.frames = result.images;
      result.fps = p.fps;
    }
    return result;
  }
  if (p.frames > 1)
    throw Error(ErrorKind::InvalidArgument,
                "'" + p.model_path + "' is an image model; " + std::to_string(p.frames) +
                    " frames need a video model (Wan 2.1 text-to-video)");
  core::checkInterrupt();
  const pipelines::ModelInfo model =
      modelInfo(family, p.model_path, family.cacheKey({p.model_path, {}, {}, dtype}), env);
  core::checkInterrupt();
  std::vector<std::string> notices;
  resolveSize(p, model, notices);
  checkSteps(p, notices);
  for (const std::string& n : notices) env.emit(logEvent(n));

  RenderGraph graph = renderJobGraph(job, p);
  graph.layout.timing = {StageKind::Invalid, model.kind, static_cast<int64_t>(p.width) * p.height,
                         computeDtypeName(dtype)};
  JobResult result = runRenderGraph(job, graph, p, env, failed_stage);
  result.notices.insert(result.notices.begin(), notices.begin(), notices.end());
  return result;
}

}  // namespace kiln::jobs
