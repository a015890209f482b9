// Wan 2.1's causal video VAE under the original layout's names (Wan2.1_VAE.pth, ComfyUI's
// wan_2.1_vae files): 3D causal convolutions, RMS norms, per-frame attention in the middle,
// spatial x8 and temporal x4 resampling (frames 1 + 4n <-> latent frames 1 + n).
//
// Every temporal operation is causal, so a video can be coded in chunks of frames that
// carry a small cache (the last two input frames of each causal convolution) from chunk
// to chunk: decoding one latent frame at a time gives the same frames as decoding all at
// once, holding only one chunk's activations.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

struct WanVaeConfig {
  int64_t base_dim = 96;
  int64_t z_dim = 16;
  std::vector<int64_t> dim_mult{1, 2, 4, 4};
  int64_t num_res_blocks = 2;
  std::vector<bool> temporal_downsample{false, true, true};
  // Per-channel statistics of the latents: the transformer works on (z - mean) / std.
  std::vector<double> latents_mean, latents_std;

  int64_t spatialFactor() const { return int64_t{1} << (dim_mult.size() - 1); }
  int64_t temporalFactor() const;
  // Latent frames of a video of `frames` frames (1 + (frames - 1) / factor) and back.
  int64_t latentFrames(int64_t frames) const { return 1 + (frames - 1) / temporalFactor(); }
  int64_t videoFrames(int64_t latent_frames) const {
    return 1 + (latent_frames - 1) * temporalFactor();
  }
  // Sizes from shapes; the latent statistics are Wan 2.1's (for 16 latent channels).
  static WanVaeConfig detect(const tensor_io::TensorIndex& index, const std::string& prefix);
};

// Wan 2.1's published latent statistics (16 channels).
const std::vector<double>& wan21LatentsMean();
const std::vector<double>& wan21LatentsStd();

// The per-call-order cache of a chunked pass: each causal operation takes the next slot.
struct CausalCache {
  std::vector<at::Tensor> slots;
  std::size_t next = 0;
  at::Tensor& slot() {
    if (next == slots.size()) slots.emplace_back();
    return slots[next++];
  }
};

// Spatial tiles of a video decode, in latent cells (0: the whole frame at once). Each
// tile keeps its own causal cache; overlaps are cross-faded with linear ramps.
struct WanSpatialTiles {
  int64_t tile = 0;
  int64_t overlap = 4;
};

// Bytes of activations one chunk of `chunk_frames` latent frames holds at its peak when
// decoded over an h x w latent tile, computing in `dtype` (weights not included; the
// chunk's output included). Modelled on the full-resolution level, which dominates.
int64_t wanDecodeChunkBytes(const WanVaeConfig& config, int64_t latent_h, int64_t latent_w,
                            int64_t chunk_frames, at::ScalarType dtype);

class WanVae {
 public:
  WanVae(const WanVaeConfig& config, std::string prefix);
  WanVae(const WanVae&) = delete;  // the parameter list points into this object
  WanVae& operator=(const WanVae&) = delete;
  const WanVaeConfig& config() const noexcept { return config_; }
  const weights::ParamList& params() const noexcept { return params_; }

  // video [B, 3, 1 + 4n, H, W] in [-1, 1] (H, W multiples of 8) -> [B, 2 z, 1 + n, H/8, W/8]:
  // the posterior's mean, then its log variance (clamped to [-30, 20]). Encodes the
  // first frame, then four frames at a time.
  at::Tensor encodeMoments(const at::Tensor& video) const;

  // The decoder's output before the clamp to [-1, 1], [B, 3, 1 + 4 (T - 1), 8 h, 8 w], from
  // z [B, z, T, h, w] (the VAE's own latent space, see denormalize) in chunks of
  // `chunk_frames` latent frames. After each chunk, `on_chunk(frames)` gets that chunk's
  // frames (it may throw to stop); when it is set, the frames are not kept and the result
  // is undefined.
  // With spatial tiles, each chunk is decoded tile by tile and blended; `on_tile` (when set)
  // follows each tile of each chunk (it may throw to stop).
  using ChunkFn = std::function<void(const at::Tensor& frames)>;
  at::Tensor decodeRaw(const at::Tensor& z, int64_t chunk_frames = 1, const ChunkFn& on_chunk = {},
                       const WanSpatialTiles& tiles = {},
                       const std::function<void()>& on_tile = {}) const;

  // The transformer's latents <-> the VAE's: z = x * std + mean and back.
  at::Tensor denormalize(const at::Tensor& latents) const;
  at::Tensor normalize(const at::Tensor& z) const;

  class Decoder;
  class Encoder;

 private:
  WanVaeConfig config_;
  std::string prefix_;
  at::Tensor quant_w, quant_b, post_quant_w, post_quant_b;
  std::shared_ptr<Encoder> encoder_;
  std::shared_ptr<Decoder> decoder_;
  weights::ParamList params_;
};

}  // namespace kiln::models
