#include "nodes/nodes.h"

#include <algorithm>
#include <cmath>

#include "kiln/error.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "nodes/node_schema.h"
#include "nodes/video.h"
#include "sampling/sampler_names.h"

namespace kiln::nodes {
namespace {

using schema::choice;
using schema::in;
using schema::number;
using schema::out;

// The steps a Sampler runs: all of them from an empty latent, denoise's share of them
// from a picture's latent (at least one, else an error saying so).
int64_t stepsToRun(NodeCall& c, const LatentValue& latent, int64_t steps, double denoise) {
  const int64_t run =
      latent.from_image
          ? std::min<int64_t>(steps, static_cast<int64_t>(std::floor(steps * denoise + 1e-9)))
          : steps;
  if (run < 1)
    throw Error(ErrorKind::InvalidArgument,
                "denoise " + formatNumber(denoise) + " of " + std::to_string(steps) +
                    " steps runs no step; raise the denoise strength or the steps");
  if (!latent.from_image && denoise != 1.0)
    c.run.env.emit(
        logEvent("denoise applies to a picture's latent (VAEEncode or an earlier Sampler); "
                 "ignored for an empty latent"));
  return run;
}

// The A1111 parameters text of image `b` of a Sampler's batch; `suffix` is the family's
// further "Key: value" pairs (FLUX.1's distilled guidance).
std::string samplerParameters(const NodeCall& c, const ModelRef& ref, const ConditioningValue& pos,
                              const ConditioningValue& neg, int64_t b, int64_t width,
                              int64_t height, const LatentValue& latent, const std::string& label,
                              const std::string& suffix) {
  const bool from_image = latent.from_image;
  RenderParams p;
  p.prompt.text = pos.text;
  p.prompt.negative = neg.text;
  p.sampling.seed = c.intParam("seed") + b;
  p.sampling.steps = static_cast<int>(c.intParam("steps"));
  p.sampling.cfg_scale = c.floatParam("cfg");
  p.sampling.sampler = c.stringParam("sampler_name");
  p.sampling.scheduler = c.stringParam("scheduler");
  p.size.width = static_cast<int>(width);
  p.size.height = static_cast<int>(height);
  const double denoise = c.floatParam("denoise");
  if (from_image) p.init.denoise = denoise;
  std::string text = formatA1111Parameters(p, label, ref.name) + suffix;
  if (from_image) text += ", Denoising strength: " + formatNumber(denoise);
  if (latent.mask.defined() && latent.mask_feather > 0)
    text += ", Mask blur: " + std::to_string(latent.mask_feather);
  return text;
}

// The latent to sample: an empty latent laid out on this model's grid; a picture's must
// already be on it.
at::Tensor latentOnGrid(NodeCall& c, const LatentValue& latent, const LatentFormat& format) {
  const at::Tensor samples =
      latent.empty ? emptyImageLatent(c.run, *latent.empty, format) : latent.samples;
  if (samples.size(1) != format.channels)
    throw Error(ErrorKind::InvalidArgument, "the latent has " + std::to_string(samples.size(1)) +
                                                " channels but this model samples " +
                                                std::to_string(format.channels) +
                                                "; it was made by another model's VAE");
  return samples;
}

// SDXL's size conditioning for a picture of `height` x `width`: what the prompt claims
// (its original size and crop, 0: the picture's own) and both prompts' aesthetic scores.
pipelines::SizeConditioning sizeConditioning(const ConditioningValue& pos,
                                             const ConditioningValue& neg, int64_t height,
                                             int64_t width) {
  pipelines::SizeConditioning sizes = pipelines::SizeConditioning::forImage(height, width);
  if (pos.original_height > 0) sizes.original_height = pos.original_height;
  if (pos.original_width > 0) sizes.original_width = pos.original_width;
  sizes.crop_top = pos.crop_top;
  sizes.crop_left = pos.crop_left;
  sizes.aesthetic_score = pos.aesthetic_score;
  sizes.negative_aesthetic_score = neg.aesthetic_score;
  return sizes;
}

// What an image model's Sampler checks before any model loads: an image latent, sampler
// and scheduler names it knows, both prompts from the same text encoders.
void checkImageSampling(const NodeCall& c, const LatentValue& latent, const ConditioningValue& pos,
                        const ConditioningValue& neg) {
  if ((latent.empty && latent.empty->frames > 0) || (!latent.empty && latent.samples.dim() != 4))
    throw Error(ErrorKind::InvalidArgument,
                "an image model samples an image latent; a video latent needs a video "
                "model (LoadVideoModel)");
  (void)sampling::parseSampler(c.stringParam("sampler_name"));
  (void)sampling::parseSchedule(c.stringParam("scheduler"));
  if (pos.context.size(-1) != neg.context.size(-1) || pos.context.dim() != neg.context.dim())
    throw Error(ErrorKind::InvalidArgument,
                "the positive and negative conditioning come from different text "
                "encoders; link both to the same model's TextEncode nodes");
}

// The Sampler's settings for a picture of height x width pixels (the seed set per image).
pipelines::SampleRequest imageRequest(const NodeCall& c, const ModelRef& ref,
                                      const ConditioningValue& pos, const ConditioningValue& neg,
                                      int64_t height, int64_t width) {
  pipelines::SampleRequest request;
  request.positive = {pos.context, pos.pooled, pos.guidance};
  request.negative = {neg.context, neg.pooled, neg.guidance};
  request.flow_shift = ref.flow_shift;
  request.cfg = c.floatParam("cfg");
  request.sizes = sizeConditioning(pos, neg, height, width);
  request.height = height;
  request.width = width;
  request.steps = c.intParam("steps");
  request.sampler = c.stringParam("sampler_name");
  request.scheduler = c.stringParam("scheduler");
  request.prediction = ref.prediction;
  request.zero_terminal_snr = ref.zero_terminal_snr;
  return request;
}

// An image model's Sampler: each image of the batch from its own seed (seed + b), on the
// model's latent grid, with previews when the job asks for them.
graph::NodeOutputs sampleImage(NodeCall& c) {
  const ModelRef& ref = c.input<ModelRef>("model");
  const auto& pos = c.input<ConditioningValue>("positive");
  const auto& neg = c.input<ConditioningValue>("negative");
  const LatentValue& latent = c.input<LatentValue>("latent_image");
  checkImageSampling(c, latent, pos, neg);
  const int64_t steps = c.intParam("steps"), seed = c.intParam("seed");
  const int64_t steps_run = stepsToRun(c, latent, steps, c.floatParam("denoise"));
  const auto sampling = [&](const pipelines::Pipeline& p) {
    const int64_t cell = p.latentFormat().spatial;
    const int64_t height = latent.empty ? latent.empty->height : latent.samples.size(2) * cell;
    const int64_t width = latent.empty ? latent.empty->width : latent.samples.size(3) * cell;
    return p.sampleWorkingBytes(height, width, 0,
                                std::max(pos.context.size(1), neg.context.size(1)));
  };
  LoadedModel& model = c.run.prepare(ref, WorkflowRun::Part::Unet, sampling);
  const pipelines::Pipeline& pipe = model.as<pipelines::Pipeline>();
  if (pos.context.size(-1) != pipe.contextWidth())
    throw Error(ErrorKind::InvalidArgument,
                "the conditioning was encoded for another model (context width " +
                    std::to_string(pos.context.size(-1)) + ", the model needs " +
                    std::to_string(pipe.contextWidth()) + ")");
  const LatentFormat format = pipe.latentFormat();
  const int64_t f = format.spatial;
  const at::Tensor samples = latentOnGrid(c, latent, format);
  const int64_t batch = samples.size(0), h = samples.size(2), w = samples.size(3);
  const int64_t total = batch * steps_run;
  c.run.tracker.update(c.stage, c.run.tracker.stage(c.stage).name, total, h * f * w * f);

  // A latent made with another scaling (a VAE of its own) is brought to the model's.
  const double scale = format.scaling_factor;
  const at::Tensor start = latent.scaling_factor > 0 && latent.scaling_factor != scale
                               ? samples * (scale / latent.scaling_factor)
                               : samples;
  LatentValue result = latent;
  result.empty.reset();
  result.from_image = true;   // a further Sampler refines it (denoise), as an SDXL refiner does
  result.parameters.clear();  // this sampling's, not an earlier one's
  result.scaling_factor = scale;
  pipelines::SampleRequest request = imageRequest(c, ref, pos, neg, h * f, w * f);
  const std::string label = pipe.samplerLabel(request);
  std::vector<at::Tensor> outs;
  {
    memory::DeviceScope on_device(c.run.device);
    for (int64_t b = 0; b < batch; ++b) {
      request.seed = seed + b;  // image b's noise
      sampling::LatentInit init;
      if (latent.from_image) {
        init.latent = start.narrow(0, b, 1);
        init.start_step = steps - steps_run;
        if (latent.mask.defined())
          init.mask = latent.mask.size(0) > 1 ? latent.mask.narrow(0, b, 1) : latent.mask;
      }
      request.init = latent.from_image ? &init : nullptr;
      model.setLoraProgress(0.0);
      const at::Tensor out = pipe.sampleLatent(request, [&](const pipelines::SampleStep& s) {
        model.setLoraProgress(static_cast<double>(s.step + 1) / static_cast<double>(s.total));
        const int64_t done = b * steps_run + s.step + 1;
        c.run.tracker.progress(c.stage, done, total);
        if (c.run.job.previews && s.denoised)
          if (const at::Tensor rgb = pipe.previewRgb(*s.denoised); rgb.defined())
            c.run.env.emit(previewEvent(c.stage, done, total, imageFromRgb(rgb)));
      });
      outs.push_back(toHost(c.run.device, out));
      result.parameters.push_back(samplerParameters(c, ref, pos, neg, b, w * f, h * f, latent,
                                                    label, pipe.parametersSuffix(request)));
    }
  }
  result.samples = at::cat(outs, 0);
  const int64_t bytes = tensorBytes(result.samples) + tensorBytes(result.source_rgb);
  return graph::NodeOutputs{makeValue(ValueType::Latent, std::move(result), bytes)};
}

}  // namespace

NodeDefinition sampler() {
  NodeDefinition d;
  d.schema = {
      "Sampler",
      "Sampler",
      "sampling",
      "Denoises a latent guided by the prompts (classifier-free guidance)",
      {in("model", ValueType::Model, "Model"), in("positive", ValueType::Conditioning, "Positive"),
       in("negative", ValueType::Conditioning, "Negative"),
       in("latent_image", ValueType::Latent, "Latent")},
      {number("seed", ValueType::Seed, int64_t{0}, 0, 9223372036854775807.0, 1, "Seed",
              "The noise; image i of a batch uses seed + i"),
       number("steps", ValueType::Int, int64_t{20}, 1, 1000, 1, "Steps", ""),
       number("cfg", ValueType::Float, 7.0, 0, 100, 0.5, "CFG scale",
              "How strongly the prompt steers"),
       choice("sampler_name", sampling::samplerNames(), "euler", "Sampler",
              "The solver, with k-diffusion's semantics as ComfyUI and A1111 use them"),
       choice("scheduler", sampling::scheduleNames(), "normal", "Schedule",
              "The noise levels the steps visit; diffusers: the model's scheduler config as "
              "diffusers computes it"),
       number("denoise", ValueType::Float, 1.0, 0, 1, 0.01, "Denoise",
              "For a picture's latent (VAE encode, or an earlier Sampler's): how much of it is "
              "repainted")},
      {out(ValueType::Latent, "Latent")}};
  d.stage = StageKind::Denoise;
  d.stage_name = "Denoising";
  d.unit = "steps";
  d.units = [](const graph::PlannedNode& n) {
    const ParamValue& v = n.params.at("steps");
    return std::holds_alternative<double>(v) ? static_cast<int64_t>(std::get<double>(v))
                                             : std::get<int64_t>(v);
  };
  d.run = [](NodeCall& c) {
    return c.input<ModelRef>("model").video ? sampleVideo(c) : sampleImage(c);
  };
  return d;
}

}  // namespace kiln::nodes
