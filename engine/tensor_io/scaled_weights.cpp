#include "tensor_io/scaled_weights.h"

#include <string>

namespace kiln::tensor_io {
namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The scale of weight `name` ("X.weight"), or null.
const IndexEntry* scaleOf(const TensorIndex& index, const std::string& name) {
  if (!endsWith(name, ".weight")) return nullptr;
  const std::string base = name.substr(0, name.size() - 7);
  for (const char* suffix : {".scale_weight", ".weight_scale"})
    if (const IndexEntry* s = index.find(base + suffix);
        s && s->sources.size() == 1 && s->sources[0].info->numel() == 1)
      return s;
  return nullptr;
}

bool isScaleKey(const std::string& name) {
  for (const char* suffix : {".scale_weight", ".weight_scale", ".scale_input", ".input_scale"})
    if (endsWith(name, suffix)) return true;
  return name == "scaled_fp8" || endsWith(name, ".scaled_fp8");
}

}  // namespace

TensorIndex withWeightScales(const TensorIndex& index, int64_t* scaled) {
  TensorIndex out;
  int64_t count = 0;
  for (const auto& [name, entry] : index.entries()) {
    if (isScaleKey(name)) continue;
    const IndexEntry* scale =
        entry.transform == Transform::Identity ? scaleOf(index, name) : nullptr;
    if (!scale) {
      out.add(name, entry);
      continue;
    }
    IndexEntry e = entry;
    e.transform = Transform::Scaled;
    e.sources.push_back(scale->sources[0]);
    out.add(name, std::move(e));
    ++count;
  }
  if (scaled) *scaled = count;
  return out;
}

}  // namespace kiln::tensor_io
