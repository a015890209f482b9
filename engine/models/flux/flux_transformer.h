// FLUX.1's diffusion transformer (dev and schnell) under Black Forest Labs' names, as
// flux1-dev.safetensors and ComfyUI's diffusion_models files store it: double-stream blocks
// (image and text tokens with their own weights, attending jointly), single-stream blocks
// over [text; image], RMS-normed q/k with a rotary embedding over three position axes,
// and time, guidance (dev) and pooled-text embeddings modulating every block and the head.
// Its input is the packed latent: 2x2 patches of the 16-channel latent as 64-channel
// tokens (packFluxLatent).
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

struct FluxTransformerConfig {
  int64_t in_channels = 64;  // packed: 16 latent channels x 2 x 2
  int64_t out_channels = 64;
  int64_t dim = 3072;  // hidden width
  int64_t heads = 24;
  int64_t mlp_hidden = 12288;
  int64_t context_dim = 4096;  // T5's width
  int64_t vec_dim = 768;       // CLIP's pooled width
  int64_t double_blocks = 19;
  int64_t single_blocks = 38;
  bool guidance = true;  // dev: a guidance embedding; schnell: none
  // The head's channels split over the position axes (id, row, column), each rotated by
  // its own coordinate.
  std::array<int64_t, 3> axes{16, 56, 56};
  double theta = 10000.0;
  double eps = 1e-6;

  int64_t headDim() const { return dim / heads; }
  // Everything from the shapes under `prefix`. The head width comes from the q/k norm's
  // scale; the axes split it as FLUX does (7/16 of the head for each image axis, rounded
  // down to even, the rest for the first) unless `axes` is given (a configuration file's
  // axes_dims_rope). Throws kiln::Error(UnsupportedModel) for shapes that do not fit.
  static FluxTransformerConfig detect(const tensor_io::TensorIndex& index,
                                      const std::string& prefix,
                                      const std::array<int64_t, 3>* axes = nullptr);
};

// Whether `index` holds a FLUX transformer under `prefix` (its double blocks' fused qkv).
bool isFluxTransformer(const tensor_io::TensorIndex& index, const std::string& prefix);

// [B, C, H, W] (H, W even) -> [B, H/2 * W/2, 4C], each token's channels ordered (c, dy, dx);
// and back, for a latent of height x width cells.
at::Tensor packFluxLatent(const at::Tensor& latent);
at::Tensor unpackFluxLatent(const at::Tensor& tokens, int64_t height, int64_t width);
// The position ids of a packed latent's tokens: (0, row, column) row-major, [H/2 * W/2, 3]
// float32 on the host, for a latent of height x width cells.
at::Tensor fluxImageIds(int64_t height, int64_t width);

// The rotary tables for position ids [S, 3]: cos and sin per token and channel pair,
// [S, head_dim / 2] float32 (computed in float64, as the reference does).
std::pair<at::Tensor, at::Tensor> fluxRopeAngles(const at::Tensor& ids,
                                                 const std::array<int64_t, 3>& axes, double theta);

class FluxTransformer {
 public:
  FluxTransformer(const FluxTransformerConfig& config, std::string prefix);
  FluxTransformer(const FluxTransformer&) = delete;  // the parameter list points into this object
  FluxTransformer& operator=(const FluxTransformer&) = delete;
  const FluxTransformerConfig& config() const noexcept { return config_; }
  const weights::ParamList& params() const noexcept { return params_; }
  const std::string& prefix() const noexcept { return prefix_; }

  struct Inputs {
    at::Tensor img;       // [B, N, in_channels] packed latent tokens
    at::Tensor img_ids;   // [N, 3]
    at::Tensor txt;       // [B, L, context_dim] T5's encoding
    at::Tensor txt_ids;   // [L, 3] (zeros)
    at::Tensor timestep;  // [B] sigma (the model multiplies by 1000)
    at::Tensor guidance;  // [B] distilled guidance (dev; the model multiplies by 1000)
    at::Tensor pooled;    // [B, vec_dim] CLIP's pooled output
  };
  // The velocity for the image tokens, [B, N, out_channels], in the compute dtype.
  at::Tensor forward(const Inputs& in) const;

 private:
  struct Modulated {  // one stream of a double block
    Linear mod, qkv, proj, mlp0, mlp2;
    at::Tensor q_norm, k_norm;
  };
  struct DoubleBlock {
    Modulated img, txt;
    std::size_t group = 0;
  };
  struct SingleBlock {
    Linear mod, linear1, linear2;
    at::Tensor q_norm, k_norm;
    std::size_t group = 0;
  };
  struct Mlp {  // in_layer, silu, out_layer
    Linear in, out;
    at::Tensor operator()(const at::Tensor& x) const { return out(at::silu(in(x))); }
  };
  void declareStream(Modulated& s, const std::string& p, const std::string& stream);
  // q, k, v of one stream as [B, H, S, hd], q and k RMS-normed.
  std::array<at::Tensor, 3> heads(const at::Tensor& qkv, const at::Tensor& q_norm,
                                  const at::Tensor& k_norm) const;

  FluxTransformerConfig config_;
  std::string prefix_;
  Linear img_in, txt_in, final_mod, final_linear;
  Mlp time_in, guidance_in, vector_in;
  std::vector<DoubleBlock> double_;
  std::vector<SingleBlock> single_;
  std::size_t head_group_ = 0;
  weights::ParamList params_;
};

// Bytes of activations (weights not included) one forward() of a batch of one over
// `tokens` image tokens and `context_tokens` text tokens holds at its peak in `dtype`.
int64_t fluxTransformerWorkingBytes(const FluxTransformerConfig& config, int64_t tokens,
                                    int64_t context_tokens, at::ScalarType dtype);

}  // namespace kiln::models
