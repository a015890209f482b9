#include "lora/lora_file.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>

#include "kiln/error.h"
#include "tensor_io/materialize.h"
#include "tensor_io/safetensors.h"

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

std::string normalise(std::string module) {
  std::replace(module.begin(), module.end(), '.', '_');
  std::replace(module.begin(), module.end(), '-', '_');
  if (module.starts_with("base_model_model_")) module = module.substr(17);
  static const std::pair<const char*, const char*> kPrefixes[] = {
      {"lora_unet_", "unet_"},          {"lora_te1_", "te1_"},    {"lora_te2_", "te2_"},
      {"lora_te_", "te_"},              {"text_encoder_2_", "te2_"}, {"text_encoder_", "te_"},
      {"lycoris_", "unet_"}};
  for (const auto& [from, to] : kPrefixes)
    if (module.starts_with(from)) return std::string(to) + module.substr(std::string(from).size());
  return module;
}

std::string formatOf(const std::string& suffix, const std::string& module) {
  if (suffix.starts_with(".hada_") || suffix.starts_with(".lokr_")) return "lycoris";
  if (suffix.starts_with(".diff")) return "full";
  if (suffix.starts_with(".lora_A") || suffix.starts_with(".lora_B")) return "peft";
  if (suffix.starts_with(".lora.") || suffix.starts_with(".lora_linear_layer")) return "diffusers";
  if (suffix.starts_with(".alpha")) return "";
  return module.starts_with("lora_") ? "kohya" : "diffusers";
}

std::string shapeText(const at::Tensor& t) { return tensor_io::shapeToString(t.sizes().vec()); }

using Shape = std::vector<int64_t>;

// How many dimensions each role's tensor has in the formats that use it.
struct RankRule {
  const char* role;
  int64_t min_dim, max_dim;
};
constexpr RankRule kRankRules[] = {
    {"up", 1, 4},        {"down", 1, 4},      {"mid", 4, 4},       {"alpha", 0, 1},     {"hada_w1_a", 2, 4},
    {"hada_w1_b", 2, 4}, {"hada_w2_a", 2, 4}, {"hada_w2_b", 2, 4}, {"hada_t1", 4, 4},   {"hada_t2", 4, 4},
    {"lokr_w1", 2, 2},   {"lokr_w1_a", 2, 2}, {"lokr_w1_b", 2, 2}, {"lokr_w2", 2, 4},   {"lokr_w2_a", 2, 2},
    {"lokr_w2_b", 2, 4}, {"lokr_t2", 4, 4},   {"diff", 1, 4},      {"diff_b", 1, 1},    {"dora_scale", 1, 4},
};

// Every tensor of a module has the rank its role needs and no empty dimension, so that
// nothing later indexes past a shape (a 0-d lokr_w2_b crashed the process once).
void checkRanks(const LoraModule& m, const std::string& path) {
  for (const auto& [role, t] : m.tensors) {
    for (const RankRule& rule : kRankRules) {
      if (role != rule.role) continue;
      if (t.dim() < rule.min_dim || t.dim() > rule.max_dim)
        throw Error(ErrorKind::CorruptFile,
                    "LoRA file '" + path + "': tensor '" + m.file_name + "." + role + "' has " +
                        std::to_string(t.dim()) + " dimensions " + shapeText(t) + "; a " + role + " tensor has " +
                        (rule.min_dim == rule.max_dim ? std::to_string(rule.min_dim)
                                                      : std::to_string(rule.min_dim) + " to " + std::to_string(rule.max_dim)) +
                        "; the file is damaged or not a LoRA");
    }
    if (t.numel() == 0)
      throw Error(ErrorKind::CorruptFile, "LoRA file '" + path + "': tensor '" + m.file_name + "." + role + "' " +
                                              shapeText(t) + " is empty; the file is damaged");
    if (role == "alpha" && t.numel() != 1)
      throw Error(ErrorKind::CorruptFile, "LoRA file '" + path + "': '" + m.file_name + ".alpha' " + shapeText(t) +
                                              " is not one number");
  }
}

[[noreturn]] void mismatch(const LoraModule& m, const std::string& what) {
  throw Error(ErrorKind::ShapeMismatch, "LoRA module '" + m.file_name + "' (" + loraKindName(m.kind) + "): " + what);
}

std::string dims(const at::Tensor& t) { return shapeText(t); }

// The product of two factors as matrix(left) [o, r] @ matrix(right) [r, ...]: its shape,
// checked, without computing it.
Shape productShape(const LoraModule& m, const at::Tensor& left, const at::Tensor& right, const char* left_role,
                   const char* right_role) {
  const int64_t inner = left.dim() == 1 ? 1 : left.numel() / left.size(0);
  if (inner != right.size(0))
    mismatch(m, std::string(left_role) + " " + dims(left) + " and " + right_role + " " + dims(right) +
                    " have different ranks");
  int64_t cols = 1;
  for (int64_t k = 1; k < right.dim(); ++k) cols *= right.size(k);
  return {left.size(0), cols};
}

// A Tucker product's shape: core [r1, r2, kh, kw] between left [out, r1] and right [r2, in].
Shape tuckerShape(const LoraModule& m, const at::Tensor& core, const at::Tensor& left, const at::Tensor& right) {
  const int64_t l_cols = left.dim() == 1 ? 1 : left.numel() / left.size(0);
  if (l_cols != core.size(0) || right.size(0) != core.size(1))
    mismatch(m, "a Tucker core " + dims(core) + " does not fit its factors " + dims(left) + " and " + dims(right));
  return {left.size(0), right.numel() / right.size(0), core.size(2), core.size(3)};
}

int64_t elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s <= 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / s) return std::numeric_limits<int64_t>::max();
    n *= s;
  }
  return n;
}

// The shape of the change a module makes, from its factors' shapes alone.
Shape deltaShape(const LoraModule& m) {
  switch (m.kind) {
    case LoraKind::LowRank:
      if (m.has("mid")) return tuckerShape(m, m.at("mid"), m.at("up"), m.at("down"));
      return productShape(m, m.at("up"), m.at("down"), "up", "down");
    case LoraKind::LoHa: {
      const bool tucker = m.has("hada_t1") && m.has("hada_t2");
      const Shape a = tucker ? tuckerShape(m, m.at("hada_t1"), m.at("hada_w1_a"), m.at("hada_w1_b"))
                             : productShape(m, m.at("hada_w1_a"), m.at("hada_w1_b"), "hada_w1_a", "hada_w1_b");
      const Shape b = tucker ? tuckerShape(m, m.at("hada_t2"), m.at("hada_w2_a"), m.at("hada_w2_b"))
                             : productShape(m, m.at("hada_w2_a"), m.at("hada_w2_b"), "hada_w2_a", "hada_w2_b");
      if (a != b)
        mismatch(m, "its two products have the shapes " + tensor_io::shapeToString(a) + " and " +
                        tensor_io::shapeToString(b));
      return a;
    }
    case LoraKind::LoKr: {
      const Shape w1 = m.has("lokr_w1") ? m.at("lokr_w1").sizes().vec()
                                        : productShape(m, m.at("lokr_w1_a"), m.at("lokr_w1_b"), "lokr_w1_a", "lokr_w1_b");
      Shape w2;
      if (m.has("lokr_w2")) {
        w2 = m.at("lokr_w2").sizes().vec();
      } else if (m.has("lokr_t2")) {
        w2 = tuckerShape(m, m.at("lokr_t2"), m.at("lokr_w2_a"), m.at("lokr_w2_b"));
      } else {
        (void)productShape(m, m.at("lokr_w2_a"), m.at("lokr_w2_b"), "lokr_w2_a", "lokr_w2_b");
        w2 = m.at("lokr_w2_b").sizes().vec();
        w2[0] = m.at("lokr_w2_a").size(0);
      }
      // The Kronecker product of w1 (padded with ones) and w2.
      Shape out = w2;
      for (std::size_t k = 0; k < out.size(); ++k) {
        const int64_t a = k < w1.size() ? w1[k] : 1;
        if (out[k] > 0 && a > std::numeric_limits<int64_t>::max() / out[k]) mismatch(m, "its Kronecker product overflows");
        out[k] *= a;
      }
      return out;
    }
    case LoraKind::Full:
      return m.at("diff").sizes().vec();
    case LoraKind::Invalid:
      break;
  }
  throw Error(ErrorKind::InvalidArgument, "LoRA module '" + m.file_name + "' has no kind");
}

// [out, in, ...] as a matrix [out, in * ...].
at::Tensor matrix(const at::Tensor& t) { return t.dim() == 1 ? t.unsqueeze(1) : t.flatten(1); }

// Rebuilds a Tucker-decomposed kernel: core [r1, r2, kh, kw] between the factors
// left [out, r1] and right [r2, in], giving [out, in, kh, kw].
at::Tensor tucker(const at::Tensor& core, const at::Tensor& left, const at::Tensor& right) {
  const at::Tensor c = core.permute({2, 3, 0, 1});                    // [kh, kw, r1, r2]
  const at::Tensor m = at::matmul(at::matmul(matrix(left), c), matrix(right));  // [kh, kw, out, in]
  return m.permute({2, 3, 0, 1});
}

at::Tensor lowRank(const LoraModule& m) {
  const at::Tensor& up = m.at("up");
  const at::Tensor& down = m.at("down");
  if (m.has("mid")) return tucker(m.at("mid"), up, down);
  if (matrix(up).size(1) != down.size(0))
    throw Error(ErrorKind::ShapeMismatch, "LoRA module '" + m.file_name + "': up " + shapeText(up) +
                                              " and down " + shapeText(down) + " have different ranks");
  return at::matmul(matrix(up), matrix(down));
}

at::Tensor loha(const LoraModule& m) {
  const at::Tensor& w1a = m.at("hada_w1_a");
  const at::Tensor& w1b = m.at("hada_w1_b");
  const at::Tensor& w2a = m.at("hada_w2_a");
  const at::Tensor& w2b = m.at("hada_w2_b");
  if (m.has("hada_t1") && m.has("hada_t2"))
    return tucker(m.at("hada_t1"), w1a, w1b) * tucker(m.at("hada_t2"), w2a, w2b);
  return at::matmul(matrix(w1a), matrix(w1b)) * at::matmul(matrix(w2a), matrix(w2b));
}

at::Tensor lokr(const LoraModule& m) {
  const at::Tensor w1 = m.has("lokr_w1") ? m.at("lokr_w1") : at::matmul(m.at("lokr_w1_a"), m.at("lokr_w1_b"));
  at::Tensor w2;
  if (m.has("lokr_w2"))
    w2 = m.at("lokr_w2");
  else if (m.has("lokr_t2"))
    w2 = tucker(m.at("lokr_t2"), m.at("lokr_w2_a"), m.at("lokr_w2_b"));
  else {
    // w2_a [c, r] @ w2_b [r, d, ...] -> [c, d, ...]
    std::vector<int64_t> shape = m.at("lokr_w2_b").sizes().vec();
    shape[0] = m.at("lokr_w2_a").size(0);
    w2 = at::matmul(m.at("lokr_w2_a"), m.at("lokr_w2_b").flatten(1)).view(shape);
  }
  at::Tensor a = w1;
  while (a.dim() < w2.dim()) a = a.unsqueeze(-1);
  return at::kron(a, w2);
}

// The rank that alpha is divided by; 0 when the format has no scale (full LoKr factors).
int64_t rankOf(const LoraModule& m) {
  switch (m.kind) {
    case LoraKind::LowRank:
      return m.at("down").size(0);
    case LoraKind::LoHa:
      return m.at("hada_w1_b").size(0);
    case LoraKind::LoKr:
      if (m.has("lokr_w1_b")) return m.at("lokr_w1_b").size(0);
      if (m.has("lokr_w2_b")) return m.at("lokr_w2_b").size(0);
      return 0;
    case LoraKind::Full:
    case LoraKind::Invalid:
      break;
  }
  return 0;
}

void classify(LoraModule& m) {
  const auto need = [&](std::initializer_list<const char*> roles) {
    for (const char* r : roles)
      if (!m.has(r))
        throw Error(ErrorKind::CorruptFile, "LoRA module '" + m.file_name + "' has no '" + r +
                                                "' tensor to go with the others; the file is incomplete");
  };
  if (m.has("dora_scale"))
    throw Error(ErrorKind::UnsupportedModel, "LoRA module '" + m.file_name +
                                                 "' is DoRA (dora_scale), which Kiln does not apply yet");
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

LoraFile readLoraFile(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw Error(ErrorKind::FileNotFound, "LoRA file '" + path + "' does not exist or is not a file");
  const auto file = tensor_io::SafetensorsFile::open(path);
  LoraFile out;
  out.path = path;
  std::map<std::string, LoraModule> modules;
  std::set<std::string> formats;
  for (const auto& info : file->tensors()) {
    const char* role = nullptr;
    std::string module;
    for (const auto& [suffix, r] : kSuffixes) {
      if (!info.name.ends_with(suffix)) continue;
      role = r;
      module = info.name.substr(0, info.name.size() - std::string(suffix).size());
      if (const std::string f = formatOf(suffix, module); !f.empty()) formats.insert(f);
      break;
    }
    if (!role || module.empty()) {
      out.unrecognised.push_back(info.name);
      continue;
    }
    tensor_io::IndexEntry entry;
    entry.dtype = info.dtype;
    entry.shape = info.shape;
    entry.transform = tensor_io::Transform::Identity;
    entry.sources.push_back({file, &info});
    at::Tensor t = tensor_io::materialize(entry, at::kFloat).clone();
    if (!at::isfinite(t).all().item<bool>())
      throw Error(ErrorKind::CorruptFile, "LoRA file '" + path + "': tensor '" + info.name +
                                              "' holds NaN or infinite values; the file is damaged");
    LoraModule& m = modules[module];
    m.file_name = module;
    m.name = normalise(module);
    m.tensors[role] = std::move(t);
  }
  for (auto& [name, m] : modules) {
    checkRanks(m, path);
    classify(m);
    if (m.kind == LoraKind::Invalid) {  // an alpha with nothing to scale
      for (const auto& [role, t] : m.tensors) out.unrecognised.push_back(m.file_name + "." + role);
      continue;
    }
    out.modules.push_back(std::move(m));
  }
  if (out.modules.empty())
    throw Error(ErrorKind::UnsupportedModel,
                "'" + path + "' holds no tensor in a LoRA layout Kiln reads (kohya lora_down/lora_up, "
                "PEFT lora_A/lora_B, diffusers, LoHa, LoKr or full differences)" +
                    (out.unrecognised.empty() ? std::string() : "; its first tensor is '" + out.unrecognised.front() + "'"));
  for (const auto& f : formats) out.format += (out.format.empty() ? "" : "+") + f;
  return out;
}

void checkLoraFits(const LoraModule& module, const std::vector<int64_t>& weight_shape) {
  const Shape shape = deltaShape(module);
  if (elements(shape) != elements(weight_shape) || shape.empty() || weight_shape.empty() || shape[0] != weight_shape[0])
    throw Error(ErrorKind::ShapeMismatch, "LoRA module '" + module.file_name + "' (" + loraKindName(module.kind) +
                                              ") makes a change of shape " + tensor_io::shapeToString(shape) +
                                              " for a weight of shape " + tensor_io::shapeToString(weight_shape));
}

at::Tensor loraDelta(const LoraModule& module, const std::vector<int64_t>& weight_shape) {
  // The result's shape first: a small file must not make a huge tensor for a weight it
  // does not fit.
  checkLoraFits(module, weight_shape);
  at::Tensor d;
  switch (module.kind) {
    case LoraKind::LowRank:
      d = lowRank(module);
      break;
    case LoraKind::LoHa:
      d = loha(module);
      break;
    case LoraKind::LoKr:
      d = lokr(module);
      break;
    case LoraKind::Full:
      d = module.at("diff");
      break;
    case LoraKind::Invalid:
      throw Error(ErrorKind::InvalidArgument, "LoRA module '" + module.file_name + "' has no kind");
  }
  int64_t numel = 1;
  for (int64_t s : weight_shape) numel *= s;
  // Linear factors for a 1x1 convolution (and the reverse) differ only in trailing ones.
  if (d.numel() != numel || d.size(0) != weight_shape.at(0))
    throw Error(ErrorKind::ShapeMismatch, "LoRA module '" + module.file_name + "' (" + loraKindName(module.kind) +
                                              ") makes a change of shape " + shapeText(d) + " for a weight of shape " +
                                              tensor_io::shapeToString(weight_shape));
  d = d.reshape(weight_shape);
  if (const int64_t rank = rankOf(module); rank > 0 && module.has("alpha"))
    d = d * (module.at("alpha").item<double>() / static_cast<double>(rank));
  return d;
}

}  // namespace kiln::lora
