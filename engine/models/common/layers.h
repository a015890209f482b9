// Basic layers as plain structs over tensors bound by name (see params.h). Each layer
// remembers its sizes so it can declare its parameters with the shapes it expects.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "weights/params.h"

namespace kiln::models {

enum class Bias { Invalid = 0, With, Without };

struct Linear {
  int64_t in = 0, out = 0;
  Bias bias_mode = Bias::With;
  at::Tensor weight, bias;

  Linear() = default;
  Linear(int64_t in_features, int64_t out_features, Bias b = Bias::With)
      : in(in_features), out(out_features), bias_mode(b) {}
  void declare(weights::ParamList& p, const std::string& prefix);
  at::Tensor operator()(const at::Tensor& x) const;
};

struct Conv2d {
  int64_t in = 0, out = 0, kernel = 1, stride = 1, padding = 0;
  at::Tensor weight, bias;

  Conv2d() = default;
  Conv2d(int64_t in_ch, int64_t out_ch, int64_t k, int64_t s = 1, int64_t pad = 0)
      : in(in_ch), out(out_ch), kernel(k), stride(s), padding(pad) {}
  void declare(weights::ParamList& p, const std::string& prefix);
  at::Tensor operator()(const at::Tensor& x) const;
};

struct GroupNorm {
  int64_t groups = 32, channels = 0;
  double eps = 1e-5;
  at::Tensor weight, bias;

  GroupNorm() = default;
  GroupNorm(int64_t g, int64_t c, double e) : groups(g), channels(c), eps(e) {}
  void declare(weights::ParamList& p, const std::string& prefix);
  at::Tensor operator()(const at::Tensor& x) const;
};

struct LayerNorm {
  int64_t dim = 0;
  double eps = 1e-5;
  at::Tensor weight, bias;

  LayerNorm() = default;
  LayerNorm(int64_t d, double e) : dim(d), eps(e) {}
  void declare(weights::ParamList& p, const std::string& prefix);
  at::Tensor operator()(const at::Tensor& x) const;
};

// GroupNorm statistics shared between passes over different parts of one picture (tiled
// VAE work). Accumulate: each GroupNorm call normalises as usual and adds its input's
// per-group moments, weighted by element count, to the totals of its call index; finish()
// turns the totals into the whole picture's mean and variance. Replay: each call
// normalises with the stored statistics of its index instead of its own input's, so every
// part is normalised alike.
struct GroupNormStats {
  enum class Mode { Invalid = 0, Accumulate, Replay };
  Mode mode = Mode::Accumulate;
  std::vector<at::Tensor> mean, var;  // [B, groups, 1] float32, one per call index
  std::vector<double> count;          // elements behind each index's totals
  std::size_t next = 0;               // the next call's index (reset before each pass)
  void finish();                      // totals -> statistics; switches to Replay
};

// While alive, the thread's GroupNorm layers accumulate into or replay from `stats`.
class GroupNormStatsScope {
 public:
  explicit GroupNormStatsScope(GroupNormStats& stats);
  ~GroupNormStatsScope();
  GroupNormStatsScope(const GroupNormStatsScope&) = delete;
  GroupNormStatsScope& operator=(const GroupNormStatsScope&) = delete;

 private:
  GroupNormStats* previous_;
};

// x / rms(x) over the last dimension in float32, back in x's dtype, times `gain` (the
// q/k norm of Wan's and FLUX's attention; reported as a leaf for offload).
at::Tensor rmsNormGain(const at::Tensor& x, const at::Tensor& gain, double eps);

// Rotates adjacent channel pairs (2i, 2i+1) of x [..., S, D] by per-token angles given as
// cos/sin [S, D/2] float32: the rotary position embedding of Wan and FLUX.
at::Tensor rotatePairs(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// Splits [B, N, H*D] into heads, attends and merges back: [B, N, H*D].
at::Tensor multiHeadAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              int64_t heads, const at::Tensor& mask = {});

// Sinusoidal embedding of (possibly fractional) timesteps, [N] -> [N, dim], in the
// [cos | sin] order (flip_sin_to_cos) with frequencies exp(-ln(10000) i / (half - shift)).
at::Tensor timestepEmbedding(const at::Tensor& timesteps, int64_t dim, double freq_shift = 0.0);

}  // namespace kiln::models
