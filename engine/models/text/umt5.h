// The UMT5 encoder (transformers' UMT5EncoderModel names, which ComfyUI's umt5_xxl files
// keep): T5 layers with RMS norms, unscaled attention with a relative position bias of
// each layer's own, and a gated tanh-GELU feed-forward. Wan's text encoder. The same class
// is the T5 v1.1 encoder (T5EncoderModel names; FLUX's t5xxl), whose first layer alone
// has a position bias table, which every layer uses.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "models/common/layers.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

struct Umt5Config {
  int64_t vocab = 256384;
  int64_t d_model = 4096;
  int64_t d_kv = 64;
  int64_t heads = 64;
  int64_t d_ff = 10240;
  int64_t layers = 24;
  int64_t buckets = 32;
  int64_t max_distance = 128;
  double eps = 1e-6;
  // T5 v1.1: only layer 0 has a relative position bias table, and every layer adds its
  // bias; UMT5: each layer has its own.
  bool shared_position_bias = false;
  // The token table's name under the prefix: transformers stores it twice (tied), as
  // "shared.weight" and "encoder.embed_tokens.weight"; some files keep only one.
  std::string embedding = "shared.weight";

  // Everything from shapes (the head count from the relative position bias table; a
  // second layer without a table of its own means the first one's is shared).
  static Umt5Config detect(const tensor_io::TensorIndex& index, const std::string& prefix);
};

// T5's bidirectional bucket of (key position - query position): half the buckets per sign,
// exact below a quarter of them, log-spaced up to max_distance. [q, k] int64 on `device`.
at::Tensor relativePositionBuckets(int64_t query_len, int64_t key_len, int64_t buckets,
                                   int64_t max_distance, at::Device device = at::kCPU);

struct Umt5Output {
  std::vector<at::Tensor> hidden_states;  // embeddings, after each layer (the last one normed)
  at::Tensor last_hidden_state;           // [B, L, d_model]
};

class Umt5Encoder {
 public:
  Umt5Encoder(const Umt5Config& config, std::string prefix);
  Umt5Encoder(const Umt5Encoder&) = delete;  // the parameter list points into this object
  Umt5Encoder& operator=(const Umt5Encoder&) = delete;
  const Umt5Config& config() const noexcept { return config_; }
  const weights::ParamList& params() const noexcept { return params_; }
  std::vector<std::string> ignoredKeys() const;  // the tied copy of the token table
  // ids [B, L] int64; mask [B, L] (1 for real tokens) or undefined for none.
  Umt5Output forward(const at::Tensor& ids, const at::Tensor& mask = {}) const;
  // What Wan's pipeline conditions on: the masked encoding with every row at or past a
  // prompt's length set to exactly 0. ids are padded with 0 after the end token.
  at::Tensor encode(const at::Tensor& ids) const;

 private:
  struct Layer {
    at::Tensor attn_norm, ff_norm;  // RMS gains
    Linear q, k, v, o;
    at::Tensor rel_bias;  // [buckets, heads]; with a shared bias, layer 0's only
    Linear wi0, wi1, wo;
    std::size_t group = 0;
  };
  Umt5Config config_;
  std::string prefix_;
  at::Tensor embed_tokens, final_norm;
  std::vector<Layer> layers_;
  std::size_t final_group_ = 0;
  weights::ParamList params_;
};

// FLUX's T5 v1.1 encoder is this class with a shared position bias.
using T5Encoder = Umt5Encoder;
using T5Config = Umt5Config;

// Bytes of activations (weights not included) one forward() over `tokens` tokens holds at
// its peak in `dtype`: every layer's hidden state, and the largest layer's own tensors
// (the float32 scores with their bias and softmax, or the gated feed-forward's three).
int64_t umt5WorkingBytes(const Umt5Config& config, int64_t tokens, at::ScalarType dtype);

}  // namespace kiln::models
