#include "models/vae/vae_config.h"

#include "kiln/error.h"

namespace kiln::models {

VaeConfig VaeConfig::detect(const tensor_io::TensorIndex& index, const std::string& prefix) {
  VaeConfig c;
  c.base_channels = index.dim(prefix + "encoder.conv_in.weight", 0);
  c.in_channels = index.dim(prefix + "encoder.conv_in.weight", 1);
  c.out_channels = index.dim(prefix + "decoder.conv_out.weight", 0);
  c.z_channels = index.dim(prefix + "decoder.conv_in.weight", 1);
  c.quant_convs = index.contains(prefix + "post_quant_conv.weight");
  c.embed_dim = c.quant_convs ? index.dim(prefix + "post_quant_conv.weight", 1) : c.z_channels;
  if (!c.quant_convs && c.embed_dim == 16) {  // FLUX.1's ae.safetensors
    c.scaling_factor = 0.3611;
    c.shift_factor = 0.1159;
  }
  c.num_res_blocks = 0;
  while (index.contains(prefix + "encoder.down.0.block." + std::to_string(c.num_res_blocks) +
                        ".conv1.weight"))
    ++c.num_res_blocks;
  c.channel_mult.clear();
  for (int64_t i = 0;
       index.contains(prefix + "encoder.down." + std::to_string(i) + ".block.0.conv2.weight"); ++i)
    c.channel_mult.push_back(
        index.dim(prefix + "encoder.down." + std::to_string(i) + ".block.0.conv2.weight", 0) /
        c.base_channels);
  if (c.channel_mult.empty() || c.num_res_blocks == 0)
    throw Error(ErrorKind::UnsupportedModel, "VAE at '" + prefix + "' has no encoder levels");
  return c;
}

}  // namespace kiln::models
