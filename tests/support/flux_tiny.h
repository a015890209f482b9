// Test support: the tiny FLUX.1 model of the conformance vectors laid out as users have
// it, with a T5 tokenizer the test trains (the reference files come without one): ComfyUI's
// single files (diffusion_models/ with ae.safetensors in vae/ and CLIP-L and T5 in
// text_encoders/), ComfyUI's all-in-one checkpoint, and the diffusers FluxPipeline folder.
// The tiny CLIP-L has 4 heads, which its shapes do not tell: a "<stem>.json" beside each
// single file and the diffusers config say so.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "lora_files.h"
#include "ref_tensors.h"
#include "tensor_io/materialize.h"
#include "tensor_io/tensor_index.h"
#include "wan_tiny.h"

namespace kiln::testing {

struct FluxTinyModel {
  std::string folder;           // diffusers FluxPipeline folder, tokenizer_2/spiece.model
  std::string transformer;      // models/diffusion_models/flux1-dev-tiny.safetensors
  std::string schnell;          // models/diffusion_models/flux1-schnell-tiny.safetensors
  std::string aio;              // models/checkpoints/flux1-dev-tiny-aio.safetensors
  std::string vae, clip_l, t5;  // models/vae/ae.safetensors, models/text_encoders/...
};

// Every tensor of `file` (a conformance file) under `prefix`, appended to `out` as stored.
inline void appendTensors(const std::string& file, const std::string& prefix, NamedTensors& out) {
  tensor_io::TensorIndex index;
  index.addFile(tensor_io::SafetensorsFile::open(file));
  for (const auto& [name, entry] : index.entries())
    out.push_back({prefix + name, tensor_io::materialize(entry, at::kHalf)});
}

inline void writeClipHeads(const std::filesystem::path& json) {
  std::ofstream(json) << "{\"num_attention_heads\": 4}";
}

inline FluxTinyModel writeFluxTinyModel(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  const fs::path src = conformancePath("flux1-tiny-1234");
  FluxTinyModel m;
  fs::create_directories(root);
  const std::string spiece = trainTinySpiece(root);

  const fs::path folder = root / "flux-tiny";
  for (const char* part :
       {"transformer", "vae", "text_encoder", "text_encoder_2", "tokenizer", "scheduler"}) {
    fs::create_directories(folder / part);
    for (const auto& e : fs::directory_iterator(src / part))
      fs::copy_file(e.path(), folder / part / e.path().filename());
  }
  fs::copy_file(src / "model_index.json", folder / "model_index.json");
  fs::create_directories(folder / "tokenizer_2");
  fs::copy_file(spiece, folder / "tokenizer_2" / "spiece.model");
  m.folder = folder.string();

  const fs::path models = root / "models";
  for (const char* d : {"diffusion_models", "vae", "text_encoders", "checkpoints"})
    fs::create_directories(models / d);
  m.transformer = (models / "diffusion_models" / "flux1-dev-tiny.safetensors").string();
  fs::copy_file(src / "flux1_tiny_transformer_original.safetensors", m.transformer);
  m.schnell = (models / "diffusion_models" / "flux1-schnell-tiny.safetensors").string();
  fs::copy_file(src / "flux1_schnell_tiny_transformer_original.safetensors", m.schnell);
  m.vae = (models / "vae" / "ae.safetensors").string();
  fs::copy_file(src / "flux1_tiny_ae_original.safetensors", m.vae);
  m.clip_l = (models / "text_encoders" / "clip_l.safetensors").string();
  fs::copy_file(src / "text_encoder" / "model.safetensors", m.clip_l);
  writeClipHeads(models / "text_encoders" / "clip_l.json");
  m.t5 = (models / "text_encoders" / "t5xxl_fp16.safetensors").string();
  fs::copy_file(src / "text_encoder_2" / "model.safetensors", m.t5);
  fs::copy_file(spiece, models / "text_encoders" / "t5xxl_fp16.spiece.model");

  // ComfyUI's all-in-one checkpoint: every part under its prefix.
  NamedTensors all;
  appendTensors(m.transformer, "model.diffusion_model.", all);
  appendTensors(m.vae, "vae.", all);
  appendTensors(m.clip_l, "text_encoders.clip_l.transformer.", all);
  appendTensors(m.t5, "text_encoders.t5xxl.transformer.", all);
  m.aio = (models / "checkpoints" / "flux1-dev-tiny-aio.safetensors").string();
  writeTensors(m.aio, all, /*half=*/true);
  writeClipHeads(models / "checkpoints" / "flux1-dev-tiny-aio.json");
  fs::copy_file(spiece, models / "checkpoints" / "flux1-dev-tiny-aio.spiece.model");
  return m;
}

}  // namespace kiln::testing
