#include "models/text/clip_text_config.h"

#include "kiln/error.h"

namespace kiln::models {
namespace {

constexpr ClipNames kHfNames{"embeddings.token_embedding.weight",
                             "embeddings.position_embedding.weight",
                             "encoder.layers.",
                             "layer_norm1.",
                             "layer_norm2.",
                             "mlp.fc1.",
                             "mlp.fc2.",
                             "self_attn.out_proj.",
                             "final_layer_norm."};
constexpr ClipNames kOpenClipNames{"token_embedding.weight",
                                   "positional_embedding",
                                   "transformer.resblocks.",
                                   "ln_1.",
                                   "ln_2.",
                                   "mlp.c_fc.",
                                   "mlp.c_proj.",
                                   "attn.out_proj.",
                                   "ln_final."};

}  // namespace

const ClipNames& clipNames(ClipLayout layout) {
  return layout == ClipLayout::OpenClip ? kOpenClipNames : kHfNames;
}

ClipTextConfig ClipTextConfig::detect(const tensor_io::TensorIndex& index,
                                      const std::string& prefix, ClipLayout layout) {
  const ClipNames& n = clipNames(layout);
  ClipTextConfig c;
  c.layout = layout;
  c.vocab = index.dim(prefix + n.token, 0);
  c.hidden = index.dim(prefix + n.token, 1);
  c.max_positions = index.dim(prefix + n.position, 0);
  c.layers = 0;
  while (index.contains(prefix + n.layer + std::to_string(c.layers) + "." + n.ln1 + "weight"))
    ++c.layers;
  if (c.layers == 0)
    throw Error(ErrorKind::UnsupportedModel, "text encoder at '" + prefix + "' has no layers");
  c.intermediate = index.dim(prefix + n.layer + "0." + n.fc1 + "weight", 0);
  c.heads = c.hidden % 64 == 0 ? c.hidden / 64 : 1;  // CLIP-L and bigG use 64-wide heads
  c.act = layout == ClipLayout::OpenClip ? Activation::Gelu : Activation::QuickGelu;
  if (layout == ClipLayout::OpenClip && index.contains(prefix + "text_projection"))
    c.projection_dim = index.dim(prefix + "text_projection", 1);
  return c;
}

}  // namespace kiln::models
