// LoRA files: every common layout read into one form. kohya (lora_unet_*, lora_te*_*,
// lora_down / lora_up / lora_mid / alpha, original or diffusers module paths),
// diffusers and PEFT (lora_A / lora_B, .lora.down / .lora.up, lora_linear_layer),
// LyCORIS LoHa (hada_*) and LoKr (lokr_*), and full weight differences (diff, diff_b).
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

namespace kiln::lora {

enum class LoraKind { Invalid = 0, LowRank, LoHa, LoKr, Full };
const char* loraKindName(LoraKind kind) noexcept;

// One module's patch, its tensors in fp32 under format-neutral roles: "down", "up",
// "mid", "alpha", "hada_w1_a" ... "hada_t2", "lokr_w1" ... "lokr_t2", "diff", "diff_b".
struct LoraModule {
  // The module path in one spelling for every format: dots to underscores, the format's
  // prefix replaced by the component's ("unet_", "te_", "te1_", "te2_").
  std::string name;
  std::string file_name;  // as the file spells it, for reports
  LoraKind kind = LoraKind::Invalid;
  std::map<std::string, at::Tensor> tensors;

  bool has(const std::string& role) const { return tensors.count(role) != 0; }
  const at::Tensor& at(const std::string& role) const { return tensors.at(role); }
};

struct LoraFile {
  std::string path;
  std::string format;  // "kohya", "peft", "diffusers", "lycoris", "full", or a mix
  std::vector<LoraModule> modules;
  std::vector<std::string> unrecognised;  // tensor names no format explains
};

// Throws kiln::Error: FileNotFound, CorruptFile (malformed or truncated safetensors,
// NaN or infinite values, a module missing half of its pair), UnsupportedModel (no
// tensor in any LoRA layout, or a DoRA file).
LoraFile readLoraFile(const std::string& path);

// Throws kiln::Error(ShapeMismatch) when the change `module` makes (its shape computed
// from the factors' shapes, nothing built) does not fit a weight of `weight_shape`.
void checkLoraFits(const LoraModule& module, const std::vector<int64_t>& weight_shape);

// The module's weight difference at strength 1 (alpha / rank applied; rank when alpha is
// absent), in fp32, reshaped to `weight_shape`. Throws kiln::Error(ShapeMismatch) naming
// the module and both shapes when it does not fit.
at::Tensor loraDelta(const LoraModule& module, const std::vector<int64_t>& weight_shape);

}  // namespace kiln::lora
