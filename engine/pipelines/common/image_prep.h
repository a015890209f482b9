// Getting pictures ready for the VAE and the sampler: images as tensors, fitted to the
// output size, and inpainting masks (with a feathered edge) at pixel and latent size.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "kiln/image.h"

namespace kiln::pipelines {

// Throws kiln::Error(InvalidArgument) naming `what` for an empty or malformed image.
void checkImage(const Image& image, const std::string& what);

// [1, C, H, W] float32 in [0, 1].
at::Tensor imageTensor(const Image& image);

// The first three channels (grey repeated) of an image tensor [1, C, H, W].
at::Tensor rgbOf(const at::Tensor& image);

// Scales [1, C, H, W] to cover height x width (keeping its aspect ratio; antialiased when
// shrinking) and crops the centre. `cropped` says whether anything was cut off.
at::Tensor fitImage(const at::Tensor& image, int64_t height, int64_t width,
                    bool* cropped = nullptr);

// A mask image as [1, 1, H, W] in [0, 1]: grey or the RGB luminance, times the alpha
// channel when there is one. 1 repaints.
at::Tensor maskTensor(const Image& mask);

// Blurs the mask's edge over about `pixels` pixels (a Gaussian of standard deviation
// pixels / 2); 0 leaves it as it is.
at::Tensor featherMask(const at::Tensor& mask, int64_t pixels);

// The share of each latent cell the mask covers: [1, 1, H/f, W/f].
at::Tensor latentMask(const at::Tensor& mask, int64_t downscale);

}  // namespace kiln::pipelines
