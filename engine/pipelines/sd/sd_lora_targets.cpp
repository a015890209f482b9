#include "pipelines/sd/sd_lora_targets.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "pipelines/common/transformer_lora_targets.h"
#include "tensor_io/key_map.h"

namespace kiln::pipelines {
namespace {

using lora::LoraTarget;

std::unordered_map<std::string, at::Tensor*> slotsByName(const weights::ParamList& params) {
  std::unordered_map<std::string, at::Tensor*> out;
  for (const auto& slot : params.slots()) out[slot.name] = slot.tensor;
  return out;
}

at::Tensor* lookup(const std::unordered_map<std::string, at::Tensor*>& slots,
                   const std::string& name) {
  const auto it = slots.find(name);
  return it == slots.end() ? nullptr : it->second;
}

// The layer whose weight is `<base>.weight` (or `<base>` + weight_suffix) and bias beside it.
LoraTarget layerTarget(const std::unordered_map<std::string, at::Tensor*>& slots,
                       const std::string& base, bool text, const char* weight_suffix = ".weight",
                       const char* bias_suffix = ".bias") {
  LoraTarget t;
  t.key = base + weight_suffix;
  t.weight = lookup(slots, t.key);
  t.bias = lookup(slots, base + bias_suffix);
  t.text = text;
  return t;
}

void addUNet(const SdPipeline& pipeline, lora::TargetMap& map) {
  const models::SdModelSpec& spec = pipeline.spec();
  const auto unet = slotsByName(pipeline.unet().params());
  for (const auto& slot : pipeline.unet().params().slots()) {
    if (!slot.name.ends_with(".weight") || !slot.name.starts_with(spec.unet_prefix)) continue;
    const std::string path =
        slot.name.substr(spec.unet_prefix.size(), slot.name.size() - spec.unet_prefix.size() - 7);
    const LoraTarget t = layerTarget(unet, spec.unet_prefix + path, false);
    map.add("unet_" + underscored(path), t);
    if (const std::string d = tensor_io::originalToDiffusersUNet(path, spec.unet.num_res_blocks);
        !d.empty())
      map.add("unet_" + underscored(d), t);
  }
}

// kohya and diffusers name OpenCLIP encoders by their transformers equivalents.
void addOpenClip(const models::TextEncoderSpec& te,
                 const std::unordered_map<std::string, at::Tensor*>& slots,
                 const std::function<void(const std::string&, const LoraTarget&)>& addAll) {
  for (int64_t l = 0; l < te.config.layers; ++l) {
    const std::string base = te.prefix + "transformer.resblocks." + std::to_string(l) + ".";
    const std::string hf = "text_model.encoder.layers." + std::to_string(l) + ".";
    const char* qkv[] = {"q_proj", "k_proj", "v_proj"};
    for (int64_t j = 0; j < 3; ++j) {
      LoraTarget t = layerTarget(slots, base + "attn.in_proj", true, "_weight", "_bias");
      t.row_offset = j * te.config.hidden;
      t.rows = te.config.hidden;
      if (t.weight) addAll(hf + "self_attn." + qkv[j], t);
    }
    const std::pair<const char*, const char*> linears[] = {{"attn.out_proj", "self_attn.out_proj"},
                                                           {"mlp.c_fc", "mlp.fc1"},
                                                           {"mlp.c_proj", "mlp.fc2"}};
    for (const auto& [open_clip, hf_name] : linears) {
      const LoraTarget t = layerTarget(slots, base + open_clip, true);
      if (t.weight) addAll(hf + hf_name, t);
    }
  }
}

void addTextEncoder(const SdPipeline& pipeline, std::size_t i, lora::TargetMap& map) {
  const models::TextEncoderSpec& te = pipeline.spec().text_encoders[i];
  const weights::ParamList& params = pipeline.textEncoder(i).params();
  const auto slots = slotsByName(params);
  const std::vector<std::string> tags =
      i == 0 ? std::vector<std::string>{"te_", "te1_"}
             : std::vector<std::string>{"te" + std::to_string(i + 1) + "_"};
  const auto addAll = [&](const std::string& hf_path, const LoraTarget& t) {
    for (const auto& tag : tags) map.add(tag + underscored(hf_path), t);
  };
  if (te.config.layout == models::ClipLayout::OpenClip) {
    addOpenClip(te, slots, addAll);
    return;
  }
  for (const auto& slot : params.slots()) {
    if (!slot.name.ends_with(".weight") || !slot.name.starts_with(te.prefix)) continue;
    const std::string path =
        slot.name.substr(te.prefix.size(), slot.name.size() - te.prefix.size() - 7);
    addAll("text_model." + path, layerTarget(slots, te.prefix + path, true));
  }
}

}  // namespace

lora::LoraTargets sdLoraTargets(const SdPipeline& pipeline) {
  lora::LoraTargets out;
  out.model_name = models::familyName(pipeline.spec().family);
  out.components.push_back(&pipeline.unet().params());
  addUNet(pipeline, out.targets);
  for (std::size_t i = 0; i < pipeline.spec().text_encoders.size(); ++i) {
    out.components.push_back(&pipeline.textEncoder(i).params());
    addTextEncoder(pipeline, i, out.targets);
  }
  return out;
}

}  // namespace kiln::pipelines
