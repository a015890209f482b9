// Opening an SD-family checkpoint (a single .safetensors file in the original layout, or
// a diffusers folder) and detecting its family and configuration from names and shapes.
// Free of torch: detection reads names, shapes and the few values it needs itself.
#pragma once

#include <string>
#include <vector>

#include "models/text/clip_text_config.h"
#include "models/unet/unet_config.h"
#include "models/vae/vae_config.h"
#include "sampling/schedule_config.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {

enum class ModelFamily { Invalid = 0, SD1, SDXL, SD2, SDXLRefiner };
const char* familyName(ModelFamily family);

// Which hidden state conditions the UNet: the last (through the final layer norm), the
// penultimate as it is (SDXL), or the penultimate through the final layer norm (SD 2.x).
enum class TextOutput { Invalid = 0, LastHidden, Penultimate, PenultimateNormed };

struct TextEncoderSpec {
  std::string prefix;
  ClipTextConfig config;
  int64_t pad_id = 49407;
  TextOutput output = TextOutput::LastHidden;
  bool provides_pooled = false;  // SDXL: its projected pooled output conditions the UNet
};

struct SdModelSpec {
  ModelFamily family = ModelFamily::Invalid;
  std::string unet_prefix = "model.diffusion_model.";
  std::string vae_prefix = "first_stage_model.";
  UNetConfig unet;
  VaeConfig vae;
  std::vector<TextEncoderSpec> text_encoders;
  sampling::ScheduleConfig schedule;
  // The UNet's size conditioning ends with an aesthetic score instead of the target size
  // (SDXL refiner: original size, crop, score; SDXL base: original size, crop, target size).
  bool aesthetic_time_ids = false;
  // Epsilon unless the file says otherwise: a "v_pred" key or "ztsnr" key (ComfyUI's
  // marks), "modelspec.prediction_type" metadata, "parameterization": "v" in the sidecar
  // configuration, a diffusers scheduler's prediction_type; for SD 2.x without any of
  // these, ComfyUI's test of one UNet norm's spread.
  sampling::Prediction prediction = sampling::Prediction::Epsilon;
  // The picture size the model was trained at: the file's "modelspec.resolution"
  // metadata ("512x512"), else the family's (SD 1.x 512, SDXL 1024, SD 2.x 768 for
  // v-prediction and 512 otherwise).
  int native_width = 0;
  int native_height = 0;
};

struct Checkpoint {
  std::string path;
  std::string display_name;  // file stem or folder name, for metadata
  tensor_io::TensorIndex index;
  SdModelSpec spec;
  std::vector<std::string> notes;  // how the configuration was decided, for the log
};

// Throws kiln::Error: FileNotFound, CorruptFile (malformed safetensors),
// UnsupportedModel (unknown layout, .ckpt pickles, ...) with a message that lists what
// was found and what to do.
Checkpoint openCheckpoint(const std::string& path);

// Family and configuration from a TensorIndex in the original layout.
SdModelSpec detectSdModel(const tensor_io::TensorIndex& index);

}  // namespace kiln::models
