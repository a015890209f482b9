// What a workflow node is (its schema, the stage it runs as, what it does) and what the
// node files share: the values on links, the models one run holds (the model cache's
// leases, LoRAs, placement), the library of built-in nodes. The model-level work they call
// is in pipelines/; the runner that plans and runs a workflow is jobs/workflow_runner.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/plan.h"
#include "graph/result_cache.h"
#include "kiln/engine.h"
#include "nodes/model_loading.h"
#include "nodes/progress_tracker.h"
#include "nodes/run_environment.h"
#include "pipelines/common/loaded_model.h"
#include "pipelines/common/pipeline.h"
#include "pipelines/common/vae_plan.h"
#include "pipelines/registry.h"

namespace kiln::nodes {

// What travels on MODEL, CLIP and VAE links: which loaded checkpoint, and the LoRAs this
// branch of the graph applies to it (MODEL: UNet strengths; CLIP: text strengths).
struct ModelRef {
  std::string key;   // the model cache's key (modelKey)
  std::string path;  // the checkpoint file
  at::ScalarType dtype = at::kFloat;
  std::string name;  // display name, for the A1111 parameters
  std::string
      family;  // the loaded model's kind ("sd1", "sdxl", "wan21"), for timings and the A1111 text
  bool video = false;  // a video model's (its family renders frames)
  std::vector<LoraSpec> loras;
  LoraMode lora_mode = LoraMode::Auto;
  bool vae_file = false;  // a VAE of its own (LoadVAE), not a checkpoint
  // LoadCheckpoint's overrides of what the file says (unset: the file's).
  std::optional<sampling::Prediction> prediction;
  std::optional<bool> zero_terminal_snr;
  // Models given as a lone transformer (Wan 2.1, FLUX.1): the parts beside it, as the
  // family resolved them (FLUX: CLIP-L, then T5), and the flow shift (0: the model's).
  std::string vae_path, text_encoder_path, text_encoder_2_path;
  double flow_shift = 0;
};

struct ConditioningValue {
  at::Tensor context;                             // [1, 77, C]
  at::Tensor pooled;                              // [1, P] (SDXL, FLUX)
  std::optional<double> guidance = std::nullopt;  // FLUX.1 dev's distilled guidance (FluxGuidance)
  std::string text;
  double aesthetic_score = 6.0;  // SDXL refiner
  // SDXL size conditioning: the size the picture claims to come from and its crop offsets
  // (0: the output size, no crop).
  int64_t original_width = 0, original_height = 0, crop_top = 0, crop_left = 0;
};

// What an empty latent (EmptyLatent, EmptyVideoLatent) asks for. Its grid (channels,
// pixels per cell, frames per latent frame) belongs to the model that samples it, so the
// Sampler (or a VAEDecode) lays it out: an SD latent has 4 channels at 1/8 of the
// pixels, the starter model's 4 at 1/4, Wan 2.1's 16 at 1/8 in time steps of 4 frames.
struct LatentRequest {
  int64_t width = 0, height = 0;  // pixels, snapped to the model's grid where it is laid out
  int64_t batch = 1;
  int64_t frames = 0;  // 0: a picture's latent; else a video's frames (snapped to the grid)
};

using pipelines::LatentFormat;

struct LatentValue {
  // [B, C, h, w], scaled by scaling_factor; a video's [1, C, T, h, w]. Undefined for an
  // empty latent, which `empty` describes.
  at::Tensor samples;
  std::optional<LatentRequest> empty;
  double scaling_factor = 0;  // of the model or VAE that made it; 0: any (an empty latent)
  // A picture's latent (encoded, or sampled before), not an empty one: sampling starts
  // part-way (denoise).
  bool from_image = false;
  at::Tensor mask;           // [B or 1, 1, h, w]: 1 repaints (inpainting); undefined: all
  at::Tensor source_rgb;     // [B, 3, H, W] in [-1, 1]: the encoded picture, for exact composites
  at::Tensor pixel_mask;     // [1, 1, H, W], the mask at pixel resolution
  int64_t mask_feather = 0;  // pixels the mask's edge was blurred over (the A1111 "Mask blur")
  std::vector<std::string> parameters;  // A1111 text per image, once sampled
};

struct ImageValue {
  at::Tensor rgb;                       // [B, 3, H, W] in [0, 1]; a video's frames are its batch
  std::vector<std::string> parameters;  // A1111 text per image (none when loaded)
};

struct MaskValue {
  at::Tensor mask;  // [1, 1, H, W] in [0, 1]
};

// How a job lays out its graph beyond the nodes themselves: a render job draws a batch one
// picture after another, each with its own sampler, decode and output nodes. Their stages
// are named and numbered for their picture ("Denoising image 2 of 3"), Skip drops the later
// pictures' nodes, nodes listed together share one stage (a render's prompt and negative
// prompt: "Encoding prompt"), and each picture carries its own workflow.
struct GraphLayout {
  int images = 1;
  std::map<std::string, int> image_of;  // node id -> its picture; absent: shared by all
  std::vector<std::vector<std::string>> shared_stages;  // node ids that run as one stage
  std::map<int, std::string> workflow_of_image;         // the JSON each picture carries
  // Node id -> the units its stage expects, where the job knows them and the node's
  // parameters do not (a video's frames before the model snaps them).
  std::map<std::string, int64_t> units;
  int threads = 0;  // 0: all cores
  TimingKey timing{StageKind::Invalid, "workflow", 512 * 512, "fp32"};
};

// What one workflow run shares between its nodes.
struct WorkflowRun {
  RunEnvironment& env;
  memory::Device& device;
  ProgressTracker& tracker;
  const Job& job;
  JobResult& result;
  // Models this run holds: leases on the cache's, or loaded for this job only.
  std::map<std::string, memory::ModelCache::Lease> leases;
  std::map<std::string, std::shared_ptr<LoadedModel>> uncached;
  const GraphLayout* layout = nullptr;

  // The model of cache key `key`: one this run holds already, else the cache's (which
  // calls `load` when it has none), else `load`'s for this run only.
  LoadedModel& acquire(const std::string& key,
                       const std::function<std::shared_ptr<LoadedModel>()>& load);
  // The model behind `ref`, held by this run, else taken from the cache, else loaded
  // through its family (the registry's); `progress` reports loading.
  LoadedModel& load(const ModelRef& ref, const pipelines::LoadProgress& progress = {});
  // The loaded image model behind `ref`.
  LoadedModel& model(const ModelRef& ref);
  // The part of a model a node uses: its denoiser, its text encoders or its VAE.
  enum class Part { Unet, Text, Vae };
  // Applies the LoRAs of `ref` to the part (their model strengths to the denoiser, their
  // text strengths to the text encoders), keeping the other part's; the VAE takes none.
  void applyLoras(LoadedModel& model, const ModelRef& ref, Part part);
  // The model behind `ref` (any family's; not a VAE file) with the LoRAs of `ref` applied to
  // the part, placed on the device with room for the work `working` estimates from the
  // loaded model (none: room for the weights only); `progress` reports loading.
  LoadedModel& prepare(const ModelRef& ref, Part part,
                       const std::function<int64_t(const pipelines::Pipeline&)>& working = {},
                       const pipelines::LoadProgress& progress = {});
  // The VAE behind a VAE link (a checkpoint's, or a file's from LoadVAE), placed with
  // room for the work `working` estimates (none: only the weights), for latents of
  // `scaling_factor` (0: the VAE's model's own).
  pipelines::VaeCodec vae(const ModelRef& ref, double scaling_factor,
                          const std::function<int64_t(const pipelines::VaeCodec&)>& working = {});
  // What `estimate` returns; where it fails, 0 and a log line saying the work may run out
  // of memory.
  int64_t workingBytes(const std::string& what, const std::function<int64_t()>& estimate);
};

// One node's run: its plan entry, inputs, stage (-1: none) and the run it belongs to.
struct NodeCall {
  WorkflowRun& run;
  const graph::PlannedNode& node;
  std::map<std::string, graph::Value> inputs;
  int stage = -1;
  int image = -1;  // the batch picture the node draws (GraphLayout); -1: shared or unknown

  int64_t intParam(const std::string& name) const;
  double floatParam(const std::string& name) const;
  std::string stringParam(const std::string& name) const;
  bool boolParam(const std::string& name) const;
  bool hasInput(const std::string& name) const { return inputs.count(name) != 0; }
  template <typename T>
  const T& input(const std::string& name) const {
    return *static_cast<const T*>(inputs.at(name).data.get());
  }
};

template <typename T>
graph::Value makeValue(ValueType type, T payload, int64_t bytes = 0) {
  return {type, std::make_shared<const T>(std::move(payload)), bytes};
}

struct NodeDefinition {
  NodeSchema schema;
  StageKind stage = StageKind::Invalid;  // Invalid: runs without a stage of its own
  std::string stage_name, unit;
  // Units of work the node's stage will report, from its parameters (0: not known yet).
  std::function<int64_t(const graph::PlannedNode&)> units;
  std::function<graph::NodeOutputs(NodeCall&)> run;
  // For cached results: whether they still stand (a model handle whose model was unloaded
  // does not). Unset: always.
  std::function<bool(const graph::NodeOutputs&, const RunEnvironment&)> still_valid;
  // Called with a result taken from the node cache before the job's stages are planned
  // (a loader names its model's family, so the stages are timed as that model's).
  std::function<void(const graph::NodeOutputs&, ProgressTracker&)> reused;
  // State outside the workflow its result depends on, signed into its cache key and its
  // dependents' (see graph::OutsideState).
  std::function<std::string(const RunEnvironment&, const Job&)> outside_state;
  // Whether the node's stage has work to report this time (unset: always); a loader whose
  // model the model cache holds has none, so its stage is not planned.
  std::function<bool(const graph::PlannedNode&, const RunEnvironment&)> stage_needed;
};

// Helpers the node files share: a loader's MODEL, CLIP and VAE outputs (all `ref`); whether
// such outputs, cached, still stand (their model is still in the model cache); a save
// node's file name prefix, refused unless it is a plain name.
// Bytes a tensor holds (0 when undefined), and a tensor brought to host memory.
int64_t tensorBytes(const at::Tensor& t);
at::Tensor toHost(const memory::Device& device, const at::Tensor& t);
graph::NodeOutputs modelOutputs(const ModelRef& ref);
bool modelStillCached(const graph::NodeOutputs& outputs, const RunEnvironment& env);
// A loader's `reused`: the stages are timed as its model's.
void timeAsModel(const graph::NodeOutputs& outputs, ProgressTracker& tracker);
std::string checkedPrefix(const NodeCall& c);
// The workflow (JSON) an output node's pictures carry: its picture's in the job's layout,
// else the job's workflow; empty when neither.
std::string carriedWorkflow(const NodeCall& c);
// A VAE node's tiling parameters.
tiling::TileSettings tilingOf(const NodeCall& c);
// The pixel size an empty latent asks for, snapped down to `multiple` (at least one
// multiple); a change is logged and kept among the job's notices.
std::pair<int64_t, int64_t> snappedLatentSize(WorkflowRun& run, const LatentRequest& request,
                                              int64_t multiple);
// An empty picture latent laid out on `format`'s grid: zeros [batch, channels, h, w].
at::Tensor emptyImageLatent(WorkflowRun& run, const LatentRequest& request,
                            const LatentFormat& format);

class NodeLibrary {
 public:
  void add(NodeDefinition definition);
  const NodeDefinition* find(const std::string& type) const;
  const std::vector<NodeSchema>& schemas() const noexcept { return schemas_; }

 private:
  std::vector<NodeDefinition> definitions_;
  std::vector<NodeSchema> schemas_;
};

// Every built-in node (nodes.h lists them; video.h the video models' own).
NodeLibrary builtinNodes();

}  // namespace kiln::nodes
