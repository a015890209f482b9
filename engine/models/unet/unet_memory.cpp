// The UNet's working memory, walked block by block in forward()'s order: the skip
// connections stay alive until their output block, so the peak is the skips held so far
// plus the largest block's own tensors.
#include <algorithm>

#include "models/common/working_memory.h"
#include "models/unet/unet.h"

namespace kiln::models {
namespace {

// Elements a SpatialTransformer over `pixels` positions of `ch` channels holds at its
// peak beyond its input, and the bytes of its score matrices. In each transformer block:
// the block's input, the residual sum, a norm, q, k and v, the attention's result and its
// re-laid-out copy, to_out's output beside them (self-attention), then the feed-forward's
// 8 ch projection, the 4 ch GELU and product and its output; plus the projection in and
// out and the image-layout copy.
struct TransformerPeak {
  int64_t elements = 0;
  int64_t score_bytes = 0;
};
TransformerPeak transformerPeak(int64_t ch, int64_t pixels, int64_t batch, int64_t tokens,
                                int64_t context_tokens, int64_t heads, int64_t col,
                                int64_t element) {
  TransformerPeak p;
  const int64_t attention = 10 * ch;
  const int64_t feed_forward = 21 * ch;
  const int64_t projection = (3 + col) * ch;
  p.elements = pixels * std::max({attention, feed_forward, projection});
  p.score_bytes = 2 * std::max(attentionScoreBytes(batch * heads, tokens, tokens, element),
                               attentionScoreBytes(batch * heads, tokens, context_tokens, element));
  return p;
}

}  // namespace

int64_t unetWorkingBytes(const UNetConfig& c, int64_t batch, int64_t latent_h, int64_t latent_w,
                         int64_t context_tokens, at::ScalarType dtype) {
  const int64_t e = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t col = im2colChannels(dtype);
  int64_t held = 0;  // bytes alive across blocks: the inputs and the skips
  int64_t peak = 0;
  const auto at = [&](int64_t bytes) { peak = std::max(peak, held + bytes); };
  int64_t h = latent_h, w = latent_w;
  const auto pixels = [&] { return batch * h * w; };
  // The latent in float32 and in the compute dtype, and conv_in's output.
  held += c.in_channels * pixels() * (4 + e);
  at((col * c.in_channels + c.model_channels) * pixels() * e);
  std::vector<int64_t> skips{c.model_channels * pixels() * e};
  held += skips.back();
  int64_t ch = c.model_channels;
  std::size_t depth_i = 0;
  const auto transformer = [&](int64_t channels, int64_t level, int64_t depth) {
    if (depth <= 0) return int64_t{0};
    const TransformerPeak t =
        transformerPeak(channels, pixels(), batch, h * w, context_tokens,
                        std::max<int64_t>(c.headsFor(level, channels), 1), col, e);
    return t.elements * e + t.score_bytes;
  };
  for (int64_t level = 0; level < c.levels(); ++level) {
    const int64_t out = c.model_channels * c.channel_mult[static_cast<std::size_t>(level)];
    for (int64_t j = 0; j < c.num_res_blocks; ++j) {
      // The input is the last skip; the block's output becomes the next one.
      at((resnetPeakElements(ch, out, pixels(), col) - ch * pixels()) * e);
      ch = out;
      at(ch * pixels() * e + transformer(ch, level, c.input_depth.at(depth_i++)));
      skips.push_back(ch * pixels() * e);
      held += skips.back();
    }
    if (level + 1 < c.levels()) {
      h = (h + 1) / 2;
      w = (w + 1) / 2;
      at((col + 1) * ch * pixels() * e);
      skips.push_back(ch * pixels() * e);
      held += skips.back();
    }
  }
  // The middle block: two residual blocks around a transformer, the current tensor beside.
  const int64_t deepest = c.levels() - 1;
  at((resnetPeakElements(ch, ch, pixels(), col) - ch * pixels()) * e);
  at(ch * pixels() * e + transformer(ch, deepest, c.middle_depth));
  at(resnetPeakElements(ch, ch, pixels(), col) * e);
  int64_t current = ch * pixels() * e;  // not a skip
  std::size_t depth_o = 0;
  for (int64_t level = deepest; level >= 0; --level) {
    const int64_t out = c.model_channels * c.channel_mult[static_cast<std::size_t>(level)];
    for (int64_t i = 0; i <= c.num_res_blocks; ++i) {
      // The concatenation with the skip stays alive through the block.
      const int64_t skip = skips.back();
      skips.pop_back();
      const int64_t cat = current + skip;
      at(current + cat);
      held += cat - skip;
      const int64_t in = cat / (pixels() * e);
      at((resnetPeakElements(in, out, pixels(), col) - in * pixels()) * e);
      ch = out;
      at(ch * pixels() * e + transformer(ch, level, c.output_depth.at(depth_o++)));
      current = ch * pixels() * e;
      if (level > 0 && i == c.num_res_blocks) {
        // Upsampled to the next skip's size, then convolved.
        h = h * 2;
        w = w * 2;
        at(current + ch * pixels() * e);
        at(ch * pixels() * e * (2 + col));
        current = ch * pixels() * e;
      }
      held -= cat;
    }
  }
  // out: norm, silu and conv_out beside the last activations, then the float32 result.
  at(current * 3 + col * ch * pixels() * e + c.out_channels * pixels() * (e + 4));
  return withSmallTensors(peak + oneDnnReorderBytes(peak, col, dtype));
}

}  // namespace kiln::models
