#include "lora/lora_file.h"

#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "kiln/error.h"
#include "tensor_io/materialize.h"
#include "tensor_io/safetensors.h"

namespace kiln::lora {
namespace {

std::string shapeText(const at::Tensor& t) {
  return tensor_io::shapeToString(t.sizes().vec());
}

// [out, in, ...] as a matrix [out, in * ...].
at::Tensor matrix(const at::Tensor& t) {
  return t.dim() == 1 ? t.unsqueeze(1) : t.flatten(1);
}

// Rebuilds a Tucker-decomposed kernel: core [r1, r2, kh, kw] between the factors
// left [out, r1] and right [r2, in], giving [out, in, kh, kw].
at::Tensor tucker(const at::Tensor& core, const at::Tensor& left, const at::Tensor& right) {
  const at::Tensor c = core.permute({2, 3, 0, 1});                              // [kh, kw, r1, r2]
  const at::Tensor m = at::matmul(at::matmul(matrix(left), c), matrix(right));  // [kh, kw, out, in]
  return m.permute({2, 3, 0, 1});
}

at::Tensor lowRank(const LoraModule& m) {
  const at::Tensor& up = m.at("up");
  const at::Tensor& down = m.at("down");
  if (m.has("mid")) return tucker(m.at("mid"), up, down);
  if (matrix(up).size(1) != down.size(0))
    throw Error(ErrorKind::ShapeMismatch, "LoRA module '" + m.file_name + "': up " + shapeText(up) +
                                              " and down " + shapeText(down) +
                                              " have different ranks");
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
  const at::Tensor w1 =
      m.has("lokr_w1") ? m.at("lokr_w1") : at::matmul(m.at("lokr_w1_a"), m.at("lokr_w1_b"));
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

}  // namespace

LoraFile readLoraFile(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw Error(ErrorKind::FileNotFound,
                "LoRA file '" + path + "' does not exist or is not a file");
  const auto file = tensor_io::SafetensorsFile::open(path);
  // Names and shapes first: a damaged or foreign file is refused before any data is read.
  LoraLayout layout = readLoraLayout(file->tensors(), path);
  LoraFile out;
  out.path = path;
  out.format = std::move(layout.format);
  out.unrecognised = std::move(layout.unrecognised);
  std::map<std::string, std::size_t> by_file_name;
  for (auto& m : layout.modules) {
    by_file_name[m.file_name] = out.modules.size();
    LoraModule module;
    static_cast<LoraModuleLayout&>(module) = std::move(m);
    out.modules.push_back(std::move(module));
  }
  for (const auto& info : file->tensors()) {
    const std::optional<LoraTensorName> parsed = parseLoraTensorName(info.name);
    if (!parsed) continue;
    const auto it = by_file_name.find(parsed->module);
    if (it == by_file_name.end()) continue;  // listed as unrecognised
    tensor_io::IndexEntry entry;
    entry.dtype = info.dtype;
    entry.shape = info.shape;
    entry.transform = tensor_io::Transform::Identity;
    entry.sources.push_back({file, &info});
    at::Tensor t = tensor_io::materialize(entry, at::kFloat).clone();
    if (!at::isfinite(t).all().item<bool>())
      throw Error(ErrorKind::CorruptFile,
                  "LoRA file '" + path + "': tensor '" + info.name +
                      "' holds NaN or infinite values; the file is damaged");
    out.modules[it->second].tensors[parsed->role] = std::move(t);
  }
  return out;
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
    throw Error(ErrorKind::ShapeMismatch,
                "LoRA module '" + module.file_name + "' (" + loraKindName(module.kind) +
                    ") makes a change of shape " + shapeText(d) + " for a weight of shape " +
                    tensor_io::shapeToString(weight_shape));
  d = d.reshape(weight_shape);
  if (const int64_t rank = loraRank(module); rank > 0 && module.has("alpha"))
    d = d * (module.at("alpha").item<double>() / static_cast<double>(rank));
  return d;
}

}  // namespace kiln::lora
