#include "lora/lora_layout.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "kiln/error.h"
#include "tensor_io/tensor_index.h"

namespace kiln::lora {
namespace {

// Tensor-name endings of every layout and the role each gives its tensor. Longer endings
// that share a tail with shorter ones come first.
constexpr std::pair<const char*, const char*> kSuffixes[] = {
    {".lora_linear_layer.down.weight", "down"},
    {".lora_linear_layer.up.weight", "up"},
    {".lora_down.weight", "down"},
    {".lora_up.weight", "up"},
    {".lora_mid.weight", "mid"},
    {".lora_A.default.weight", "down"},
    {".lora_B.default.weight", "up"},
    {".lora_A.weight", "down"},
    {".lora_B.weight", "up"},
    {".lora.down.weight", "down"},
    {".lora.up.weight", "up"},
    {".hada_w1_a", "hada_w1_a"},
    {".hada_w1_b", "hada_w1_b"},
    {".hada_w2_a", "hada_w2_a"},
    {".hada_w2_b", "hada_w2_b"},
    {".hada_t1", "hada_t1"},
    {".hada_t2", "hada_t2"},
    {".lokr_w1_a", "lokr_w1_a"},
    {".lokr_w1_b", "lokr_w1_b"},
    {".lokr_w2_a", "lokr_w2_a"},
    {".lokr_w2_b", "lokr_w2_b"},
    {".lokr_w1", "lokr_w1"},
    {".lokr_w2", "lokr_w2"},
    {".lokr_t2", "lokr_t2"},
    {".diff_b", "diff_b"},
    {".diff", "diff"},
    {".alpha", "alpha"},
    {".dora_scale", "dora_scale"},
};

std::string formatOf(const std::string& suffix, const std::string& module) {
  if (suffix.starts_with(".hada_") || suffix.starts_with(".lokr_")) return "lycoris";
  if (suffix.starts_with(".diff")) return "full";
  if (suffix.starts_with(".lora_A") || suffix.starts_with(".lora_B")) return "peft";
  if (suffix.starts_with(".lora.") || suffix.starts_with(".lora_linear_layer")) return "diffusers";
  if (suffix.starts_with(".alpha")) return "";
  return module.starts_with("lora_") ? "kohya" : "diffusers";
}

using tensor_io::shapeToString;

// The product of shape[from..], saturating at int64's largest value (so that a crafted
// shape cannot overflow); 0 when a dimension is 0 or less.
int64_t product(const Shape& shape, std::size_t from = 0) {
  int64_t n = 1;
  for (std::size_t k = from; k < shape.size(); ++k) {
    const int64_t s = shape[k];
    if (s <= 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / s) return std::numeric_limits<int64_t>::max();
    n *= s;
  }
  return n;
}

// How many dimensions each role's tensor has in the formats that use it.
struct RankRule {
  const char* role;
  std::size_t min_dim, max_dim;
};
constexpr RankRule kRankRules[] = {
    {"up", 1, 4},        {"down", 1, 4},      {"mid", 4, 4},       {"alpha", 0, 1},
    {"hada_w1_a", 2, 4}, {"hada_w1_b", 2, 4}, {"hada_w2_a", 2, 4}, {"hada_w2_b", 2, 4},
    {"hada_t1", 4, 4},   {"hada_t2", 4, 4},   {"lokr_w1", 2, 2},   {"lokr_w1_a", 2, 2},
    {"lokr_w1_b", 2, 2}, {"lokr_w2", 2, 4},   {"lokr_w2_a", 2, 2}, {"lokr_w2_b", 2, 4},
    {"lokr_t2", 4, 4},   {"diff", 1, 4},      {"diff_b", 1, 1},    {"dora_scale", 1, 4},
};

// Every tensor of a module has the rank its role needs and no empty dimension, so that
// nothing later indexes past a shape (a 0-d lokr_w2_b crashed the process once).
void checkRanks(const LoraModuleLayout& m, const std::string& path) {
  for (const auto& [role, shape] : m.shapes) {
    for (const RankRule& rule : kRankRules) {
      if (role != rule.role) continue;
      if (shape.size() < rule.min_dim || shape.size() > rule.max_dim)
        throw Error(ErrorKind::CorruptFile,
                    "LoRA file '" + path + "': tensor '" + m.file_name + "." + role + "' has " +
                        std::to_string(shape.size()) + " dimensions " + shapeToString(shape) +
                        "; a " + role + " tensor has " +
                        (rule.min_dim == rule.max_dim ? std::to_string(rule.min_dim)
                                                      : std::to_string(rule.min_dim) + " to " +
                                                            std::to_string(rule.max_dim)) +
                        "; the file is damaged or not a LoRA");
    }
    if (product(shape) == 0)
      throw Error(ErrorKind::CorruptFile, "LoRA file '" + path + "': tensor '" + m.file_name + "." +
                                              role + "' " + shapeToString(shape) +
                                              " is empty; the file is damaged");
    if (role == "alpha" && product(shape) != 1)
      throw Error(ErrorKind::CorruptFile, "LoRA file '" + path + "': '" + m.file_name + ".alpha' " +
                                              shapeToString(shape) + " is not one number");
  }
}

void classify(LoraModuleLayout& m) {
  const auto need = [&](std::initializer_list<const char*> roles) {
    for (const char* r : roles)
      if (!m.has(r))
        throw Error(ErrorKind::CorruptFile,
                    "LoRA module '" + m.file_name + "' has no '" + r +
                        "' tensor to go with the others; the file is incomplete");
  };
  if (m.has("dora_scale"))
    throw Error(
        ErrorKind::UnsupportedModel,
        "LoRA module '" + m.file_name + "' is DoRA (dora_scale), which Kiln does not apply yet");
  if (m.has("down") || m.has("up")) {
    m.kind = LoraKind::LowRank;
    need({"down", "up"});
  } else if (m.has("hada_w1_a") || m.has("hada_w2_a")) {
    m.kind = LoraKind::LoHa;
    need({"hada_w1_a", "hada_w1_b", "hada_w2_a", "hada_w2_b"});
  } else if (m.has("lokr_w1") || m.has("lokr_w1_a") || m.has("lokr_w2") || m.has("lokr_w2_a")) {
    m.kind = LoraKind::LoKr;
    if (!m.has("lokr_w1")) need({"lokr_w1_a", "lokr_w1_b"});
    if (!m.has("lokr_w2")) need({"lokr_w2_a", "lokr_w2_b"});
  } else if (m.has("diff") || m.has("diff_b")) {
    m.kind = LoraKind::Full;
  }
}

[[noreturn]] void mismatch(const LoraModuleLayout& m, const std::string& what) {
  throw Error(ErrorKind::ShapeMismatch,
              "LoRA module '" + m.file_name + "' (" + loraKindName(m.kind) + "): " + what);
}

// The product of two factors as matrix(left) [o, r] @ matrix(right) [r, ...]: its shape,
// checked, without computing it.
Shape productShape(const LoraModuleLayout& m, const char* left_role, const char* right_role) {
  const Shape& left = m.shape(left_role);
  const Shape& right = m.shape(right_role);
  if (left.empty() || right.empty())
    mismatch(m, std::string(left_role) + " or " + right_role + " has no dimensions");
  if (product(left, 1) != right[0])
    mismatch(m, std::string(left_role) + " " + shapeToString(left) + " and " + right_role + " " +
                    shapeToString(right) + " have different ranks");
  return {left[0], product(right, 1)};
}

// A Tucker product's shape: core [r1, r2, kh, kw] between left [out, r1] and right [r2, in].
Shape tuckerShape(const LoraModuleLayout& m, const char* core_role, const char* left_role,
                  const char* right_role) {
  const Shape& core = m.shape(core_role);
  const Shape& left = m.shape(left_role);
  const Shape& right = m.shape(right_role);
  if (core.size() != 4 || left.empty() || right.empty() || product(left, 1) != core[0] ||
      right[0] != core[1])
    mismatch(m, "a Tucker core " + shapeToString(core) + " does not fit its factors " +
                    shapeToString(left) + " and " + shapeToString(right));
  return {left[0], product(right, 1), core[2], core[3]};
}

}  // namespace

const char* loraKindName(LoraKind kind) noexcept {
  switch (kind) {
    case LoraKind::LowRank:
      return "LoRA";
    case LoraKind::LoHa:
      return "LoHa";
    case LoraKind::LoKr:
      return "LoKr";
    case LoraKind::Full:
      return "full difference";
    case LoraKind::Invalid:
      break;
  }
  return "invalid";
}

std::optional<LoraTensorName> parseLoraTensorName(const std::string& name) {
  for (const auto& [suffix, role] : kSuffixes) {
    if (!name.ends_with(suffix)) continue;
    std::string module = name.substr(0, name.size() - std::char_traits<char>::length(suffix));
    if (module.empty()) return std::nullopt;
    std::string format = formatOf(suffix, module);
    return LoraTensorName{std::move(module), role, std::move(format)};
  }
  return std::nullopt;
}

std::string normaliseLoraModule(std::string module) {
  std::replace(module.begin(), module.end(), '.', '_');
  std::replace(module.begin(), module.end(), '-', '_');
  if (module.starts_with("base_model_model_")) module = module.substr(17);
  static const std::pair<const char*, const char*> kPrefixes[] = {
      {"lora_unet_", "unet_"}, {"lora_te1_", "te1_"},       {"lora_te2_", "te2_"},
      {"lora_te_", "te_"},     {"text_encoder_2_", "te2_"}, {"text_encoder_", "te_"},
      {"lycoris_", "unet_"}};
  for (const auto& [from, to] : kPrefixes)
    if (module.starts_with(from))
      return std::string(to) + module.substr(std::char_traits<char>::length(from));
  return module;
}

LoraLayout readLoraLayout(const std::vector<tensor_io::TensorInfo>& tensors,
                          const std::string& path) {
  LoraLayout out;
  std::map<std::string, LoraModuleLayout> modules;
  std::set<std::string> formats;
  for (const auto& info : tensors) {
    const std::optional<LoraTensorName> parsed = parseLoraTensorName(info.name);
    if (!parsed) {
      out.unrecognised.push_back(info.name);
      continue;
    }
    if (!parsed->format.empty()) formats.insert(parsed->format);
    LoraModuleLayout& m = modules[parsed->module];
    m.file_name = parsed->module;
    m.name = normaliseLoraModule(parsed->module);
    m.shapes[parsed->role] = info.shape;
  }
  for (auto& [file_name, m] : modules) {
    checkRanks(m, path);
    classify(m);
    if (m.kind == LoraKind::Invalid) {  // an alpha with nothing to scale
      for (const auto& [role, shape] : m.shapes)
        out.unrecognised.push_back(m.file_name + "." + role);
      continue;
    }
    out.modules.push_back(std::move(m));
  }
  if (out.modules.empty())
    throw Error(ErrorKind::UnsupportedModel,
                "'" + path +
                    "' holds no tensor in a LoRA layout Kiln reads (kohya lora_down/lora_up, "
                    "PEFT lora_A/lora_B, diffusers, LoHa, LoKr or full differences)" +
                    (out.unrecognised.empty()
                         ? std::string()
                         : "; its first tensor is '" + out.unrecognised.front() + "'"));
  for (const auto& f : formats) out.format += (out.format.empty() ? "" : "+") + f;
  return out;
}

Shape loraDeltaShape(const LoraModuleLayout& m) {
  switch (m.kind) {
    case LoraKind::LowRank:
      if (m.has("mid")) return tuckerShape(m, "mid", "up", "down");
      return productShape(m, "up", "down");
    case LoraKind::LoHa: {
      const bool tucker = m.has("hada_t1") && m.has("hada_t2");
      const Shape a = tucker ? tuckerShape(m, "hada_t1", "hada_w1_a", "hada_w1_b")
                             : productShape(m, "hada_w1_a", "hada_w1_b");
      const Shape b = tucker ? tuckerShape(m, "hada_t2", "hada_w2_a", "hada_w2_b")
                             : productShape(m, "hada_w2_a", "hada_w2_b");
      if (a != b)
        mismatch(
            m, "its two products have the shapes " + shapeToString(a) + " and " + shapeToString(b));
      return a;
    }
    case LoraKind::LoKr: {
      const Shape w1 =
          m.has("lokr_w1") ? m.shape("lokr_w1") : productShape(m, "lokr_w1_a", "lokr_w1_b");
      Shape w2;
      if (m.has("lokr_w2")) {
        w2 = m.shape("lokr_w2");
      } else if (m.has("lokr_t2")) {
        w2 = tuckerShape(m, "lokr_t2", "lokr_w2_a", "lokr_w2_b");
      } else {
        (void)productShape(m, "lokr_w2_a", "lokr_w2_b");
        w2 = m.shape("lokr_w2_b");
        w2[0] = m.shape("lokr_w2_a")[0];
      }
      // The Kronecker product of w1 (padded with ones) and w2.
      Shape out = w2;
      for (std::size_t k = 0; k < out.size(); ++k) {
        const int64_t a = k < w1.size() ? w1[k] : 1;
        if (out[k] > 0 && a > std::numeric_limits<int64_t>::max() / out[k])
          mismatch(m, "its Kronecker product overflows");
        out[k] *= a;
      }
      return out;
    }
    case LoraKind::Full:
      if (!m.has("diff")) mismatch(m, "it has a bias difference only, no weight difference");
      return m.shape("diff");
    case LoraKind::Invalid:
      break;
  }
  throw Error(ErrorKind::InvalidArgument, "LoRA module '" + m.file_name + "' has no kind");
}

void checkLoraFits(const LoraModuleLayout& module, const Shape& weight_shape) {
  const Shape shape = loraDeltaShape(module);
  if (shape.empty() || weight_shape.empty() || product(shape) != product(weight_shape) ||
      shape[0] != weight_shape[0])
    throw Error(ErrorKind::ShapeMismatch,
                "LoRA module '" + module.file_name + "' (" + loraKindName(module.kind) +
                    ") makes a change of shape " + shapeToString(shape) +
                    " for a weight of shape " + shapeToString(weight_shape));
}

int64_t loraRank(const LoraModuleLayout& m) {
  switch (m.kind) {
    case LoraKind::LowRank:
      return m.shape("down")[0];
    case LoraKind::LoHa:
      return m.shape("hada_w1_b")[0];
    case LoraKind::LoKr:
      if (m.has("lokr_w1_b")) return m.shape("lokr_w1_b")[0];
      if (m.has("lokr_w2_b")) return m.shape("lokr_w2_b")[0];
      return 0;
    case LoraKind::Full:
    case LoraKind::Invalid:
      break;
  }
  return 0;
}

}  // namespace kiln::lora
