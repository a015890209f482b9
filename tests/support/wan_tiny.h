// Test support: the tiny Wan 2.1 model of the conformance vectors laid out as a user has
// it, with a UMT5 tokenizer the test trains with sentencepiece's spm_train (the reference
// files come without one): a diffusers folder, and ComfyUI's single files (diffusion_models/,
// vae/, text_encoders/).
#pragma once

#include <QProcess>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "ref_tensors.h"

namespace kiln::testing {

struct WanTinyModel {
  std::string folder;        // a diffusers WanPipeline folder with tokenizer/spiece.model
  std::string transformer;   // ComfyUI layout: models/diffusion_models/<file>
  std::string vae;           // models/vae/<file>
  std::string text_encoder;  // models/text_encoders/<file>, its tokenizer beside it
};

// A sentencepiece model of at most 200 pieces (the tiny UMT5 knows 256 ids), T5's ids.
inline std::string trainTinySpiece(const std::filesystem::path& dir) {
  const auto corpus = dir / "corpus.txt";
  {
    std::ofstream out(corpus);
    for (const char* c : {"red", "blue", "green", "yellow", "purple", "white"})
      for (const char* t : {"cat", "dog", "bird", "river", "car", "tree", "ball"})
        for (const char* a :
             {"runs across a field", "jumps over a wall", "flies at sunset", "sits in the rain"})
          out << "a " << c << " " << t << " " << a << "\n";
  }
  QProcess train;
  train.start("spm_train", {QString::fromStdString("--input=" + corpus.string()),
                            QString::fromStdString("--model_prefix=" + (dir / "spiece").string()),
                            "--vocab_size=200", "--hard_vocab_limit=false", "--model_type=unigram",
                            "--character_coverage=1.0", "--pad_id=0", "--eos_id=1", "--unk_id=2",
                            "--bos_id=-1", "--minloglevel=2"});
  if (!train.waitForFinished(120000) || train.exitCode() != 0)
    throw std::runtime_error("spm_train failed: " + train.readAllStandardError().toStdString());
  return (dir / "spiece.model").string();
}

inline WanTinyModel writeWanTinyModel(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  const fs::path src = conformancePath("wan21-tiny-1234");
  WanTinyModel m;
  const fs::path folder = root / "wan-tiny";
  fs::create_directories(folder / "tokenizer");
  for (const char* part : {"transformer", "vae", "text_encoder", "scheduler"}) {
    fs::create_directories(folder / part);
    for (const auto& e : fs::directory_iterator(src / part))
      fs::copy_file(e.path(), folder / part / e.path().filename());
  }
  fs::copy_file(src / "model_index.json", folder / "model_index.json");
  const std::string spiece = trainTinySpiece(root);
  fs::copy_file(spiece, folder / "tokenizer" / "spiece.model");
  m.folder = folder.string();

  const fs::path models = root / "models";
  for (const char* d : {"diffusion_models", "vae", "text_encoders"})
    fs::create_directories(models / d);
  m.transformer = (models / "diffusion_models" / "wan2.1_t2v_tiny.safetensors").string();
  fs::copy_file(src / "wan2.1_t2v_tiny_original.safetensors", m.transformer);
  std::ofstream(models / "diffusion_models" / "wan2.1_t2v_tiny.json")
      << "{\"num_heads\": 2, \"text_len\": 16}";
  m.vae = (models / "vae" / "wan2.1_vae_tiny.safetensors").string();
  fs::copy_file(src / "wan2.1_vae_tiny_original.safetensors", m.vae);
  fs::copy_file(src / "vae" / "config.json",
                models / "vae" / "wan2.1_vae_tiny.json");  // latents_mean/std
  m.text_encoder = (models / "text_encoders" / "umt5_tiny.safetensors").string();
  fs::copy_file(src / "text_encoder" / "model.safetensors", m.text_encoder);
  fs::copy_file(spiece, models / "text_encoders" / "umt5_tiny.spiece.model");
  return m;
}

}  // namespace kiln::testing
