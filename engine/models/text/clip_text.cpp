#include "models/text/clip_text.h"
#include "models/text/clip_tokenizer.h"

#include <algorithm>
#include <limits>

#include "core/interrupt.h"
#include "kiln/error.h"
#include "models/common/working_memory.h"

namespace kiln::models {
ClipTextModel::ClipTextModel(const ClipTextConfig& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)) {
  const auto& c = config_;
  const ClipNames& n = clipNames(c.layout);
  layers_.resize(static_cast<std::size_t>(c.layers));
  params_.beginGroup("embeddings");
  params_.add(prefix_ + n.token, {c.vocab, c.hidden}, &token_embedding);
  params_.add(prefix_ + n.position, {c.max_positions, c.hidden}, &position_embedding);
  for (int64_t i = 0; i < c.layers; ++i) {
    Layer& l = layers_[static_cast<std::size_t>(i)];
    const std::string p = prefix_ + n.layer + std::to_string(i) + ".";
    l.group = params_.beginGroup("layer " + std::to_string(i));
    l.ln1 = LayerNorm(c.hidden, 1e-5);
    l.ln2 = LayerNorm(c.hidden, 1e-5);
    l.ln1.declare(params_, p + n.ln1);
    if (c.layout == ClipLayout::OpenClip) {
      params_.add(p + "attn.in_proj_weight", {3 * c.hidden, c.hidden}, &l.in_proj_weight);
      params_.add(p + "attn.in_proj_bias", {3 * c.hidden}, &l.in_proj_bias);
    } else {
      l.q = Linear(c.hidden, c.hidden);
      l.k = Linear(c.hidden, c.hidden);
      l.v = Linear(c.hidden, c.hidden);
      l.q.declare(params_, p + "self_attn.q_proj.");
      l.k.declare(params_, p + "self_attn.k_proj.");
      l.v.declare(params_, p + "self_attn.v_proj.");
    }
    l.out = Linear(c.hidden, c.hidden);
    l.out.declare(params_, p + n.out_proj);
    l.ln2.declare(params_, p + n.ln2);
    l.fc1 = Linear(c.hidden, c.intermediate);
    l.fc2 = Linear(c.intermediate, c.hidden);
    l.fc1.declare(params_, p + n.fc1);
    l.fc2.declare(params_, p + n.fc2);
  }
  final_ln_ = LayerNorm(c.hidden, 1e-5);
  final_group_ = params_.beginGroup("final");
  final_ln_.declare(params_, prefix_ + n.final_ln);
  if (c.projection_dim > 0)
    params_.add(prefix_ + "text_projection", {c.hidden, c.projection_dim}, &projection);
  params_.endGroup();
}

std::vector<std::string> ClipTextModel::ignoredKeys() const {
  if (config_.layout == ClipLayout::OpenClip) return {prefix_ + "logit_scale"};
  return {prefix_ + "embeddings.position_ids"};
}

ClipTextOutput ClipTextModel::forward(const at::Tensor& ids, const at::Tensor& extra) const {
  const auto& c = config_;
  if (ids.dim() != 2 || ids.size(1) > c.max_positions)
    throw Error(ErrorKind::InvalidArgument, "text encoder input must be [batch, <=" +
                                                std::to_string(c.max_positions) + "] token ids");
  const int64_t n = ids.size(1);
  const weights::CallScope call(params_);
  const auto opts = token_embedding.options();
  at::Tensor x;
  {
    const weights::GroupScope group(params_, 0);
    if (extra.defined() && (extra.dim() != 2 || extra.size(1) != c.hidden))
      throw Error(ErrorKind::ShapeMismatch,
                  "embedding vectors must be [tokens, " + std::to_string(c.hidden) + "]");
    const at::Tensor table =
        extra.defined() ? at::cat({token_embedding, extra.to(token_embedding.options())}, 0)
                        : token_embedding;
    x = at::embedding(table, ids) + position_embedding.narrow(0, 0, n).unsqueeze(0);
  }
  const at::Tensor mask = at::full({n, n}, -std::numeric_limits<float>::infinity(), opts).triu(1);

  ClipTextOutput out;
  out.hidden_states.push_back(x);
  for (const Layer& l : layers_) {
    core::checkInterrupt();
    const weights::GroupScope group(params_, l.group);
    at::Tensor h = l.ln1(x);
    at::Tensor q, k, v;
    if (c.layout == ClipLayout::OpenClip) {
      auto qkv = weights::adaptOutput(&l.in_proj_weight, h,
                                      at::linear(h, l.in_proj_weight, l.in_proj_bias))
                     .chunk(3, -1);
      q = qkv[0], k = qkv[1], v = qkv[2];
    } else {
      q = l.q(h), k = l.k(h), v = l.v(h);
    }
    x = x + l.out(multiHeadAttention(q, k, v, c.heads, mask));
    h = l.fc1(l.ln2(x));
    h = c.act == Activation::QuickGelu ? h * at::sigmoid(h * 1.702) : at::gelu(h);
    x = x + l.fc2(h);
    out.hidden_states.push_back(x);
  }
  const weights::GroupScope group(params_, final_group_);
  out.last_hidden_state = final_ln_(x);
  // The first end token (where argmax over the ids finds it, as CLIP's vocabulary ends
  // with it; an embedding's ids lie beyond the vocabulary).
  const at::Tensor is_end = ids.eq(ClipTokenizer::kEos);
  const at::Tensor eos =
      at::where(is_end.any(-1), is_end.to(at::kFloat).argmax(-1), ids.argmax(-1));
  std::vector<at::Tensor> rows;
  for (int64_t b = 0; b < ids.size(0); ++b)
    rows.push_back(out.last_hidden_state.select(0, b).select(0, eos[b].item<int64_t>()));
  out.pooled = at::stack(rows);
  if (projection.defined()) out.text_embeds = at::matmul(out.pooled, projection);
  return out;
}

at::Tensor ClipTextModel::finalNorm(const at::Tensor& hidden) const {
  const weights::GroupScope group(params_, final_group_);
  return final_ln_(hidden);
}

int64_t clipWorkingBytes(const ClipTextConfig& c, int64_t batch, at::ScalarType dtype) {
  const int64_t e = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t tokens = batch * c.max_positions;
  // Per layer: the input, the norm, q, k, v, the attention's result, its re-laid-out copy
  // and out's output, with the scores and their softmax; or the MLP's two intermediate
  // tensors (the activation's and its input) beside the input and the norm.
  const int64_t attention =
      tokens * 8 * c.hidden * e + 2 * batch * c.heads * c.max_positions * c.max_positions * e;
  const int64_t mlp = tokens * (3 * c.hidden + 3 * c.intermediate) * e;
  const int64_t states =
      (c.layers + 2) * tokens * c.hidden * e;  // the hidden states and the final norm
  const int64_t peak = states + std::max(attention, mlp);
  return withSmallTensors(peak);
}

}  // namespace kiln::models
