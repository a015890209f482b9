#include "pipelines/common/vae_file.h"

#include <filesystem>

#include "kiln/error.h"
#include "tensor_io/key_map.h"
#include "tensor_io/safetensors.h"
#include "weights/params.h"

namespace kiln::pipelines {
namespace {

constexpr const char* kPrefix = "first_stage_model.";

}  // namespace

VaeFile::VaeFile(const std::string& path, at::ScalarType dtype) : dtype_(vaeComputeDtype(dtype)) {
  name_ = std::filesystem::path(path).stem().string();
  if (!std::filesystem::exists(path))
    throw Error(ErrorKind::FileNotFound, "the VAE file '" + path + "' does not exist");
  const auto file = tensor_io::SafetensorsFile::open(path);
  tensor_io::TensorIndex probe;
  probe.addFile(file);
  // Both layouts name encoder.conv_in; the diffusers one is told by its down_blocks.
  if (probe.contains(std::string(kPrefix) + "encoder.conv_in.weight")) {
    index_.addFile(file);  // a checkpoint's VAE, or a whole checkpoint
  } else if (probe.contains("encoder.down_blocks.0.resnets.0.conv1.weight")) {
    tensor_io::mapDiffusersVae(file, kPrefix, index_);
  } else if (probe.contains("encoder.conv_in.weight")) {
    index_.addFile(file, kPrefix);
  } else {
    throw Error(ErrorKind::UnsupportedModel,
                "'" + path +
                    "' holds no VAE Kiln recognises (no encoder.conv_in.weight "
                    "in the original or the diffusers layout)");
  }
  const models::VaeConfig config = models::VaeConfig::detect(index_, kPrefix);
  vae_ = std::make_unique<models::AutoencoderKL>(config, kPrefix);
  weights::LoadOptions options;
  options.dtype = dtype;
  options.owned_prefixes = {kPrefix};
  weights::loadParams(vae_->params(), index_, options, "VAE");
}

VaeFile::~VaeFile() = default;

std::vector<memory::ComponentInfo> VaeFile::components() const {
  return {{"vae", "AutoencoderKL", memory::ComponentRole::Vae, &vae_->params(), false}};
}

VaeCodec VaeFile::codec(double scaling_factor) const {
  return {vae_.get(), dtype_, scaling_factor > 0 ? scaling_factor : vae_->config().scaling_factor,
          vae_->config().shift_factor};
}

}  // namespace kiln::pipelines
