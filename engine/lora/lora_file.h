// LoRA files: every common layout read into one form. kohya (lora_unet_*, lora_te*_*,
// lora_down / lora_up / lora_mid / alpha, original or diffusers module paths),
// diffusers and PEFT (lora_A / lora_B, .lora.down / .lora.up, lora_linear_layer),
// LyCORIS LoHa (hada_*) and LoKr (lokr_*), and full weight differences (diff, diff_b).
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "lora/lora_layout.h"

namespace kiln::lora {

// One module's patch: its layout (name, kind, shapes by role) and its tensors in fp32
// under the same roles.
struct LoraModule : LoraModuleLayout {
  std::map<std::string, at::Tensor> tensors;

  const at::Tensor& at(const std::string& role) const { return tensors.at(role); }
};

struct LoraFile {
  std::string path;
  std::string format;  // "kohya", "peft", "diffusers", "lycoris", "full", or a mix
  std::vector<LoraModule> modules;
  std::vector<std::string> unrecognised;  // tensor names no format explains
};

// The layout is read and checked first (lora_layout.h), then the tensors. Throws
// kiln::Error: FileNotFound, CorruptFile (malformed or truncated safetensors, NaN or
// infinite values, a module missing half of its pair), UnsupportedModel (no tensor in any
// LoRA layout, or a DoRA file).
LoraFile readLoraFile(const std::string& path);

// The module's weight difference at strength 1 (alpha / rank applied; rank when alpha is
// absent), in fp32, reshaped to `weight_shape`. Throws kiln::Error(ShapeMismatch) naming
// the module and both shapes when it does not fit.
at::Tensor loraDelta(const LoraModule& module, const std::vector<int64_t>& weight_shape);

}  // namespace kiln::lora
