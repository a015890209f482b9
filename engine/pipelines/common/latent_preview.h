// Cheap previews of image latents: a least-squares map from a latent cell's channels to the
// mean RGB of the pixels it decodes to, fitted once per model by decoding a few random
// latents (a few milliseconds, and right for any VAE).
#pragma once

#include <ATen/ATen.h>

#include <functional>

namespace kiln::pipelines {

// The map [C + 1, 3] for latents of `channels` channels, from `decode` (scaled latent
// [B, C, h, w] on the compute device -> image [B, 3, H, W] in [-1, 1]).
at::Tensor fitPreviewMap(int64_t channels,
                         const std::function<at::Tensor(const at::Tensor&)>& decode);
// RGB [h, w, 3] in [0, 1] of latent [1, C, h, w] under `map`.
at::Tensor previewWithMap(const at::Tensor& map, const at::Tensor& latent);

}  // namespace kiln::pipelines
