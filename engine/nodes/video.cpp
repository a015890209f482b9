#include "nodes/video.h"

#include <cstdio>
#include <filesystem>

#include "core/interrupt.h"
#include "kiln/error.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "nodes/model_loading.h"
#include "nodes/node_schema.h"
#include "nodes/vae_stage.h"

namespace kiln::nodes {
namespace {

using schema::choice;
using schema::in;
using schema::number;
using schema::out;
using schema::text;

std::vector<Image> framesOf(const ImageValue& v) {
  std::vector<Image> frames;
  for (int64_t i = 0; i < v.rgb.size(0); ++i)
    frames.push_back(imageFromRgb(v.rgb[i].permute({1, 2, 0})));
  return frames;
}

}  // namespace

graph::NodeOutputs loadVideoModelOutputs(NodeCall& c, const std::string& path,
                                         const std::string& vae, const std::string& text_encoder,
                                         const std::string& dtype, double shift) {
  if (path.empty()) throw Error(ErrorKind::InvalidArgument, "LoadVideoModel needs a model");
  const pipelines::Family& family = pipelines::familyOf(path);
  std::error_code ec;
  if (!family.video && std::filesystem::exists(path, ec))
    throw Error(ErrorKind::InvalidArgument,
                "'" + path +
                    "' is an image model; LoadVideoModel loads video models "
                    "(Wan 2.1); load it with LoadCheckpoint");
  const pipelines::ModelRequest request =
      family.resolve({path, vae, text_encoder, computeScalarType(dtype, c.run.device), {}});
  ModelRef ref;
  ref.path = request.path;
  ref.vae_path = request.vae_path;
  ref.text_encoder_path = request.text_encoder_path;
  ref.dtype = request.dtype;
  checkComputeDtype(ref.dtype, c.run.device);
  ref.key = family.cacheKey(request);
  ref.video = true;
  ref.flow_shift = shift;
  const LoadedModel& model =
      c.run.prepare(ref, WorkflowRun::Part::Vae, {}, [&c](std::size_t done, std::size_t total) {
        if (c.stage >= 0)
          c.run.tracker.progress(c.stage, static_cast<int64_t>(done), static_cast<int64_t>(total));
      });
  const pipelines::ModelParts& pipe = model.parts();
  ref.family = pipe.kindName();
  ref.name = pipe.displayName();
  for (const auto& n : pipe.notes()) c.run.env.emit(logEvent(n));
  c.run.result.model_family = ref.family;
  c.run.tracker.setModel(ref.family, computeDtypeName(ref.dtype));
  return modelOutputs(ref);
}

NodeDefinition loadVideoModel() {
  NodeDefinition d;
  d.schema = {
      "LoadVideoModel",
      "Load video model",
      "loaders",
      "Loads a Wan 2.1 text-to-video model: a diffusers folder, or a transformer file with its VAE "
      "and "
      "UMT5 text encoder (found in the sibling vae/ and text_encoders/ folders when not given)",
      {},
      {text("model_name", ValueType::File, std::string(), "Model",
            "A diffusers folder or a transformer file"),
       text("vae_name", ValueType::File, std::string(), "VAE", "Empty: found beside the model"),
       text("text_encoder_name", ValueType::File, std::string(), "Text encoder",
            "Empty: found beside the model; its tokenizer (spiece.model) lies beside it"),
       choice(
           "dtype", {"auto", "fp32", "bf16", "fp16"}, "auto", "Compute precision",
           "auto: bf16 on CPUs with bf16 instructions, else fp32 (bf16 is emulated and many times "
           "slower there); fp16 on a GPU. fp16 needs a GPU (the VAE then computes in fp32)"),
       number("shift", ValueType::Float, 0.0, 0, 100, 0.5, "Shift",
              "The flow shift of the noise schedule; 0: the model's (5 for Wan 2.1)")},
      {out(ValueType::Model, "Model"), out(ValueType::Clip, "Text encoder"),
       out(ValueType::Vae, "VAE")}};
  d.stage = StageKind::LoadModel;
  d.stage_name = "Loading model";
  d.unit = "tensors";
  d.run = [](NodeCall& c) {
    return loadVideoModelOutputs(c, c.stringParam("model_name"), c.stringParam("vae_name"),
                                 c.stringParam("text_encoder_name"), c.stringParam("dtype"),
                                 c.floatParam("shift"));
  };
  d.still_valid = modelStillCached;
  d.reused = timeAsModel;
  return d;
}

NodeDefinition emptyVideoLatent() {
  NodeDefinition d;
  d.schema = {"EmptyVideoLatent",
              "Empty video latent",
              "latent",
              "A blank video latent: what text-to-video starts from. The video model that samples "
              "it gives its grid "
              "(Wan 2.1: frames 1 + 4n, sides multiples of 16)",
              {},
              {number("width", ValueType::Int, int64_t{832}, 16, 4096, 16, "Width",
                      "Pixels; snapped down to the model's grid (16 for Wan 2.1)"),
               number("height", ValueType::Int, int64_t{480}, 16, 4096, 16, "Height",
                      "Pixels; snapped down to the model's grid (16 for Wan 2.1)"),
               number("frames", ValueType::Int, int64_t{81}, 1, 1025, 4, "Frames",
                      "Snapped to the model's grid (1 + 4n for Wan 2.1); 1 renders a still")},
              {out(ValueType::Latent, "Latent")}};
  d.run = [](NodeCall& c) {
    LatentValue v;
    v.empty = LatentRequest{c.intParam("width"), c.intParam("height"), 1, c.intParam("frames")};
    return graph::NodeOutputs{makeValue(ValueType::Latent, std::move(v), 0)};
  };
  return d;
}

namespace {

struct VideoRequest {
  int64_t frames = 1, height = 0, width = 0, batch = 1;
};

// The size of the video `latent` holds or asks for on `format`'s grid, for estimates (no
// notices).
VideoRequest videoSize(const LatentValue& latent, const LatentFormat& format) {
  VideoRequest r;
  const int64_t s = format.spatial;
  if (latent.empty) {
    const int64_t m = format.side_multiple;
    r.width = std::max(m, latent.empty->width / m * m);
    r.height = std::max(m, latent.empty->height / m * m);
    if (latent.empty->frames > 0)
      r.frames = pipelines::snapFrames(latent.empty->frames, format.temporal);
  } else if (latent.samples.dim() == 5) {
    r.frames = 1 + (latent.samples.size(2) - 1) * format.temporal;
    r.height = latent.samples.size(3) * s;
    r.width = latent.samples.size(4) * s;
  }
  return r;
}

// The video an empty latent asks for on `format`'s grid: frames 1 + tf n (a picture's
// latent: one frame), sides multiples of the model's; changes are logged.
VideoRequest videoRequest(NodeCall& c, const LatentRequest& request, const LatentFormat& format) {
  VideoRequest r;
  const auto [w, h] = snappedLatentSize(c.run, request, format.side_multiple);
  r.width = w;
  r.height = h;
  r.batch = request.batch;
  if (request.frames > 0) {
    r.frames = pipelines::snapFrames(request.frames, format.temporal);
    if (r.frames != request.frames) {
      std::string notice =
          std::to_string(request.frames) + " frames are not on the model's grid of 1 + " +
          std::to_string(format.temporal) + "n; rendering " + std::to_string(r.frames);
      c.run.env.emit(logEvent(notice));
      c.run.result.notices.push_back(std::move(notice));
    }
  }
  if (r.batch > 1 && r.frames > 1)
    throw Error(ErrorKind::InvalidArgument,
                "a video model renders one video at a time; a batch of " + std::to_string(r.batch) +
                    " needs 1 frame each (stills)");
  return r;
}

}  // namespace

graph::NodeOutputs sampleVideo(NodeCall& c) {
  const ModelRef& ref = c.input<ModelRef>("model");
  const auto& pos = c.input<ConditioningValue>("positive");
  const auto& neg = c.input<ConditioningValue>("negative");
  const LatentValue& latent = c.input<LatentValue>("latent_image");
  LoadedModel& model =
      c.run.prepare(ref, WorkflowRun::Part::Unet, [&](const pipelines::Pipeline& p) {
        const VideoRequest r = videoSize(latent, p.latentFormat());
        return p.sampleWorkingBytes(r.height, r.width, r.frames, pos.context.size(1));
      });
  const pipelines::Pipeline& pipe = model.as<pipelines::Pipeline>();
  const LatentFormat format = pipe.latentFormat();
  if (pos.context.dim() != 3 || pos.context.size(-1) != pipe.contextWidth() ||
      neg.context.size(-1) != pipe.contextWidth())
    throw Error(ErrorKind::InvalidArgument,
                "the conditioning was not encoded by this video model's text encoder; "
                "link its Text encoder output to both TextEncode nodes");
  VideoRequest size;
  if (latent.empty) {
    size = videoRequest(c, *latent.empty, format);
  } else {
    // A sampled video latent: sampled again from noise at its size.
    if (latent.samples.dim() != 5 || latent.samples.size(1) != format.channels)
      throw Error(ErrorKind::InvalidArgument,
                  "a video model samples a video latent (EmptyVideoLatent) of " +
                      std::to_string(format.channels) + " channels");
    size = videoSize(latent, format);
    size.batch = latent.samples.size(0);
  }
  if (c.floatParam("denoise") != 1.0)
    c.run.env.emit(logEvent("denoise applies to image latents; a video is sampled from noise"));
  pipelines::SampleRequest request;
  request.positive = {pos.context, pos.pooled, pos.guidance};
  request.negative = {neg.context, neg.pooled, neg.guidance};
  request.cfg = c.floatParam("cfg");
  request.height = size.height;
  request.width = size.width;
  request.frames = size.frames;
  request.steps = c.intParam("steps");
  request.sampler = c.stringParam("sampler_name");
  request.scheduler = c.stringParam("scheduler");
  request.flow_shift = ref.flow_shift;
  const std::string label = pipe.samplerLabel(request);  // checks the sampler's name
  const int64_t seed = c.intParam("seed");
  const int64_t total = size.batch * request.steps;
  c.run.tracker.update(c.stage, c.run.tracker.stage(c.stage).name, total,
                       size.width * size.height * size.frames);
  LatentValue result;
  std::vector<at::Tensor> outs;
  for (int64_t b = 0; b < size.batch; ++b) {
    request.seed = seed + b;  // image b of a batch of stills
    {
      memory::DeviceScope on_device(c.run.device);
      model.setLoraProgress(0.0);
      outs.push_back(pipe.sampleLatent(request, [&](const pipelines::SampleStep& st) {
        model.setLoraProgress(static_cast<double>(st.step + 1) / static_cast<double>(st.total));
        c.run.tracker.progress(c.stage, b * request.steps + st.step + 1, total);
      }));
    }
    if (!at::isfinite(outs.back()).all().item<bool>())
      throw Error(ErrorKind::NonFinite,
                  "denoising produced NaN or infinity; try fp32 or fewer steps");
    RenderParams p;
    p.prompt.text = pos.text;
    p.prompt.negative = neg.text;
    p.sampling.seed = request.seed;
    p.sampling.steps = static_cast<int>(request.steps);
    p.sampling.cfg_scale = request.cfg;
    p.size.width = static_cast<int>(size.width);
    p.size.height = static_cast<int>(size.height);
    result.parameters.push_back(formatA1111Parameters(p, label, ref.name) +
                                pipe.parametersSuffix(request));
  }
  result.samples = outs.size() == 1 ? outs.front() : at::cat(outs, 0);
  const int64_t bytes = tensorBytes(result.samples);
  return graph::NodeOutputs{makeValue(ValueType::Latent, std::move(result), bytes)};
}

graph::NodeOutputs decodeVideo(NodeCall& c) {
  const LatentValue& latent = c.input<LatentValue>("samples");
  const tiling::TileSettings tiling = tilingOf(c);
  tiling::validateTiling(tiling);
  const auto decoding = [&](const pipelines::Pipeline& p) {
    const LatentFormat format = p.latentFormat();
    const VideoRequest r = videoSize(latent, format);
    const pipelines::ClipTiles tiles =
        p.planClipDecode(r.height / format.spatial, r.width / format.spatial, tiling,
                         c.run.device.memory().total_bytes / 2);
    return p.clipDecodeWorkingBytes(r.height, r.width, tiles);
  };
  const pipelines::Pipeline& pipe =
      c.run.prepare(c.input<ModelRef>("vae"), WorkflowRun::Part::Vae, decoding)
          .as<pipelines::Pipeline>();
  const LatentFormat format = pipe.latentFormat();
  at::Tensor samples = latent.samples;
  if (latent.empty) {  // nothing sampled: the VAE's picture of an all-zero latent
    const VideoRequest r = videoRequest(c, *latent.empty, format);
    samples = at::zeros({r.batch, format.channels, 1 + (r.frames - 1) / format.temporal,
                         r.height / format.spatial, r.width / format.spatial});
  }
  if (samples.dim() != 5 || samples.size(1) != format.channels)
    throw Error(ErrorKind::InvalidArgument,
                "a video VAE decodes a video latent (from a video model's Sampler)");
  // One pass per latent frame (carrying the causal cache) and spatial tile.
  const int64_t lh = samples.size(3), lw = samples.size(4);
  const pipelines::ClipTiles tiles =
      pipe.planClipDecode(lh, lw, tiling, availableWorkBytes(c.run.device));
  const int64_t passes = pipelines::clipTilePasses(lh, lw, tiles);
  const int64_t total = samples.size(0) * samples.size(2) * passes;
  if (tiles.tile > 0) {
    std::string notice = "decoding in tiles of " + std::to_string(tiles.tile * format.spatial) +
                         " pixels (" + std::to_string(passes) + " per frame chunk)";
    c.run.env.emit(logEvent(notice));
    c.run.result.notices.push_back(std::move(notice));
  }
  if (c.run.tracker.stage(c.stage).total != total)
    c.run.tracker.update(c.stage, c.run.tracker.stage(c.stage).name, total);
  std::vector<at::Tensor> chunks;
  int64_t done = 0;
  {
    memory::DeviceScope on_device(c.run.device);
    for (int64_t b = 0; b < samples.size(0); ++b)
      pipe.decodeClip(
          samples.narrow(0, b, 1), tiles,
          [&](const at::Tensor& frames) {  // [1, 3, n, H, W] -> [n, 3, H, W]
            chunks.push_back(frames[0].permute({1, 0, 2, 3}).contiguous());
          },
          [&] { c.run.tracker.progress(c.stage, ++done, total); });
  }
  ImageValue image;
  image.rgb = at::cat(chunks, 0);
  image.parameters = latent.parameters;
  const int64_t bytes = tensorBytes(image.rgb);
  return graph::NodeOutputs{makeValue(ValueType::Image, std::move(image), bytes)};
}

NodeDefinition saveVideo() {
  NodeDefinition d;
  d.schema = {
      "SaveVideo",
      "Save video",
      "image",
      "Saves the frames as a video (MP4 H.264, WebM VP9, MOV ProRes 422) or PNG frames, with the "
      "workflow "
      "and the generation parameters inside",
      {in("images", ValueType::Image, "Frames")},
      {text("filename_prefix", ValueType::String, std::string("kiln"), "File name prefix", ""),
       choice("format", {"mp4", "webm", "mov", "png"}, "mp4", "Format",
              "mp4: H.264 for sharing; webm: VP9 for the web; mov: ProRes 422 for editing; png: a "
              "folder of "
              "frames"),
       number("fps", ValueType::Float, 16.0, 1, 240, 1, "Frame rate",
              "Frames per second (Wan 2.1: 16)"),
       number("crf", ValueType::Int, int64_t{-1}, -1, 63, 1, "Quality",
              "Constant quality for H.264 and VP9, lower is better; -1: 19 for H.264, 31 for VP9")},
      {}};
  d.schema.output_node = true;
  d.stage = StageKind::EncodeVideo;
  d.stage_name = "Encoding video";
  d.unit = "frames";
  d.run = [](NodeCall& c) {
    WorkflowRun& run = c.run;
    if (run.job.output_dir.empty() || !run.env.write_video)
      throw Error(ErrorKind::InvalidArgument,
                  "SaveVideo needs an output folder and a video writer");
    const std::string prefix = checkedPrefix(c);
    const auto& images = c.input<ImageValue>("images");
    std::vector<Image> frames = framesOf(images);
    const std::string format = c.stringParam("format");
    VideoWriteOptions options;
    options.fps = c.floatParam("fps");
    options.crf = static_cast<int>(c.intParam("crf"));
    // The frame rate is the video's, as a render job's video files say it.
    const std::string parameters =
        images.parameters.empty()
            ? std::string()
            : images.parameters.front() + ", FPS: " + formatNumber(options.fps);
    if (!parameters.empty()) {
      options.metadata["parameters"] = parameters;
      options.metadata["comment"] = parameters;
    }
    options.metadata["kiln_workflow"] = workflowToJson(*run.job.workflow);
    const auto total = static_cast<int64_t>(frames.size());
    options.progress = [&](int done, int) {
      run.tracker.progress(c.stage, done, total);
      core::checkInterrupt();
    };
    std::error_code ec;
    std::filesystem::create_directories(run.job.output_dir, ec);
    std::string path;
    for (int number = 1;; ++number) {
      char name[32];
      std::snprintf(name, sizeof name, "-%05d", number);
      path = (std::filesystem::path(run.job.output_dir) / (prefix + name)).string();
      if (!std::filesystem::exists(path) && !std::filesystem::exists(path + "." + format)) break;
    }
    path += format == "png" ? "/" : "." + format;
    run.env.write_video(path, frames, options);
    run.result.paths.push_back(path);
    Image first = frames.front();
    if (!parameters.empty()) first.text["parameters"] = parameters;
    run.result.images.push_back(std::move(first));
    run.result.frames = std::move(frames);
    run.result.fps = options.fps;
    return graph::NodeOutputs{};
  };
  return d;
}

NodeDefinition saveVideoAs() {
  NodeDefinition d;
  d.schema = {
      "SaveVideoAs",
      "Save video as",
      "image",
      "Saves the frames under a path of your choosing: a video file by its extension "
      "(.mp4, .webm, .mov) or PNG frames in a folder (a path ending in '/'), with the "
      "generation parameters inside; empty: the frames are only returned",
      {in("images", ValueType::Image, "Frames")},
      {text("path", ValueType::String, std::string(), "Path", "The file or folder to write"),
       number("fps", ValueType::Float, 16.0, 0, 240, 1, "Frame rate",
              "Frames per second (Wan 2.1: 16)"),
       number("crf", ValueType::Int, int64_t{-1}, -1, 63, 1, "Quality",
              "Constant quality for H.264 and VP9, lower is better; -1: 19 for H.264, 31 "
              "for VP9")},
      {}};
  d.schema.output_node = true;
  d.stage = StageKind::EncodeVideo;
  d.stage_name = "Encoding video";
  d.unit = "frames";
  d.stage_needed = [](const graph::PlannedNode& n, const RunEnvironment&) {
    const auto* path = std::get_if<std::string>(&n.params.at("path"));
    return path && !path->empty();
  };
  d.run = [](NodeCall& c) {
    WorkflowRun& run = c.run;
    const auto& images = c.input<ImageValue>("images");
    std::vector<Image> frames = framesOf(images);
    const double fps = c.floatParam("fps");
    // A still has no frame rate: its text is what SaveImage writes.
    const std::string parameters = images.parameters.empty() ? std::string()
                                   : frames.size() > 1
                                       ? images.parameters.front() + ", FPS: " + formatNumber(fps)
                                       : images.parameters.front();
    const std::string workflow = carriedWorkflow(c);
    if (const std::string path = c.stringParam("path"); !path.empty()) {
      if (!run.env.write_video)
        throw Error(ErrorKind::InvalidArgument, "this engine cannot write videos");
      VideoWriteOptions options;
      options.fps = fps;
      options.crf = static_cast<int>(c.intParam("crf"));
      if (!parameters.empty()) {
        options.metadata["parameters"] = parameters;
        options.metadata["comment"] = parameters;
      }
      if (!workflow.empty()) options.metadata["kiln_workflow"] = workflow;
      const auto total = static_cast<int64_t>(frames.size());
      options.progress = [&](int done, int) {
        run.tracker.progress(c.stage, done, total);
        core::checkInterrupt();
      };
      run.env.write_video(path, frames, options);
      run.result.paths.push_back(path);
    }
    Image first = frames.front();
    if (!parameters.empty()) first.text["parameters"] = parameters;
    if (!workflow.empty()) first.text["kiln_workflow"] = workflow;
    if (frames.size() == 1) frames.front().text["parameters"] = parameters;
    run.result.images.push_back(std::move(first));
    run.result.frames = std::move(frames);
    run.result.fps = fps;
    return graph::NodeOutputs{};
  };
  return d;
}

}  // namespace kiln::nodes
