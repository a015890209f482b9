// What every loaded model is to the rest of the engine, whatever its family: named
// components, each with a role (text encoder, denoiser, VAE) and its parameter list, the
// files the weights came from, and the names LoRA files give its layers. The model cache
// holds one type over it (pipelines::LoadedModel), which places, offloads, re-places, counts
// and patches every family the same way.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lora/lora_patcher.h"
#include "memory/offload.h"

namespace kiln::tensor_io {
class SafetensorsFile;
}

namespace kiln::pipelines {

class ModelParts {
 public:
  virtual ~ModelParts() = default;

  // For logs and the model list: "kiln-starter", "Wan2.1-T2V-1.3B", a VAE file's stem.
  virtual std::string displayName() const = 0;
  // What kind of model it is, in the description: its family ("sd1", "wan21") or "VAE".
  virtual std::string kindName() const = 0;
  // The precision the weights were loaded in (the denoiser's, where parts differ).
  virtual at::ScalarType dtype() const = 0;
  // Every component, in the order they are placed and listed.
  virtual std::vector<memory::ComponentInfo> components() const = 0;
  // The files the weights were read from (and may still view).
  virtual std::vector<std::shared_ptr<tensor_io::SafetensorsFile>> sourceFiles() const = 0;
  // The layers LoRA files may patch, with every name the family's LoRAs give them;
  // nothing where the model takes no LoRA.
  virtual std::optional<lora::LoraTargets> loraTargets() const { return std::nullopt; }

  // What loading assumed that the user should hear (a default taken for a missing config).
  virtual std::vector<std::string> notes() const { return {}; }

  // Every component's weights, in components() order.
  std::vector<const weights::ParamList*> paramLists() const;
  // Bytes of all loaded weights.
  int64_t weightBytes() const;
  // "name (kind, dtype, size)".
  std::string describe() const;
};

}  // namespace kiln::pipelines
