#include "models/vae/vae_tiling.h"

#include <algorithm>
#include <cmath>

#include "core/interrupt.h"
#include "core/torch_compat.h"
#include "kiln/error.h"
#include "models/common/conv_kernels.h"
#include "models/common/working_memory.h"

namespace kiln::models {
namespace {

std::vector<int64_t> scaled(std::vector<int64_t> v, int64_t f) {
  for (auto& x : v) x *= f;
  return v;
}

// Runs `fn` on every tile of the [B, C, h, w] grid (in latent cells) and blends the
// results, which are `scale` times larger per axis, into one float32 tensor.
template <typename Fn>
at::Tensor blendTiles(int64_t latent_h, int64_t latent_w, int64_t scale, const tiling::Tiles& tiles,
                      const tiling::TileProgress& progress, Fn&& fn) {
  tiling::checkTiles(tiles);
  const std::vector<int64_t> ys = tiling::tileStarts(latent_h, tiles.tile, tiles.overlap);
  const std::vector<int64_t> xs = tiling::tileStarts(latent_w, tiles.tile, tiles.overlap);
  const int64_t th = std::min(tiles.tile, latent_h), tw = std::min(tiles.tile, latent_w);
  const std::vector<at::Tensor> wy =
      tiling::blendWeights(latent_h * scale, scaled(ys, scale), th * scale);
  const std::vector<at::Tensor> wx =
      tiling::blendWeights(latent_w * scale, scaled(xs, scale), tw * scale);
  // Every tile is normalised with the GroupNorm statistics of the whole picture: without
  // them each tile would be normalised by its own content, and a tile of plain background
  // would come out in another tone than its neighbours. A first pass over the tiles
  // gathers the statistics; the second normalises with them and keeps the results.
  const auto count = static_cast<int64_t>(ys.size() * xs.size());
  const int64_t total = tiling::tilePasses(count);
  GroupNormStats stats;
  at::Tensor out;
  int64_t done = 0;
  for (int pass = count > 1 ? 0 : 1; pass < 2; ++pass) {
    if (pass == 1 && count > 1) stats.finish();
    for (std::size_t i = 0; i < ys.size(); ++i)
      for (std::size_t j = 0; j < xs.size(); ++j) {
        core::checkInterrupt();
        at::Tensor piece;
        if (count > 1) {
          stats.next = 0;
          const GroupNormStatsScope scope(stats);
          piece = fn(ys[i], xs[j], th, tw);
        } else {
          piece = fn(ys[i], xs[j], th, tw);
        }
        ++done;
        if (pass == 1) {
          piece = piece.to(at::kFloat);
          if (!out.defined())
            out = at::zeros({piece.size(0), piece.size(1), latent_h * scale, latent_w * scale},
                            piece.options());
          const at::Tensor weight = (wy[i].unsqueeze(1) * wx[j].unsqueeze(0)).to(piece.device());
          out.narrow(2, ys[i] * scale, th * scale)
              .narrow(3, xs[j] * scale, tw * scale)
              .add_(piece * weight);
        }
        piece = at::Tensor();
        if (progress) progress(done, total);
      }
  }
  return out;
}

}  // namespace

at::Tensor decodeTiled(const AutoencoderKL& vae, const at::Tensor& z, const tiling::Tiles& tiles,
                       const tiling::TileProgress& progress) {
  // One call around every tile pass: weights onloaded per call (model placement) come
  // to the device once for the whole decode, not twice per tile.
  const weights::CallScope whole(vae.params());
  return blendTiles(z.size(2), z.size(3), vae.config().downscale(), tiles, progress,
                    [&](int64_t y, int64_t x, int64_t h, int64_t w) {
                      return vae.decode(z.narrow(2, y, h).narrow(3, x, w));
                    });
}

at::Tensor encodeMomentsTiled(const AutoencoderKL& vae, const at::Tensor& image,
                              const tiling::Tiles& tiles, const tiling::TileProgress& progress) {
  const int64_t f = vae.config().downscale();
  if (image.size(2) % f != 0 || image.size(3) % f != 0)
    throw Error(ErrorKind::InvalidArgument,
                "tiled encode needs an image whose sides are multiples of " + std::to_string(f) +
                    " pixels");
  const weights::CallScope whole(vae.params());  // as in decodeTiled: one upload for every tile
  return blendTiles(
      image.size(2) / f, image.size(3) / f, 1, tiles, progress,
      [&](int64_t y, int64_t x, int64_t h, int64_t w) {
        return vae.encodeMoments(image.narrow(2, y * f, h * f).narrow(3, x * f, w * f));
      });
}

// The estimates follow the tensors that are alive together in AutoencoderKL's code (see
// resnetPeakElements); an upsampling step holds its input and two tensors of four times
// the pixels. Where the CPU's convolutions run through im2col (cpuConvUsesIm2col), each
// 3x3 convolution also holds nine times its input's channels at its output's pixels.
namespace {

int64_t resnetPeak(int64_t in, int64_t out, int64_t pixels, int64_t col) {
  return resnetPeakElements(in, out, pixels, col);
}

// Self-attention over `pixels` tokens of `ch` channels: x, the norm, q, k, v, the scaled
// q, the result and its re-laid-out copy, plus the score matrix and its softmax.
int64_t attentionPeakBytes(int64_t ch, int64_t pixels, int64_t element) {
  return 8 * ch * pixels * element + 2 * attentionScoreBytes(1, pixels, pixels, element);
}

}  // namespace

int64_t decodeWorkingBytes(const VaeConfig& c, int64_t latent_h, int64_t latent_w,
                           at::ScalarType dtype) {
  const int64_t e = at::elementSize(dtype);
  const int64_t col = cpuConvUsesIm2col(dtype) ? 9 : 0;  // im2col buffer per input channel
  const auto levels = static_cast<int64_t>(c.channel_mult.size());
  const auto chAt = [&](int64_t i) {
    return c.base_channels * c.channel_mult[static_cast<std::size_t>(i)];
  };
  int64_t pixels = latent_h * latent_w;
  int64_t ch = chAt(levels - 1);
  int64_t peak = std::max(resnetPeak(ch, ch, pixels, col) * e, attentionPeakBytes(ch, pixels, e));
  for (int64_t i = levels - 1; i >= 0; --i) {
    for (int64_t j = 0; j <= c.num_res_blocks; ++j) {
      peak = std::max(peak, resnetPeak(ch, chAt(i), pixels, col) * e);
      ch = chAt(i);
    }
    if (i > 0) {
      peak = std::max(peak, (9 + 4 * col) * ch * pixels * e);
      pixels *= 4;
    }
  }
  // norm_out, silu, conv_out beside the last activations; then the float32 copy of the
  // result and the finiteness check's mask.
  peak = std::max(peak, ((3 + col) * ch + c.out_channels) * pixels * e);
  peak = std::max(peak, c.out_channels * pixels * (e + 4 + 1));
  return withSmallTensors(peak + oneDnnReorderBytes(peak, col, dtype));
}

int64_t encodeWorkingBytes(const VaeConfig& c, int64_t height, int64_t width,
                           at::ScalarType dtype) {
  const int64_t e = at::elementSize(dtype);
  const int64_t col = cpuConvUsesIm2col(dtype) ? 9 : 0;  // im2col buffer per input channel
  const auto levels = static_cast<int64_t>(c.channel_mult.size());
  const auto chAt = [&](int64_t i) {
    return c.base_channels * c.channel_mult[static_cast<std::size_t>(i)];
  };
  int64_t pixels = height * width;
  // The float32 image beside its copy in the compute dtype and conv_in's output.
  int64_t peak = c.in_channels * pixels * (4 + e + col * e) + c.base_channels * pixels * e;
  int64_t ch = c.base_channels;
  for (int64_t i = 0; i < levels; ++i) {
    for (int64_t j = 0; j < c.num_res_blocks; ++j) {
      peak = std::max(peak, resnetPeak(ch, chAt(i), pixels, col) * e);
      ch = chAt(i);
    }
    if (i + 1 < levels) {
      // The padded copy and the strided conv's output beside the input.
      peak = std::max(peak, ch * pixels * e * 2 + (1 + col) * ch * (pixels / 4) * e);
      pixels /= 4;
    }
  }
  peak = std::max(peak,
                  std::max(resnetPeak(ch, ch, pixels, col) * e, attentionPeakBytes(ch, pixels, e)));
  peak = std::max(peak, ((3 + col) * ch + 4 * c.z_channels + 2 * c.embed_dim) * pixels * e);
  return withSmallTensors(peak + oneDnnReorderBytes(peak, col, dtype));
}

int64_t tiledDecodeWorkingBytes(const VaeConfig& c, int64_t latent_h, int64_t latent_w,
                                const tiling::Tiles& tiles, at::ScalarType dtype) {
  const int64_t f = c.downscale();
  const int64_t th = std::min(tiles.tile, latent_h), tw = std::min(tiles.tile, latent_w);
  // The float32 result and, around each tile, its float copy and the weighted copy.
  const int64_t result = c.out_channels * latent_h * latent_w * f * f * 4;
  const int64_t tile_extra = 2 * c.out_channels * th * tw * f * f * 4;
  return result + decodeWorkingBytes(c, th, tw, dtype) + tile_extra;
}

int64_t tiledEncodeWorkingBytes(const VaeConfig& c, int64_t height, int64_t width,
                                const tiling::Tiles& tiles, at::ScalarType dtype) {
  const int64_t f = c.downscale();
  const int64_t th = std::min(tiles.tile * f, height), tw = std::min(tiles.tile * f, width);
  const int64_t result = 2 * c.embed_dim * (height / f) * (width / f) * 4;
  return result + encodeWorkingBytes(c, th, tw, dtype);
}

}  // namespace kiln::models
