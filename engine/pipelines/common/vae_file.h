// A VAE from a file of its own (what ComfyUI's VAELoader loads): the original layout with
// or without the checkpoint's "first_stage_model." prefix, or a diffusers AutoencoderKL.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>

#include "models/vae/autoencoder_kl.h"
#include "pipelines/common/model_parts.h"
#include "pipelines/common/vae_codec.h"
#include "tensor_io/tensor_index.h"

namespace kiln::pipelines {

class VaeFile final : public pipelines::ModelParts {
 public:
  // Throws kiln::Error: FileNotFound, CorruptFile (a malformed file), UnsupportedModel (no
  // VAE in it), ShapeMismatch (a VAE Kiln cannot build, every tensor named).
  VaeFile(const std::string& path, at::ScalarType dtype);
  ~VaeFile() override;

  const models::AutoencoderKL& vae() const noexcept { return *vae_; }
  // The files its weights were read from (and may still view).
  std::vector<std::shared_ptr<tensor_io::SafetensorsFile>> sourceFiles() const override {
    return index_.files();
  }
  at::ScalarType dtype() const noexcept override { return dtype_; }
  std::string displayName() const override { return name_; }  // the file's stem
  std::string kindName() const override { return "VAE"; }
  // The one component, "vae".
  std::vector<memory::ComponentInfo> components() const override;
  // The VAE with latents of `scaling_factor` (0: the VAE's own default).
  VaeCodec codec(double scaling_factor) const;

 private:
  tensor_io::TensorIndex index_;  // keeps the file mapped while the weights view it
  std::unique_ptr<models::AutoencoderKL> vae_;
  at::ScalarType dtype_;
  std::string name_;
};

}  // namespace kiln::pipelines
