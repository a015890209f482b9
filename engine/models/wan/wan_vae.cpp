#include "models/wan/wan_vae.h"

#include <cmath>
#include <deque>
#include <variant>

#include "core/interrupt.h"
#include "core/torch_compat.h"
#include "kiln/error.h"
#include "tiling/tiles.h"

namespace kiln::models {
namespace {

// [B, C, T, H, W] <-> [B*T, C, H, W] for per-frame 2D operations.
at::Tensor toFrames(const at::Tensor& x) {
  return x.permute({0, 2, 1, 3, 4})
      .reshape({x.size(0) * x.size(2), x.size(1), x.size(3), x.size(4)});
}
at::Tensor fromFrames(const at::Tensor& y, int64_t batch) {
  return y.view({batch, y.size(0) / batch, y.size(1), y.size(2), y.size(3)})
      .permute({0, 2, 1, 3, 4});
}

// x / ||x||_2 over the channels * sqrt(C) * gamma (F.normalize semantics), in float32.
struct RmsNorm {
  int64_t channels = 0;
  bool image = false;  // gamma [C, 1, 1] (per-frame attention) instead of [C, 1, 1, 1]
  at::Tensor gamma;
  void declare(weights::ParamList& p, const std::string& name) {
    p.add(name,
          image ? std::vector<int64_t>{channels, 1, 1} : std::vector<int64_t>{channels, 1, 1, 1},
          &gamma, weights::ParamList::Kind::Leaf);
  }
  at::Tensor operator()(const at::Tensor& x) const {
    weights::LeafScope leaf(&gamma, nullptr);
    const at::Tensor xf = x.to(at::kFloat);
    const at::Tensor norm = xf.norm(2, {1}, true).clamp_min(1e-12);
    return (xf / norm * (std::sqrt(static_cast<double>(channels)) * gamma.to(at::kFloat)))
        .to(x.scalar_type());
  }
};

// A 3D convolution padded causally in time (kernel_t - 1 frames in front, from the cache
// of the previous chunk or zeros) and symmetrically in space.
struct CausalConv3d {
  int64_t in = 0, out = 0, kt = 3, ks = 3;
  at::Tensor weight, bias;
  void declare(weights::ParamList& p, const std::string& prefix) {
    p.add(prefix + "weight", {out, in, kt, ks, ks}, &weight, weights::ParamList::Kind::Leaf);
    p.add(prefix + "bias", {out}, &bias, weights::ParamList::Kind::Leaf);
  }
  at::Tensor operator()(const at::Tensor& x, CausalCache& cache) const {
    weights::LeafScope leaf(&weight, &bias);
    at::Tensor full = x;
    if (kt > 1) {
      at::Tensor& prev = cache.slot();
      if (!prev.defined()) {
        auto shape = x.sizes().vec();
        shape[2] = kt - 1;
        prev = at::zeros(shape, x.options());
      }
      full = at::cat({prev, x}, 2);
      prev = full.narrow(2, full.size(2) - (kt - 1), kt - 1).clone();
    }
    return at::conv3d(full, weight, bias, {1, 1, 1}, {0, ks / 2, ks / 2});
  }
};

struct ResidualBlock {
  RmsNorm norm1, norm2;
  CausalConv3d conv1, conv2, shortcut;
  bool has_shortcut = false;
  ResidualBlock(weights::ParamList& p, const std::string& prefix, int64_t in, int64_t out) {
    norm1 = {in, false, {}};
    conv1 = {in, out, 3, 3, {}, {}};
    norm2 = {out, false, {}};
    conv2 = {out, out, 3, 3, {}, {}};
    norm1.declare(p, prefix + "residual.0.gamma");
    conv1.declare(p, prefix + "residual.2.");
    norm2.declare(p, prefix + "residual.3.gamma");
    conv2.declare(p, prefix + "residual.6.");
    has_shortcut = in != out;
    if (has_shortcut) {
      shortcut = {in, out, 1, 1, {}, {}};
      shortcut.declare(p, prefix + "shortcut.");
    }
  }
  at::Tensor operator()(const at::Tensor& x, CausalCache& cache) const {
    const at::Tensor skip = has_shortcut ? shortcut(x, cache) : x;
    at::Tensor h = conv1(at::silu(norm1(x)), cache);
    h = conv2(at::silu(norm2(h)), cache);
    return skip + h;
  }
};

// Single-head attention over each frame's pixels.
struct FrameAttention {
  int64_t channels = 0;
  RmsNorm norm;
  Conv2d to_qkv, proj;
  FrameAttention(weights::ParamList& p, const std::string& prefix, int64_t c) : channels(c) {
    norm = {c, true, {}};
    to_qkv = Conv2d(c, 3 * c, 1);
    proj = Conv2d(c, c, 1);
    norm.declare(p, prefix + "norm.gamma");
    to_qkv.declare(p, prefix + "to_qkv.");
    proj.declare(p, prefix + "proj.");
  }
  at::Tensor operator()(const at::Tensor& x) const {
    const int64_t b = x.size(0);
    const at::Tensor frames = toFrames(x);
    const int64_t n = frames.size(0), h = frames.size(2), w = frames.size(3);
    const at::Tensor qkv =
        to_qkv(norm(frames)).view({n, 3 * channels, h * w}).transpose(1, 2).unsqueeze(1);
    const auto parts = qkv.chunk(3, -1);  // each [N, 1, HW, C]
    const at::Tensor out = core::scaledDotProductAttention(
        parts[0], parts[1], parts[2], {}, 1.0 / std::sqrt(static_cast<double>(channels)));
    const at::Tensor y = proj(out.squeeze(1).transpose(1, 2).reshape({n, channels, h, w}));
    return x + fromFrames(y, b);
  }
};

enum class ResampleMode { Invalid = 0, Up2d, Up3d, Down2d, Down3d };

struct Resample {
  ResampleMode mode = ResampleMode::Invalid;
  int64_t channels = 0;
  Conv2d conv;
  at::Tensor time_w, time_b;
  Resample(weights::ParamList& p, const std::string& prefix, ResampleMode m, int64_t c)
      : mode(m), channels(c) {
    const bool up = m == ResampleMode::Up2d || m == ResampleMode::Up3d;
    conv = up ? Conv2d(c, c / 2, 3, 1, 1) : Conv2d(c, c, 3, 2, 0);
    conv.declare(p, prefix + "resample.1.");
    if (m == ResampleMode::Up3d) {
      p.add(prefix + "time_conv.weight", {2 * c, c, 3, 1, 1}, &time_w,
            weights::ParamList::Kind::Leaf);
      p.add(prefix + "time_conv.bias", {2 * c}, &time_b, weights::ParamList::Kind::Leaf);
    } else if (m == ResampleMode::Down3d) {
      p.add(prefix + "time_conv.weight", {c, c, 3, 1, 1}, &time_w, weights::ParamList::Kind::Leaf);
      p.add(prefix + "time_conv.bias", {c}, &time_b, weights::ParamList::Kind::Leaf);
    }
  }

  // Each latent frame after the first becomes two: a causal time convolution to twice
  // the channels over the frames after the first (which passes unchanged), halves
  // interleaved in time.
  at::Tensor upTime(const at::Tensor& x, CausalCache& cache) const {
    weights::LeafScope leaf(&time_w, &time_b);
    at::Tensor& prev = cache.slot();
    at::Tensor first, rest = x;
    if (!prev.defined()) {
      first = x.narrow(2, 0, 1);
      rest = x.narrow(2, 1, x.size(2) - 1);
      auto shape = x.sizes().vec();
      shape[2] = 2;
      prev = at::zeros(shape, x.options());
    }
    if (rest.size(2) == 0) return first;
    const at::Tensor full = at::cat({prev, rest}, 2);
    prev = full.narrow(2, full.size(2) - 2, 2).clone();
    const at::Tensor y = at::conv3d(full, time_w, time_b);  // [B, 2C, t, H, W]
    const int64_t b = y.size(0), t = y.size(2), h = y.size(3), w = y.size(4);
    const at::Tensor doubled = y.view({b, 2, channels, t, h, w})
                                   .permute({0, 2, 3, 1, 4, 5})
                                   .reshape({b, channels, 2 * t, h, w});
    return first.defined() ? at::cat({first, doubled}, 2) : doubled;
  }

  // The first frame passes; the rest are a stride-2 convolution over windows (0, 1, 2),
  // (2, 3, 4), ... of all frames, the previous chunk's last frame carried as the cache.
  at::Tensor downTime(const at::Tensor& x, CausalCache& cache) const {
    weights::LeafScope leaf(&time_w, &time_b);
    at::Tensor& prev = cache.slot();
    const at::Tensor last = x.narrow(2, x.size(2) - 1, 1).clone();
    at::Tensor out;
    if (!prev.defined()) {
      out = x.size(2) >= 3
                ? at::cat({x.narrow(2, 0, 1), at::conv3d(x, time_w, time_b, {2, 1, 1})}, 2)
                : x.narrow(2, 0, 1);
    } else {
      out = at::conv3d(at::cat({prev, x}, 2), time_w, time_b, {2, 1, 1});
    }
    prev = last;
    return out;
  }

  at::Tensor operator()(const at::Tensor& x, CausalCache& cache) const {
    const int64_t b = x.size(0);
    if (mode == ResampleMode::Up2d || mode == ResampleMode::Up3d) {
      const at::Tensor t = mode == ResampleMode::Up3d ? upTime(x, cache) : x;
      const at::Tensor frames = at::upsample_nearest2d(toFrames(t), {t.size(3) * 2, t.size(4) * 2});
      return fromFrames(conv(frames), b);
    }
    const at::Tensor frames = conv(at::constant_pad_nd(toFrames(x), {0, 1, 0, 1}));
    const at::Tensor y = fromFrames(frames, b);
    return mode == ResampleMode::Down3d ? downTime(y, cache) : y;
  }
};

// Residual block, attention, residual block at the lowest resolution.
struct Middle {
  ResidualBlock first;
  FrameAttention attention;
  ResidualBlock second;
  Middle(weights::ParamList& p, const std::string& prefix, int64_t c)
      : first(p, prefix + "middle.0.", c, c),
        attention(p, prefix + "middle.1.", c),
        second(p, prefix + "middle.2.", c, c) {}
  at::Tensor operator()(const at::Tensor& x, CausalCache& cache) const {
    return second(attention(first(x, cache)), cache);
  }
};

// RMS norm, SiLU, causal convolution to the output channels.
struct Head {
  RmsNorm norm;
  CausalConv3d conv;
  Head(weights::ParamList& p, const std::string& prefix, int64_t in, int64_t out) {
    norm = {in, false, {}};
    conv = {in, out, 3, 3, {}, {}};
    norm.declare(p, prefix + "head.0.gamma");
    conv.declare(p, prefix + "head.2.");
  }
  at::Tensor operator()(const at::Tensor& x, CausalCache& cache) const {
    return conv(at::silu(norm(x)), cache);
  }
};

using Unit = std::variant<ResidualBlock, Resample>;

at::Tensor runUnit(const Unit& u, const at::Tensor& x, CausalCache& cache) {
  if (const auto* r = std::get_if<ResidualBlock>(&u)) return (*r)(x, cache);
  return std::get<Resample>(u)(x, cache);
}

const std::string kEncoder = "encoder.", kDecoder = "decoder.";

}  // namespace

int64_t WanVaeConfig::temporalFactor() const {
  int64_t f = 1;
  for (const bool t : temporal_downsample) f *= t ? 2 : 1;
  return f;
}

const std::vector<double>& wan21LatentsMean() {
  static const std::vector<double> v{-0.7571, -0.7089, -0.9113, 0.1075,  -0.1745, 0.9653,
                                     -0.1517, 1.5508,  0.4134,  -0.0715, 0.5517,  -0.3632,
                                     -0.1922, -0.9497, 0.2503,  -0.2921};
  return v;
}

const std::vector<double>& wan21LatentsStd() {
  static const std::vector<double> v{2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708,
                                     2.6052, 2.0743, 3.2687, 2.1526, 2.8652, 1.5579,
                                     1.6382, 1.1253, 2.8251, 1.9160};
  return v;
}

WanVaeConfig WanVaeConfig::detect(const tensor_io::TensorIndex& index, const std::string& prefix) {
  WanVaeConfig c;
  const std::string e = prefix + kEncoder;
  c.base_dim = index.shape(e + "conv1.weight").at(0);
  c.z_dim = index.shape(prefix + "conv2.weight").at(0);
  c.dim_mult.clear();
  c.temporal_downsample.clear();
  int64_t blocks_in_level = 0, first_level_blocks = -1, out = c.base_dim;
  for (int64_t i = 0;; ++i) {
    const std::string p = e + "downsamples." + std::to_string(i) + ".";
    if (index.contains(p + "residual.2.weight")) {
      out = index.shape(p + "residual.2.weight").at(0);
      ++blocks_in_level;
      continue;
    }
    if (blocks_in_level > 0) {
      if (first_level_blocks < 0) first_level_blocks = blocks_in_level;
      c.dim_mult.push_back(out / c.base_dim);
      blocks_in_level = 0;
    }
    if (!index.contains(p + "resample.1.weight")) break;
    c.temporal_downsample.push_back(index.contains(p + "time_conv.weight"));
  }
  if (c.dim_mult.size() < 2 || c.temporal_downsample.size() + 1 != c.dim_mult.size())
    throw Error(ErrorKind::UnsupportedModel, "Wan VAE: encoder levels not recognised");
  c.num_res_blocks = first_level_blocks;
  if (c.z_dim == 16) {
    c.latents_mean = wan21LatentsMean();
    c.latents_std = wan21LatentsStd();
  }
  return c;
}

class WanVae::Encoder {
 public:
  Encoder(weights::ParamList& p, const std::string& prefix, const WanVaeConfig& c) {
    std::vector<int64_t> dims{c.base_dim};
    for (const int64_t m : c.dim_mult) dims.push_back(c.base_dim * m);
    conv_in = {3, dims[0], 3, 3, {}, {}};
    conv_in.declare(p, prefix + "conv1.");
    int64_t index = 0;
    const std::size_t levels = c.dim_mult.size();
    for (std::size_t i = 0; i < levels; ++i) {
      int64_t in = dims[i];
      for (int64_t r = 0; r < c.num_res_blocks; ++r) {
        units.emplace_back(std::in_place_type<ResidualBlock>, p,
                           prefix + "downsamples." + std::to_string(index++) + ".", in,
                           dims[i + 1]);
        in = dims[i + 1];
      }
      if (i + 1 < levels)
        units.emplace_back(std::in_place_type<Resample>, p,
                           prefix + "downsamples." + std::to_string(index++) + ".",
                           c.temporal_downsample[i] ? ResampleMode::Down3d : ResampleMode::Down2d,
                           in);
    }
    middle = std::make_unique<Middle>(p, prefix, dims.back());
    head = std::make_unique<Head>(p, prefix, dims.back(), 2 * c.z_dim);
  }
  at::Tensor operator()(const at::Tensor& x, CausalCache& cache) const {
    cache.next = 0;
    at::Tensor h = conv_in(x, cache);
    for (const Unit& u : units) h = runUnit(u, h, cache);
    return (*head)((*middle)(h, cache), cache);
  }

 private:
  CausalConv3d conv_in;
  std::deque<Unit> units;  // a deque keeps the declared tensors in place
  std::unique_ptr<Middle> middle;
  std::unique_ptr<Head> head;
};

class WanVae::Decoder {
 public:
  Decoder(weights::ParamList& p, const std::string& prefix, const WanVaeConfig& c) {
    std::vector<int64_t> dims{c.base_dim * c.dim_mult.back()};
    for (auto it = c.dim_mult.rbegin(); it != c.dim_mult.rend(); ++it)
      dims.push_back(c.base_dim * *it);
    conv_in = {c.z_dim, dims[0], 3, 3, {}, {}};
    conv_in.declare(p, prefix + "conv1.");
    middle = std::make_unique<Middle>(p, prefix, dims[0]);
    int64_t index = 0;
    const std::size_t levels = c.dim_mult.size();
    for (std::size_t i = 0; i < levels; ++i) {
      int64_t in = i == 0 ? dims[i] : dims[i] / 2;  // after an upsampler's halving
      for (int64_t r = 0; r <= c.num_res_blocks; ++r) {
        units.emplace_back(std::in_place_type<ResidualBlock>, p,
                           prefix + "upsamples." + std::to_string(index++) + ".", in, dims[i + 1]);
        in = dims[i + 1];
      }
      if (i + 1 < levels) {
        const bool temporal = c.temporal_downsample[levels - 2 - i];
        units.emplace_back(std::in_place_type<Resample>, p,
                           prefix + "upsamples." + std::to_string(index++) + ".",
                           temporal ? ResampleMode::Up3d : ResampleMode::Up2d, in);
      }
    }
    head = std::make_unique<Head>(p, prefix, dims.back(), 3);
  }
  at::Tensor operator()(const at::Tensor& x, CausalCache& cache) const {
    cache.next = 0;
    at::Tensor h = conv_in(x, cache);
    h = (*middle)(h, cache);
    for (const Unit& u : units) {
      core::checkInterrupt();
      h = runUnit(u, h, cache);
    }
    return (*head)(h, cache);
  }

 private:
  CausalConv3d conv_in;
  std::unique_ptr<Middle> middle;
  std::deque<Unit> units;  // a deque keeps the declared tensors in place
  std::unique_ptr<Head> head;
};

WanVae::WanVae(const WanVaeConfig& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)) {
  const auto& c = config_;
  if (c.latents_mean.size() != static_cast<std::size_t>(c.z_dim) ||
      c.latents_std.size() != static_cast<std::size_t>(c.z_dim))
    throw Error(ErrorKind::UnsupportedModel,
                "Wan VAE: the latent statistics must have " + std::to_string(c.z_dim) +
                    " values each (a configuration file with latents_mean and "
                    "latents_std)");
  params_.beginGroup("encoder");
  encoder_ = std::make_shared<Encoder>(params_, prefix_ + kEncoder, c);
  params_.add(prefix_ + "conv1.weight", {2 * c.z_dim, 2 * c.z_dim, 1, 1, 1}, &quant_w,
              weights::ParamList::Kind::Leaf);
  params_.add(prefix_ + "conv1.bias", {2 * c.z_dim}, &quant_b, weights::ParamList::Kind::Leaf);
  params_.beginGroup("decoder");
  params_.add(prefix_ + "conv2.weight", {c.z_dim, c.z_dim, 1, 1, 1}, &post_quant_w,
              weights::ParamList::Kind::Leaf);
  params_.add(prefix_ + "conv2.bias", {c.z_dim}, &post_quant_b, weights::ParamList::Kind::Leaf);
  decoder_ = std::make_shared<Decoder>(params_, prefix_ + kDecoder, c);
  params_.endGroup();
}

at::Tensor WanVae::encodeMoments(const at::Tensor& video) const {
  const auto& c = config_;
  const int64_t s = c.spatialFactor(), tf = c.temporalFactor();
  if (video.dim() != 5 || video.size(1) != 3 || (video.size(2) - 1) % tf != 0 ||
      video.size(3) % s != 0 || video.size(4) % s != 0)
    throw Error(ErrorKind::ShapeMismatch,
                "Wan VAE encode: video must be [batch, 3, 1 + " + std::to_string(tf) +
                    "n frames, height, width], sides multiples of " + std::to_string(s));
  const weights::CallScope call(params_);
  const weights::GroupScope group(params_, 0);
  const at::Tensor x = video.to(quant_w.device(), quant_w.scalar_type());
  CausalCache cache;
  std::vector<at::Tensor> parts;
  for (int64_t t = 0; t < x.size(2);) {
    core::checkInterrupt();
    const int64_t n = t == 0 ? 1 : tf;
    parts.push_back((*encoder_)(x.narrow(2, t, n), cache));
    t += n;
  }
  at::Tensor moments;
  {
    weights::LeafScope leaf(&quant_w, &quant_b);
    moments = at::conv3d(at::cat(parts, 2), quant_w, quant_b);
  }
  const auto halves = moments.chunk(2, 1);
  return at::cat({halves[0], halves[1].clamp(-30.0, 20.0)}, 1);
}

int64_t wanDecodeChunkBytes(const WanVaeConfig& config, int64_t latent_h, int64_t latent_w,
                            int64_t chunk_frames, at::ScalarType dtype) {
  // The last level works at full resolution on base_dim channels over the chunk's frames;
  // its residual blocks hold input, normed, padded and convolved copies at once, plus the
  // convolution's column buffer: about 48 such activations at the peak (measured on the
  // tiny model: 40), plus the float32 output.
  const int64_t s = config.spatialFactor();
  const int64_t frames = chunk_frames * config.temporalFactor();
  const int64_t pixels = latent_h * s * latent_w * s;
  const auto elem = static_cast<int64_t>(c10::elementSize(dtype));
  return 48 * config.base_dim * frames * pixels * elem + 3 * frames * pixels * 4;
}

at::Tensor WanVae::decodeRaw(const at::Tensor& z, int64_t chunk_frames, const ChunkFn& on_chunk,
                             const WanSpatialTiles& tiles,
                             const std::function<void()>& on_tile) const {
  const auto& c = config_;
  if (z.dim() != 5 || z.size(1) != c.z_dim || z.size(2) < 1)
    throw Error(ErrorKind::ShapeMismatch, "Wan VAE decode: latent must be [batch, " +
                                              std::to_string(c.z_dim) + ", frames, height, width]");
  if (chunk_frames < 1)
    throw Error(ErrorKind::InvalidArgument, "Wan VAE decode: chunks need at least one frame");
  const weights::CallScope call(params_);
  const weights::GroupScope group(params_, 1);
  at::Tensor x;
  {
    weights::LeafScope leaf(&post_quant_w, &post_quant_b);
    x = at::conv3d(z.to(post_quant_w.device(), post_quant_w.scalar_type()), post_quant_w,
                   post_quant_b);
  }
  const int64_t h = x.size(3), w = x.size(4), s = c.spatialFactor();
  const bool tiled = tiles.tile > 0 && (tiles.tile < h || tiles.tile < w);
  if (tiled && (tiles.overlap < 0 || tiles.overlap > tiles.tile / 2))
    throw Error(ErrorKind::InvalidArgument,
                "Wan VAE decode: the tile overlap must be at most half a tile");
  const std::vector<int64_t> ys =
      tiled ? tiling::tileStarts(h, std::min(tiles.tile, h), tiles.overlap)
            : std::vector<int64_t>{0};
  const std::vector<int64_t> xs =
      tiled ? tiling::tileStarts(w, std::min(tiles.tile, w), tiles.overlap)
            : std::vector<int64_t>{0};
  const int64_t th = tiled ? std::min(tiles.tile, h) : h, tw = tiled ? std::min(tiles.tile, w) : w;
  std::vector<CausalCache> caches(ys.size() * xs.size());
  std::vector<at::Tensor> parts;
  for (int64_t t = 0; t < x.size(2); t += chunk_frames) {
    core::checkInterrupt();
    const at::Tensor chunk = x.narrow(2, t, std::min(chunk_frames, x.size(2) - t));
    at::Tensor frames;
    if (!tiled) {
      frames = (*decoder_)(chunk, caches[0]);
      if (on_tile) on_tile();
    } else {
      at::Tensor sum, weight;
      for (std::size_t iy = 0; iy < ys.size(); ++iy)
        for (std::size_t ix = 0; ix < xs.size(); ++ix) {
          core::checkInterrupt();
          const at::Tensor tile = chunk.narrow(3, ys[iy], th).narrow(4, xs[ix], tw);
          const at::Tensor out = (*decoder_)(tile, caches[iy * xs.size() + ix]).to(at::kFloat);
          if (!sum.defined()) {
            sum = at::zeros({out.size(0), out.size(1), out.size(2), h * s, w * s}, out.options());
            weight = at::zeros({1, 1, 1, h * s, w * s}, out.options());
          }
          const int64_t ov = tiles.overlap * s;
          const at::Tensor ry =
              tiling::edgeRamp(th * s, ov, iy > 0, iy + 1 < ys.size()).to(out.device());
          const at::Tensor rx =
              tiling::edgeRamp(tw * s, ov, ix > 0, ix + 1 < xs.size()).to(out.device());
          const at::Tensor mask = at::outer(ry, rx).view({1, 1, 1, th * s, tw * s});
          sum.narrow(3, ys[iy] * s, th * s).narrow(4, xs[ix] * s, tw * s).add_(out * mask);
          weight.narrow(3, ys[iy] * s, th * s).narrow(4, xs[ix] * s, tw * s).add_(mask);
          if (on_tile) on_tile();
        }
      frames = sum / weight;
    }
    if (on_chunk)
      on_chunk(frames);
    else
      parts.push_back(std::move(frames));
  }
  return parts.empty() ? at::Tensor() : at::cat(parts, 2);
}

at::Tensor WanVae::denormalize(const at::Tensor& latents) const {
  const auto opts = latents.options().dtype(at::kDouble);
  const at::Tensor mean = at::tensor(config_.latents_mean, opts).view({1, -1, 1, 1, 1});
  const at::Tensor std = at::tensor(config_.latents_std, opts).view({1, -1, 1, 1, 1});
  return latents * std.to(latents.options()) + mean.to(latents.options());
}

at::Tensor WanVae::normalize(const at::Tensor& z) const {
  const auto opts = z.options().dtype(at::kDouble);
  const at::Tensor mean = at::tensor(config_.latents_mean, opts).view({1, -1, 1, 1, 1});
  const at::Tensor inv_std = 1.0 / at::tensor(config_.latents_std, opts).view({1, -1, 1, 1, 1});
  return (z - mean.to(z.options())) * inv_std.to(z.options());
}

}  // namespace kiln::models
