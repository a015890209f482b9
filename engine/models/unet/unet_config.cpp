#include "models/unet/unet_config.h"

#include "kiln/error.h"

namespace kiln::models {

namespace {

int64_t countTransformerBlocks(const tensor_io::TensorIndex& index, const std::string& block) {
  int64_t n = 0;
  while (index.contains(block + "transformer_blocks." + std::to_string(n) + ".norm1.weight")) ++n;
  return n;
}

}  // namespace

UNetConfig UNetConfig::detect(const tensor_io::TensorIndex& index, const std::string& prefix) {
  UNetConfig c;
  const auto in = [&](int64_t k) { return prefix + "input_blocks." + std::to_string(k) + "."; };
  c.model_channels = index.dim(in(0) + "0.weight", 0);
  c.in_channels = index.dim(in(0) + "0.weight", 1);
  c.out_channels = index.dim(prefix + "out.2.weight", 0);
  c.time_embed_dim = index.dim(prefix + "time_embed.0.weight", 0);

  c.num_res_blocks = 0;
  while (index.contains(in(1 + c.num_res_blocks) + "0.in_layers.0.weight")) ++c.num_res_blocks;
  if (c.num_res_blocks == 0)
    throw Error(ErrorKind::UnsupportedModel, "UNet at '" + prefix + "' has no residual blocks");
  const int64_t stride = c.num_res_blocks + 1;
  c.channel_mult.clear();
  c.input_depth.clear();
  for (int64_t level = 0;; ++level) {
    const int64_t first = 1 + level * stride;
    if (!index.contains(in(first) + "0.in_layers.0.weight")) break;
    const int64_t out_ch = index.dim(in(first) + "0.out_layers.3.weight", 0);
    c.channel_mult.push_back(out_ch / c.model_channels);
    for (int64_t j = 0; j < c.num_res_blocks; ++j)
      c.input_depth.push_back(countTransformerBlocks(index, in(first + j) + "1."));
    if (!index.contains(in(first + c.num_res_blocks) + "0.op.weight")) break;
  }
  const int64_t outputs = c.levels() * stride;
  c.output_depth.clear();
  for (int64_t k = 0; k < outputs; ++k)
    c.output_depth.push_back(
        countTransformerBlocks(index, prefix + "output_blocks." + std::to_string(k) + ".1."));
  c.middle_depth = countTransformerBlocks(index, prefix + "middle_block.1.");

  c.context_dim = 0;
  for (const auto& [name, entry] : index.entries()) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.find("attn2.to_k.weight") != std::string::npos) {
      c.context_dim = index.dim(name, 1);
      break;
    }
  }
  for (const auto& [name, entry] : index.entries()) {
    if (name.compare(0, prefix.size(), prefix) == 0 &&
        name.find("proj_in.weight") != std::string::npos) {
      c.linear_projection = entry.shape.size() == 2;
      break;
    }
  }
  if (index.contains(prefix + "label_emb.0.0.weight"))
    c.adm_in_channels = index.dim(prefix + "label_emb.0.0.weight", 1);
  return c;
}

}  // namespace kiln::models
