// Opening Wan 2.1 text-to-video components: the transformer, the VAE and the UMT5 text
// encoder, each from a single .safetensors file in the original layout (Wan's own names,
// as ComfyUI ships them, optionally under "model.diffusion_model.") or from a diffusers
// folder (WanPipeline with transformer/, vae/, text_encoder/; weights may be sharded).
// Configurations are detected from names and shapes; what shapes cannot tell (the
// transformer's head count when it is not dim / 128, the VAE's latent statistics when
// they are not Wan 2.1's) comes from the diffusers configs or a JSON file beside a single
// file ("<stem>.json", "config.json" or "original_config.json") holding num_heads or
// latents_mean and latents_std, at its top level or one object deep.
#pragma once

#include <string>
#include <vector>

#include "models/text/umt5.h"
#include "models/wan/wan_transformer.h"
#include "models/wan/wan_vae.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

template <typename Config>
struct WanComponent {
  std::string path;
  tensor_io::TensorIndex index;  // original names, no prefix
  Config config;
  std::vector<std::string> notes;  // how the configuration was decided
};

// Whether an index (original names, no prefix) holds a Wan transformer.
bool isWanTransformer(const tensor_io::TensorIndex& index);

// Each throws kiln::Error: FileNotFound, CorruptFile, UnsupportedModel with what was found.
// A diffusers pipeline folder is accepted for each (its component subfolder is used).
WanComponent<WanTransformerConfig> openWanTransformer(const std::string& path);
WanComponent<WanVaeConfig> openWanVae(const std::string& path);
WanComponent<Umt5Config> openUmt5(const std::string& path);

// The sampling defaults of a diffusers folder's scheduler (flow_shift), else Wan 2.1's.
struct WanSamplingDefaults {
  double flow_shift = 5.0;
  bool unipc = true;  // false: flow-matching Euler
  std::string note;
};
WanSamplingDefaults wanSamplingDefaults(const std::string& path);

}  // namespace kiln::models
