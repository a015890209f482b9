// The model families Kiln loads, each registered once (registry.cpp) as {detect, resolve,
// cacheKey, inspect, open}: loading a file asks the registry which family it is, and nothing
// outside a family's own folder names one.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipelines/common/pipeline.h"

namespace kiln::pipelines {

// A model as asked for: the file or folder picked, the parts beside it when given (a lone
// transformer's VAE and text encoders: Wan's UMT5; FLUX's CLIP-L, then T5; empty: found
// beside it), the precision.
struct ModelRequest {
  std::string path;
  std::string vae_path, text_encoder_path;
  at::ScalarType dtype = at::kFloat;
  std::string text_encoder_2_path = {};
};

// What a render must know of a model before it loads: its kind (as ModelParts::kindName
// says it), the size it draws when none is asked, and the multiple picture sides snap down
// to (0: its nodes snap them).
// What a render draws a model with when it is not told otherwise (ComfyUI's names).
struct SamplingDefaults {
  int64_t steps = 20;
  double cfg = 5.0;
  std::string sampler = "euler", scheduler = "normal";
};

struct ModelInfo {
  std::string kind;
  NativeSize native;
  int64_t side_multiple = 0;
  std::optional<SamplingDefaults> sampling = std::nullopt;  // none: Kiln's defaults
};

// Bytes or tensors read so far, of all.
using LoadProgress = std::function<void(std::size_t done, std::size_t total)>;

struct Family {
  std::string name;  // for logs only ("sd", "wan21")
  // It renders frames over time (a video model); pictures are one-frame videos.
  bool video = false;
  // Its models may come as a lone transformer whose VAE and text encoders are given apart
  // (ModelRequest's parts); others carry their own and refuse them.
  bool separate_parts = false;
  // Whether `path` holds a model of this family: configs and headers only, false for
  // anything unreadable.
  std::function<bool(const std::string& path)> detect;
  // The request with every part found (throws kiln::Error(FileNotFound) naming a part
  // it could not find and where it looked).
  std::function<ModelRequest(const ModelRequest&)> resolve;
  // The model cache's key of a resolved request: each part's file as it is on disk.
  std::function<std::string(const ModelRequest&)> cacheKey;
  // What `path` holds, from its configs and headers (kiln::Error for a bad file).
  std::function<ModelInfo(const std::string& path)> inspect;
  // Loads a resolved request (kiln::Error for a bad file).
  std::function<std::unique_ptr<ModelParts>(const ModelRequest&, const LoadProgress&)> open;
};

// Every family, in the order they are asked; the last (SD) takes what no other claims,
// and its loader says what is wrong with a file that is no model.
const std::vector<Family>& families();
const Family& familyOf(const std::string& path);

// A file or folder as loaded: its canonical path, size and modification time, and the
// precision, for cache keys.
std::string modelKey(const std::string& path, at::ScalarType dtype);

}  // namespace kiln::pipelines
