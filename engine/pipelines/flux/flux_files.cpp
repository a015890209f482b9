#include "pipelines/flux/flux_files.h"

#include <filesystem>
#include <initializer_list>

#include <nlohmann/json.hpp>

#include "core/json_file.h"
#include "kiln/error.h"
#include "models/common/model_files.h"
#include "models/flux/flux_transformer.h"
#include "models/text/t5_tokenizer.h"
#include "tensor_io/flux_key_map.h"
#include "tensor_io/key_map.h"
#include "tensor_io/safetensors.h"
#include "tensor_io/scaled_weights.h"

namespace kiln::pipelines {
namespace {

namespace fs = std::filesystem;
using tensor_io::SafetensorsFile;
using tensor_io::TensorIndex;

constexpr const char* kComfyModel = "model.diffusion_model.";
constexpr const char* kComfyClip = "text_encoders.clip_l.";
constexpr const char* kComfyT5 = "text_encoders.t5xxl.";
constexpr const char* kComfyVae = "vae.";

bool isDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The diffusers names of a FLUX transformer (a single file or a shard).
bool isDiffusersFluxTransformer(const TensorIndex& index) {
  return index.contains("x_embedder.weight") && index.hasPrefix("single_transformer_blocks.0.") &&
         index.hasPrefix("transformer_blocks.0.");
}

TensorIndex fileIndex(const std::string& path) {
  TensorIndex index;
  index.addFile(SafetensorsFile::open(path));
  return index;
}

// The entries under `prefix`, without it.
TensorIndex under(const TensorIndex& index, const std::string& prefix) {
  if (prefix.empty()) return index;
  TensorIndex out;
  for (const auto& [name, entry] : index.entries())
    if (name.compare(0, prefix.size(), prefix) == 0) out.add(name.substr(prefix.size()), entry);
  return out;
}

// The first of `prefixes` under which `probe` is in `index`, or null.
const char* prefixWith(const TensorIndex& index, std::initializer_list<const char*> prefixes,
                       const std::string& probe) {
  for (const char* p : prefixes)
    if (index.contains(p + probe)) return p;
  return nullptr;
}

FluxPartIndex finish(TensorIndex index, const std::string& path, const char* part) {
  FluxPartIndex out;
  out.index = tensor_io::withWeightScales(index, &out.scaled);
  if (out.scaled > 0)
    out.notes.push_back(std::string(part) + ": " + std::to_string(out.scaled) +
                        " fp8 weights with per-tensor scales in '" + path + "'");
  return out;
}

[[noreturn]] void notA(const std::string& path, const char* what, const TensorIndex& index) {
  throw Error(ErrorKind::UnsupportedModel,
              "'" + path + "' holds no " + what + " (" + index.summary() + ")");
}

// A single file's index, or a component folder's (all shards) with `sub` the pipeline
// folder's component.
TensorIndex partIndex(const std::string& path, const char* sub) {
  const fs::path p(path);
  models::checkModelPath(p);
  if (!isDir(p)) return fileIndex(path);
  TensorIndex index;
  for (const auto& f : models::folderWeights(models::componentFolder(p, sub)))
    index.addFile(SafetensorsFile::open(f.string()));
  return index;
}

}  // namespace

bool isFluxModel(const std::string& path) {
  const fs::path p(path);
  if (isDir(p)) {
    if (models::diffusersClass(p / "model_index.json") == "FluxPipeline") return true;
    return models::diffusersClass(p / "config.json") == "FluxTransformer2DModel" ||
           models::diffusersClass(p / "transformer" / "config.json") == "FluxTransformer2DModel";
  }
  try {
    const TensorIndex index = fileIndex(path);
    return models::isFluxTransformer(index, "") || models::isFluxTransformer(index, kComfyModel) ||
           isDiffusersFluxTransformer(index);
  } catch (const Error&) {
  }
  return false;
}

FluxModelPaths resolveFluxModel(const std::string& path, const std::string& vae,
                                const std::string& clip_l, const std::string& t5) {
  FluxModelPaths out;
  out.transformer = path;
  const fs::path p(path);
  if (isDir(p)) {
    const bool pipeline = isDir(p / "transformer");
    out.vae = !vae.empty() ? vae : pipeline ? (p / "vae").string() : std::string();
    out.clip_l = !clip_l.empty() ? clip_l
                 : pipeline      ? (p / "text_encoder").string()
                                 : std::string();
    out.t5 = !t5.empty() ? t5 : pipeline ? (p / "text_encoder_2").string() : std::string();
    if (out.t5 == (p / "text_encoder_2").string()) {
      for (const fs::path& candidate : {p / "tokenizer_2" / "spiece.model", p / "spiece.model",
                                        p / "tokenizer_2" / "tokenizer.json"})
        if (std::error_code ec; fs::is_regular_file(candidate, ec)) {
          out.t5_tokenizer = candidate.string();
          break;
        }
    }
  } else {
    // ComfyUI's all-in-one checkpoint carries every part.
    bool all_in_one = false;
    try {
      const TensorIndex index = fileIndex(path);
      all_in_one = index.hasPrefix(kComfyModel) && index.hasPrefix(kComfyVae) &&
                   index.hasPrefix(kComfyClip) && index.hasPrefix(kComfyT5);
    } catch (const Error&) {
    }
    const fs::path here = p.parent_path(), root = here.parent_path();
    out.vae = !vae.empty() ? vae : all_in_one ? path : std::string();
    if (out.vae.empty()) {
      const std::vector<fs::path> dirs{here, root / "vae", root / "VAE"};
      for (const auto& d : dirs)
        if (std::error_code ec; out.vae.empty() && fs::is_regular_file(d / "ae.safetensors", ec))
          out.vae = (d / "ae.safetensors").string();
      for (const std::vector<std::string>& words :
           {std::vector<std::string>{"flux", "vae"}, {"flux", "ae."}})
        if (out.vae.empty()) out.vae = models::findModelFile(dirs, words);
    }
    const std::vector<fs::path> text_dirs{here, root / "text_encoders", root / "clip"};
    out.clip_l = !clip_l.empty() ? clip_l
                 : all_in_one    ? path
                                 : models::findModelFile(text_dirs, {"clip_l"});
    out.t5 = !t5.empty() ? t5 : all_in_one ? path : models::findModelFile(text_dirs, {"t5"});
    const auto missing = [&](const char* what, const char* like, const fs::path& where,
                             const char* option) {
      throw Error(ErrorKind::FileNotFound, std::string("no ") + what + " found for '" + path +
                                               "' (looked for a .safetensors file named like " +
                                               like + " in " + here.string() + " and " +
                                               where.string() + "); give one with " + option);
    };
    if (out.vae.empty()) missing("FLUX VAE", "ae.safetensors", root / "vae", "--vae");
    if (out.clip_l.empty())
      missing("CLIP-L text encoder", "clip_l.safetensors", root / "text_encoders", "--clip-l");
    if (out.t5.empty())
      missing("T5 text encoder", "t5xxl_fp16.safetensors", root / "text_encoders", "--t5");
  }
  if (out.vae.empty() || out.clip_l.empty() || out.t5.empty())
    throw Error(ErrorKind::FileNotFound,
                "'" + path +
                    "' is a FLUX transformer folder without its VAE and text encoders; give "
                    "them with --vae, --clip-l and --t5, or open the whole FluxPipeline folder");
  if (out.t5_tokenizer.empty()) out.t5_tokenizer = models::findT5TokenizerModel(out.t5);
  return out;
}

FluxPartIndex openFluxTransformer(const std::string& path) {
  const fs::path p(path);
  models::checkModelPath(p);
  TensorIndex index;
  if (isDir(p)) {
    std::vector<std::shared_ptr<SafetensorsFile>> files;
    for (const auto& f : models::folderWeights(models::componentFolder(p, "transformer")))
      files.push_back(SafetensorsFile::open(f.string()));
    tensor_io::mapDiffusersFluxTransformer(files, "", index);
  } else {
    const TensorIndex raw = fileIndex(path);
    if (isDiffusersFluxTransformer(raw)) {
      tensor_io::mapDiffusersFluxTransformer(SafetensorsFile::open(path), "", index);
    } else {
      const char* prefix =
          prefixWith(raw, {"", kComfyModel}, "double_blocks.0.img_attn.qkv.weight");
      if (!prefix) notA(path, "FLUX transformer", raw);
      index = under(raw, prefix);
    }
  }
  if (!models::isFluxTransformer(index, "")) notA(path, "FLUX transformer", index);
  return finish(std::move(index), path, "transformer");
}

FluxPartIndex openFluxClip(const std::string& path) {
  const TensorIndex raw = partIndex(path, "text_encoder");
  const char* prefix = prefixWith(raw, {"", "text_encoders.clip_l.transformer.", kComfyClip},
                                  "text_model.embeddings.token_embedding.weight");
  if (!prefix) notA(path, "CLIP-L text encoder (text_model.*)", raw);
  return finish(under(raw, prefix), path, "CLIP-L");
}

FluxPartIndex openFluxT5(const std::string& path) {
  const TensorIndex raw = partIndex(path, "text_encoder_2");
  const char* prefix = prefixWith(raw, {"", "text_encoders.t5xxl.transformer.", kComfyT5},
                                  "encoder.final_layer_norm.weight");
  if (!prefix) notA(path, "T5 text encoder (encoder.*)", raw);
  TensorIndex index = under(raw, prefix);
  if (index.contains("encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"))
    throw Error(ErrorKind::UnsupportedModel,
                "'" + path +
                    "' is a UMT5 encoder (a position bias in every layer); FLUX.1 needs T5 v1.1 "
                    "XXL (t5xxl_fp16.safetensors)");
  return finish(std::move(index), path, "T5");
}

FluxPartIndex openFluxVae(const std::string& path) {
  const fs::path p(path);
  models::checkModelPath(p);
  TensorIndex index;
  if (isDir(p)) {
    for (const auto& f : models::folderWeights(models::componentFolder(p, "vae")))
      tensor_io::mapDiffusersVae(SafetensorsFile::open(f.string()), "", index);
  } else {
    const TensorIndex raw = fileIndex(path);
    if (raw.contains("encoder.down_blocks.0.resnets.0.conv1.weight")) {
      tensor_io::mapDiffusersVae(SafetensorsFile::open(path), "", index);
    } else {
      const char* prefix =
          prefixWith(raw, {"", kComfyVae, "first_stage_model."}, "encoder.conv_in.weight");
      if (!prefix) notA(path, "VAE", raw);
      index = under(raw, prefix);
    }
  }
  if (!index.contains("decoder.conv_in.weight")) notA(path, "VAE decoder", index);
  if (index.dim("decoder.conv_in.weight", 1) != 16 || index.contains("post_quant_conv.weight"))
    throw Error(ErrorKind::UnsupportedModel,
                "'" + path + "' is not FLUX.1's VAE (it has " +
                    std::to_string(index.dim("decoder.conv_in.weight", 1)) +
                    " latent channels; FLUX.1's ae.safetensors has 16 and no quant convolutions)");
  return finish(std::move(index), path, "VAE");
}

bool fluxHasGuidance(const std::string& path) {
  return openFluxTransformer(path).index.hasPrefix("guidance_in.");
}

int64_t fluxClipHeads(const std::string& path) {
  const fs::path p(path);
  fs::path config;
  if (isDir(p)) {
    config = isDir(p / "text_encoder") ? p / "text_encoder" / "config.json" : p / "config.json";
  } else {
    config = p.parent_path() / (p.stem().string() + ".json");
  }
  if (std::error_code ec; !fs::is_regular_file(config, ec)) return 0;
  const nlohmann::json j = core::readJsonObject(config);
  const auto it = j.find("num_attention_heads");
  if (it == j.end()) return 0;
  if (!it->is_number_integer() || it->get<int64_t>() < 1)
    throw Error(ErrorKind::CorruptFile,
                config.string() + ": num_attention_heads must be a count of 1 or more");
  return it->get<int64_t>();
}

}  // namespace kiln::pipelines
