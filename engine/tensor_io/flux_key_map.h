// FLUX.1's diffusers names (FluxTransformer2DModel) mapped into Black Forest Labs' layout
// (flux1-dev.safetensors and ComfyUI's diffusion_models files), which Kiln's transformer
// registers: separate q, k, v (and the single blocks' MLP input) fused into one projection,
// the final modulation's two halves exchanged ([scale; shift] -> [shift; scale]).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensor_io/safetensors.h"
#include "tensor_io/tensor_index.h"

namespace kiln::tensor_io {

// The original name of a diffusers FluxTransformer2DModel tensor that maps one to one
// (neither fused nor reordered); empty when no such rule covers it.
std::string fluxTransformerFromDiffusers(const std::string& name);

// A diffusers module that is the whole or a block of rows of an original FLUX module.
struct FluxDiffusersPart {
  std::string name;  // "transformer_blocks.0.attn.to_q"
  int64_t row_offset = 0;
  int64_t rows = -1;  // -1: every row
};
// The diffusers modules an original module ("double_blocks.0.img_attn.qkv", no ".weight")
// is made of, for a transformer `dim` wide with MLPs `mlp_hidden` wide: one whole module,
// the q, k, v (and MLP input) row blocks of a fused projection, or none (the final
// modulation, whose halves diffusers orders the other way round, and unknown names).
std::vector<FluxDiffusersPart> fluxTransformerDiffusersParts(const std::string& original,
                                                             int64_t dim, int64_t mlp_hidden);

// Adds every tensor of a diffusers FluxTransformer2DModel file under its original name
// (after `prefix`), the fused ones concatenated on load. Throws kiln::Error(UnsupportedModel)
// naming the first tensor no rule covers, and kiln::Error(ShapeMismatch) when a part of a
// fused projection is missing.
void mapDiffusersFluxTransformer(const std::shared_ptr<SafetensorsFile>& file,
                                 const std::string& prefix, TensorIndex& out);
// The same over a sharded transformer's files, whose fused projections may span shards.
void mapDiffusersFluxTransformer(const std::vector<std::shared_ptr<SafetensorsFile>>& files,
                                 const std::string& prefix, TensorIndex& out);

}  // namespace kiln::tensor_io
