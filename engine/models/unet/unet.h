// The latent-diffusion UNet (ldm/sgm "openaimodel") that SD 1.x, 2.x and SDXL share, with
// parameters registered under the original single-file keys (input_blocks.N.M...).
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "models/unet/unet_config.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

// Conditioning for one UNet call (batch B).
struct UNetInputs {
  at::Tensor latent;     // [B, C, H, W]
  at::Tensor timesteps;  // [B] float (fractional timesteps are allowed)
  at::Tensor context;    // [B, N, context_dim]
  at::Tensor y;          // [B, adm_in_channels] for SDXL (pooled ‖ time-id sinusoids)
};

class UNetModel {
 public:
  UNetModel(const UNetConfig& config, std::string prefix);
  ~UNetModel();
  UNetModel(UNetModel&&) noexcept;
  UNetModel& operator=(UNetModel&&) noexcept;

  const UNetConfig& config() const noexcept { return config_; }
  const weights::ParamList& params() const noexcept { return params_; }
  at::Tensor forward(const UNetInputs& in) const;
  // SDXL: builds y from the pooled embedding [B, P] and the size ids [B, K].
  at::Tensor timeIdConditioning(const at::Tensor& pooled, const at::Tensor& time_ids) const;

 private:
  struct Impl;
  UNetConfig config_;
  std::string prefix_;
  weights::ParamList params_;
  std::unique_ptr<Impl> impl_;
};

// Bytes of activations (weights not included) one forward() holds at its peak for a
// batch of `batch` latents of latent_h x latent_w (a CFG step calls with twice the
// images) and `context_tokens` prompt tokens, computing in `dtype`, the float32 result
// included. Modelled from the architecture's tensors, block by block.
int64_t unetWorkingBytes(const UNetConfig& config, int64_t batch, int64_t latent_h,
                         int64_t latent_w, int64_t context_tokens, at::ScalarType dtype);

}  // namespace kiln::models
