// FLUX.1's diffusers names (FluxTransformer2DModel) mapped into Black Forest Labs' layout
// (flux1-dev.safetensors and ComfyUI's diffusion_models files), which Kiln's transformer
// registers: separate q, k, v (and the single blocks' MLP input) fused into one projection,
// the final modulation's two halves exchanged ([scale; shift] -> [shift; scale]).
#pragma once

#include <memory>
#include <string>

#include "tensor_io/safetensors.h"
#include "tensor_io/tensor_index.h"

namespace kiln::tensor_io {

// The original name of a diffusers FluxTransformer2DModel tensor that maps one to one
// (neither fused nor reordered); empty when no such rule covers it.
std::string fluxTransformerFromDiffusers(const std::string& name);

// Adds every tensor of a diffusers FluxTransformer2DModel file under its original name
// (after `prefix`), the fused ones concatenated on load. Throws kiln::Error(UnsupportedModel)
// naming the first tensor no rule covers, and kiln::Error(ShapeMismatch) when a part of a
// fused projection is missing.
void mapDiffusersFluxTransformer(const std::shared_ptr<SafetensorsFile>& file,
                                 const std::string& prefix, TensorIndex& out);

}  // namespace kiln::tensor_io
