// What a sampling run reports after each step, and where an image-to-image run starts.
#pragma once

#include <ATen/ATen.h>

namespace kiln::sampling {

struct StepInfo {
  int64_t step = 0;  // 0-based
  int64_t total = 0;
  const at::Tensor* scaled_input = nullptr;  // the model's input at the step's last call
  const at::Tensor* noise_pred = nullptr;    // its guided noise prediction
  const at::Tensor* latent = nullptr;        // after the step
  const at::Tensor* denoised = nullptr;      // the step's estimate of the clean latent
};

// Image-to-image and inpainting: where sampling starts from a picture's latent.
struct LatentInit {
  at::Tensor latent;       // the clean latent of the picture, [1, C, h, w]
  int64_t start_step = 0;  // the schedule's step sampling begins at (steps - steps run)
  // [1, 1, h, w] in [0, 1], or undefined: where the mask is below 1, every model call sees
  // `latent` noised to its level there and its estimate is `latent` there, so the kept
  // area follows the picture; the result is blended onto the picture by the mask.
  at::Tensor mask;
};

}  // namespace kiln::sampling
