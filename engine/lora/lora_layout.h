// How a LoRA file is laid out, judged from its tensors' names and shapes alone (no data,
// no torch): the module and role each name gives, the kind of patch each module is, and
// the shape of the change it makes. A file is checked this way before any of it is read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensor_io/safetensors.h"

namespace kiln::lora {

enum class LoraKind { Invalid = 0, LowRank, LoHa, LoKr, Full };
const char* loraKindName(LoraKind kind) noexcept;

using Shape = std::vector<int64_t>;

// What one tensor name says in the layouts Kiln reads: kohya (lora_unet_*, lora_te*_*,
// lora_down / lora_up / lora_mid / alpha), diffusers and PEFT (lora_A / lora_B,
// .lora.down / .lora.up, lora_linear_layer), LyCORIS LoHa (hada_*) and LoKr (lokr_*), and
// full differences (diff, diff_b).
struct LoraTensorName {
  std::string module;  // as the file spells it
  std::string role;    // "down", "up", "mid", "alpha", "hada_w1_a" ... "lokr_t2", "diff", "diff_b"
  std::string format;  // "kohya", "peft", "diffusers", "lycoris", "full"; "" for an alpha
};
std::optional<LoraTensorName> parseLoraTensorName(const std::string& name);

// The module path in one spelling for every format: dots to underscores, the format's
// prefix replaced by the component's ("unet_", "te_", "te1_", "te2_").
std::string normaliseLoraModule(std::string module);

struct LoraModuleLayout {
  std::string name;       // normalised (normaliseLoraModule)
  std::string file_name;  // as the file spells it, for reports
  LoraKind kind = LoraKind::Invalid;
  std::map<std::string, Shape> shapes;  // by role

  bool has(const std::string& role) const { return shapes.count(role) != 0; }
  const Shape& shape(const std::string& role) const { return shapes.at(role); }
};

struct LoraLayout {
  std::string format;  // the formats seen, joined with "+"
  std::vector<LoraModuleLayout> modules;
  std::vector<std::string> unrecognised;  // tensor names no format explains
};

// Every tensor sorted into modules, each module's tensors checked for the rank its role
// needs and classified. `path` names the file in messages. Throws kiln::Error: CorruptFile
// (a tensor of the wrong rank or empty, an alpha that is not one number, a module missing
// half of its pair), UnsupportedModel (a DoRA module, or no tensor in any LoRA layout).
LoraLayout readLoraLayout(const std::vector<tensor_io::TensorInfo>& tensors,
                          const std::string& path);

// The shape of the change a module makes, from its factors' shapes; nothing is built.
// Throws kiln::Error(ShapeMismatch) when the factors do not fit each other.
Shape loraDeltaShape(const LoraModuleLayout& module);

// Throws kiln::Error(ShapeMismatch) when the change `module` makes does not fit a weight
// of `weight_shape` (the same elements and the same first dimension).
void checkLoraFits(const LoraModuleLayout& module, const Shape& weight_shape);

// The rank that alpha is divided by; 0 when the format has no scale (full LoKr factors,
// full differences).
int64_t loraRank(const LoraModuleLayout& module);

}  // namespace kiln::lora
