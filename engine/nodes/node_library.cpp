// What the node files share: a run's models (acquire, load, LoRAs, placement), parameters, the
// library.
#include "nodes/node_library.h"

#include <algorithm>

#include "core/interrupt.h"
#include "memory/device.h"
#include "nodes/nodes.h"
#include "nodes/video.h"
#include "pipelines/common/vae_file.h"

namespace kiln::nodes {
namespace {

// `stack` with one component's strengths replaced by `branch`'s (UNet or text), the
// other component's kept; files left at zero strength for both are dropped.
std::vector<LoraSpec> combineLoras(const std::vector<LoraSpec>& current,
                                   const std::vector<LoraSpec>& branch, bool unet) {
  std::vector<LoraSpec> out;
  for (LoraSpec s : current) {
    if (unet) {
      s.unet_strength = 0;
      s.keyframes.clear();
    } else {
      s.text_strength = 0;
    }
    out.push_back(std::move(s));
  }
  for (const LoraSpec& b : branch) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const LoraSpec& s) { return s.path == b.path; });
    if (it == out.end()) it = out.insert(out.end(), LoraSpec(b.path, 0.0, 0.0));
    if (unet) {
      it->unet_strength += b.unet_strength;
      it->keyframes = b.keyframes;
    } else {
      it->text_strength += b.text_strength;
    }
  }
  std::erase_if(out, [](const LoraSpec& s) {
    return s.unet_strength == 0 && s.text_strength == 0 && s.keyframes.empty();
  });
  return out;
}

}  // namespace

int64_t tensorBytes(const at::Tensor& t) {
  return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0;
}

at::Tensor toHost(const memory::Device& device, const at::Tensor& t) {
  return t.defined() ? device.download(t) : t;
}

LoadedModel& WorkflowRun::acquire(const std::string& key,
                                  const std::function<std::shared_ptr<LoadedModel>()>& load) {
  if (const auto it = uncached.find(key); it != uncached.end()) return *it->second;
  if (const auto it = leases.find(key); it != leases.end())
    return static_cast<LoadedModel&>(it->second.model());
  if (env.cache) {
    leases[key] = env.cache->acquire(
        key, [&] { return std::static_pointer_cast<memory::CachedModel>(load()); });
    return static_cast<LoadedModel&>(leases[key].model());
  }
  return *(uncached[key] = load());
}

LoadedModel& WorkflowRun::load(const ModelRef& ref, const pipelines::LoadProgress& progress) {
  return acquire(ref.key, [&] {
    const pipelines::ModelRequest request{ref.path, ref.vae_path, ref.text_encoder_path, ref.dtype,
                                          ref.text_encoder_2_path};
    return loadModel(pipelines::familyOf(ref.path), request, device, progress);
  });
}

LoadedModel& WorkflowRun::model(const ModelRef& ref) {
  if (ref.video || ref.vae_file)
    throw Error(ErrorKind::InvalidArgument,
                "'" + ref.path + "' is " + (ref.vae_file ? "a VAE file" : "a video model") +
                    "; this node needs an image model's part (LoadCheckpoint)");
  // Its LoadCheckpoint's result came from the node cache and the model cache holds it.
  return load(ref);
}

int64_t WorkflowRun::workingBytes(const std::string& what,
                                  const std::function<int64_t()>& estimate) {
  try {
    return estimate();
  } catch (const std::exception& e) {
    env.emit(logEvent("could not estimate the memory " + what + " needs (" + e.what() +
                      "): nothing was freed for it on " + device.name() +
                      ", so it may run out of memory"));
    return 0;
  }
}

void WorkflowRun::applyLoras(LoadedModel& m, const ModelRef& ref, Part part) {
  if (part == Part::Vae) return;
  const std::vector<LoraSpec> stack = combineLoras(m.loras(), ref.loras, part == Part::Unet);
  if (stack == m.loras() &&
      (stack.empty() || ref.lora_mode == LoraMode::Auto || m.loraMode() == ref.lora_mode))
    return;
  for (const LoraReport& r : m.applyLoras(stack, ref.lora_mode, env.offload)) {
    result.notices.push_back("LoRA: " + r.describe());
    env.emit(logEvent("LoRA: " + r.describe()));
  }
}

LoadedModel& WorkflowRun::prepare(const ModelRef& ref, Part part,
                                  const std::function<int64_t(const pipelines::Pipeline&)>& working,
                                  const pipelines::LoadProgress& progress) {
  if (ref.vae_file)
    throw Error(ErrorKind::InvalidArgument, "'" + ref.path +
                                                "' is a VAE file; this node needs a model's part "
                                                "(LoadCheckpoint or LoadVideoModel)");
  LoadedModel& m = load(ref, progress);
  applyLoras(m, ref, part);
  if (device.isAccelerator())
    placeModel(m, env, device,
               working
                   ? workingBytes("this work", [&] { return working(m.as<pipelines::Pipeline>()); })
                   : 0);
  return m;
}

pipelines::VaeCodec WorkflowRun::vae(
    const ModelRef& ref, double scaling_factor,
    const std::function<int64_t(const pipelines::VaeCodec&)>& working) {
  if (!ref.vae_file) {
    (void)model(ref);  // an image model's
    const auto codecOf = [&](const pipelines::Pipeline& p) {
      std::optional<pipelines::VaeCodec> codec = p.imageCodec();
      if (!codec)
        throw Error(ErrorKind::InvalidArgument,
                    p.describe() + " has no VAE for pictures; link a picture model's VAE");
      return *codec;
    };
    pipelines::VaeCodec codec = codecOf(prepare(ref, Part::Vae, [&](const pipelines::Pipeline& p) {
                                          return working ? working(codecOf(p)) : 0;
                                        }).as<pipelines::Pipeline>());
    if (scaling_factor > 0) codec.scaling_factor = scaling_factor;
    return codec;
  }
  LoadedModel& m = acquire(ref.key, [&] {
    core::checkInterrupt();
    return std::make_shared<LoadedModel>(std::make_unique<pipelines::VaeFile>(ref.path, ref.dtype),
                                         device);
  });
  const pipelines::VaeFile& file = m.as<pipelines::VaeFile>();
  if (device.isAccelerator())
    placeModel(m, env, device,
               working ? workingBytes("the VAE's work",
                                      [&] { return working(file.codec(scaling_factor)); })
                       : 0);
  return file.codec(scaling_factor);
}

int64_t NodeCall::intParam(const std::string& name) const {
  const ParamValue& v = node.params.at(name);
  if (const auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
  return std::get<int64_t>(v);
}
double NodeCall::floatParam(const std::string& name) const {
  const ParamValue& v = node.params.at(name);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}
std::string NodeCall::stringParam(const std::string& name) const {
  return std::get<std::string>(node.params.at(name));
}
bool NodeCall::boolParam(const std::string& name) const {
  return std::get<bool>(node.params.at(name));
}

void NodeLibrary::add(NodeDefinition definition) {
  schemas_.push_back(definition.schema);
  definitions_.push_back(std::move(definition));
}

const NodeDefinition* NodeLibrary::find(const std::string& type) const {
  for (const NodeDefinition& d : definitions_)
    if (d.schema.type == type) return &d;
  return nullptr;
}

std::pair<int64_t, int64_t> snappedLatentSize(WorkflowRun& run, const LatentRequest& request,
                                              int64_t multiple) {
  if (request.width < 1 || request.height < 1 || request.batch < 1)
    throw Error(ErrorKind::InvalidArgument,
                "an empty latent of " + std::to_string(request.width) + "x" +
                    std::to_string(request.height) + " pixels and batch " +
                    std::to_string(request.batch) + " cannot be laid out");
  const int64_t w = std::max(multiple, request.width / multiple * multiple);
  const int64_t h = std::max(multiple, request.height / multiple * multiple);
  if (w != request.width || h != request.height) {
    std::string notice = "size " + std::to_string(request.width) + "x" +
                         std::to_string(request.height) + " is not a multiple of " +
                         std::to_string(multiple) + "; rendering " + std::to_string(w) + "x" +
                         std::to_string(h) + " instead";
    run.env.emit(logEvent(notice));
    run.result.notices.push_back(std::move(notice));
  }
  return {w, h};
}

at::Tensor emptyImageLatent(WorkflowRun& run, const LatentRequest& request,
                            const LatentFormat& format) {
  if (request.frames > 0)
    throw Error(ErrorKind::InvalidArgument,
                "a video latent (EmptyVideoLatent) needs a video model (LoadVideoModel) "
                "and its VAE");
  const auto [w, h] = snappedLatentSize(run, request, format.side_multiple);
  return at::zeros({request.batch, format.channels, h / format.spatial, w / format.spatial});
}

tiling::TileSettings tilingOf(const NodeCall& c) {
  return {parseVaeTiling(c.stringParam("tiling")), c.intParam("tile_size"),
          c.intParam("tile_overlap")};
}

graph::NodeOutputs modelOutputs(const ModelRef& ref) {
  return graph::NodeOutputs{makeValue(ValueType::Model, ref), makeValue(ValueType::Clip, ref),
                            makeValue(ValueType::Vae, ref)};
}

void timeAsModel(const graph::NodeOutputs& outputs, ProgressTracker& tracker) {
  const auto* ref = static_cast<const ModelRef*>(outputs.at(0).data.get());
  tracker.setModel(ref->family, computeDtypeName(ref->dtype));
}

bool modelStillCached(const graph::NodeOutputs& outputs, const RunEnvironment& env) {
  const auto* ref = static_cast<const ModelRef*>(outputs.at(0).data.get());
  return env.cache != nullptr && env.cache->contains(ref->key);
}

std::string carriedWorkflow(const NodeCall& c) {
  if (c.run.layout && c.image >= 0)
    if (const auto it = c.run.layout->workflow_of_image.find(c.image);
        it != c.run.layout->workflow_of_image.end())
      return it->second;
  return c.run.job.workflow ? workflowToJson(*c.run.job.workflow) : std::string();
}

std::string checkedPrefix(const NodeCall& c) {
  std::string prefix = c.stringParam("filename_prefix");
  if (prefix.empty() || prefix.find('/') != std::string::npos ||
      prefix.find('\\') != std::string::npos || prefix == "." || prefix == "..")
    throw Error(ErrorKind::InvalidArgument,
                "the file name prefix '" + prefix + "' must be a plain name");
  return prefix;
}

NodeLibrary builtinNodes() {
  NodeLibrary lib;
  for (NodeDefinition (*make)() :
       {loadCheckpoint, loadVae,        loadLora,         loadLoraModelOnly, textEncode,
        emptyLatent,    sampler,        vaeDecode,        vaeEncode,         loadImage,
        loadMask,       jobImage,       jobMask,          saveImage,         saveImageAs,
        previewImage,   loadVideoModel, emptyVideoLatent, saveVideo,         saveVideoAs,
        fluxGuidance,   textEncodeFlux, modelSamplingFlux})
    lib.add(make());
  return lib;
}

}  // namespace kiln::nodes

namespace kiln {

std::vector<NodeSchema> builtinNodeSchemas() {
  return nodes::builtinNodes().schemas();
}

}  // namespace kiln
