// The CLIP text encoder's hyperparameters and parameter names in its two layouts, inferred
// from a checkpoint's names and shapes. Free of torch, so that checkpoint detection builds
// and fuzzes on its own.
#pragma once

#include <cstdint>
#include <string>

#include "tensor_io/tensor_index.h"

namespace kiln::models {

enum class ClipLayout { Invalid = 0, HuggingFace, OpenClip };
enum class Activation { Invalid = 0, QuickGelu, Gelu };

struct ClipTextConfig {
  ClipLayout layout = ClipLayout::HuggingFace;
  int64_t vocab = 49408;
  int64_t hidden = 768;
  int64_t layers = 12;
  int64_t heads = 12;
  int64_t intermediate = 3072;
  int64_t max_positions = 77;
  int64_t projection_dim = 0;  // 0: no text projection
  Activation act = Activation::QuickGelu;

  // Infers everything but the head count (not visible in shapes) and the activation
  // (which follows the layout unless set) from the tensors under prefix.
  static ClipTextConfig detect(const tensor_io::TensorIndex& index, const std::string& prefix,
                               ClipLayout layout);
};

// Parameter names of the two layouts, relative to the model's prefix.
struct ClipNames {
  const char* token;
  const char* position;
  const char* layer;  // followed by the layer index and a dot
  const char* ln1;
  const char* ln2;
  const char* fc1;
  const char* fc2;
  const char* out_proj;
  const char* final_ln;
};
const ClipNames& clipNames(ClipLayout layout);

}  // namespace kiln::models
