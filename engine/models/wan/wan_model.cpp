#include "models/wan/wan_model.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/json_file.h"
#include "kiln/error.h"
#include "models/common/model_files.h"
#include "tensor_io/wan_key_map.h"

namespace kiln::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using core::readJsonObject;

bool isDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}
bool isFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// A value from the JSON files beside a single file: top level or one object deep.
std::optional<json> sidecarValue(const fs::path& file, const char* key, std::string& where) {
  const fs::path dir = file.parent_path();
  for (const fs::path& candidate : {dir / (file.stem().string() + ".json"), dir / "config.json",
                                    dir / "original_config.json"}) {
    if (!isFile(candidate)) continue;
    const json j = readJsonObject(candidate);
    where = candidate.string();
    if (j.contains(key)) return j[key];
    for (const auto& [name, value] : j.items())
      if (value.is_object() && value.contains(key)) return value[key];
  }
  return std::nullopt;
}

std::vector<double> doubles(const json& j, const std::string& what) {
  if (!j.is_array()) throw Error(ErrorKind::CorruptFile, what + " must be a list of numbers");
  std::vector<double> out;
  for (const auto& v : j) {
    if (!v.is_number()) throw Error(ErrorKind::CorruptFile, what + " must be a list of numbers");
    out.push_back(v.get<double>());
  }
  return out;
}

// A single file's tensors, without a "model.diffusion_model." (ComfyUI) prefix.
tensor_io::TensorIndex singleFileIndex(const fs::path& path, const std::string& probe) {
  auto file = tensor_io::SafetensorsFile::open(path.string());
  tensor_io::TensorIndex raw;
  raw.addFile(file);
  const std::string comfy = "model.diffusion_model.";
  if (raw.contains(probe) || !raw.contains(comfy + probe)) return raw;
  tensor_io::TensorIndex stripped;
  for (const auto& [name, entry] : raw.entries())
    stripped.add(name.compare(0, comfy.size(), comfy) == 0 ? name.substr(comfy.size()) : name,
                 entry);
  return stripped;
}

}  // namespace

bool isWanTransformer(const tensor_io::TensorIndex& index) {
  return index.contains("patch_embedding.weight") &&
         index.contains("blocks.0.self_attn.q.weight") && index.contains("head.modulation");
}

WanComponent<WanTransformerConfig> openWanTransformer(const std::string& path) {
  const fs::path p(path);
  checkModelPath(p);
  WanComponent<WanTransformerConfig> c;
  c.path = path;
  int64_t heads = 0, text_len = 512;
  if (isDir(p)) {
    const fs::path dir = componentFolder(p, "transformer");
    for (const auto& f : folderWeights(dir))
      tensor_io::mapDiffusersWanTransformer(tensor_io::SafetensorsFile::open(f.string()), "",
                                            c.index);
    const json cfg = readJsonObject(dir / "config.json");
    if (cfg.contains("num_attention_heads")) {
      if (!cfg["num_attention_heads"].is_number_integer() ||
          cfg["num_attention_heads"].get<int64_t>() < 1)
        throw Error(ErrorKind::UnsupportedModel,
                    (dir / "config.json").string() + ": num_attention_heads is " +
                        cfg["num_attention_heads"].dump() + "; it must be a count of 1 or more");
      heads = cfg["num_attention_heads"].get<int64_t>();
    }
    c.notes.push_back("configuration from " + (dir / "config.json").string());
  } else {
    c.index = singleFileIndex(p, "patch_embedding.weight");
    std::string where;
    if (const auto h = sidecarValue(p, "num_heads", where)) {
      if (!h->is_number_integer() || h->get<int64_t>() < 1)
        throw Error(ErrorKind::UnsupportedModel,
                    where + ": num_heads is " + h->dump() + "; it must be a count of 1 or more");
      heads = h->get<int64_t>();
      c.notes.push_back("head count from " + where);
    }
    if (const auto t = sidecarValue(p, "text_len", where); t && t->is_number_integer())
      text_len = t->get<int64_t>();
  }
  if (!isWanTransformer(c.index))
    throw Error(ErrorKind::UnsupportedModel,
                "'" + path + "' is not a Wan 2.1 transformer (" + c.index.summary() + ")");
  if (c.index.contains("img_emb.proj.0.weight") ||
      c.index.contains("blocks.0.cross_attn.k_img.weight"))
    throw Error(
        ErrorKind::UnsupportedModel,
        "'" + path + "' is a Wan image-to-video transformer; Kiln runs the text-to-video models");
  c.config = WanTransformerConfig::detect(c.index, "", heads);
  if (text_len < 1 || text_len > 4096)
    throw Error(ErrorKind::CorruptFile,
                "'" + path + "': text_len " + std::to_string(text_len) + " is out of range");
  c.config.text_len = text_len;
  return c;
}

WanComponent<WanVaeConfig> openWanVae(const std::string& path) {
  const fs::path p(path);
  checkModelPath(p);
  WanComponent<WanVaeConfig> c;
  c.path = path;
  std::optional<json> mean, std_dev;
  std::string where;
  if (isDir(p)) {
    const fs::path dir = componentFolder(p, "vae");
    for (const auto& f : folderWeights(dir))
      tensor_io::mapDiffusersWanVae(tensor_io::SafetensorsFile::open(f.string()), "", c.index);
    const json cfg = readJsonObject(dir / "config.json");
    where = (dir / "config.json").string();
    if (cfg.contains("latents_mean")) mean = cfg["latents_mean"];
    if (cfg.contains("latents_std")) std_dev = cfg["latents_std"];
  } else {
    c.index = singleFileIndex(p, "encoder.conv1.weight");
    mean = sidecarValue(p, "latents_mean", where);
    std_dev = sidecarValue(p, "latents_std", where);
  }
  if (!c.index.contains("encoder.conv1.weight") || !c.index.contains("decoder.conv1.weight") ||
      !c.index.contains("conv2.weight") || !c.index.contains("decoder.middle.1.to_qkv.weight"))
    throw Error(ErrorKind::UnsupportedModel,
                "'" + path + "' is not a Wan 2.1 VAE (" + c.index.summary() + ")");
  c.config = WanVaeConfig::detect(c.index, "");
  if (mean && std_dev) {
    c.config.latents_mean = doubles(*mean, where + ": latents_mean");
    c.config.latents_std = doubles(*std_dev, where + ": latents_std");
    c.notes.push_back("latent statistics from " + where);
  } else {
    c.notes.push_back("Wan 2.1 latent statistics");
  }
  if (std::any_of(c.config.latents_std.begin(), c.config.latents_std.end(),
                  [](double s) { return !(s > 0.0); }))
    throw Error(ErrorKind::CorruptFile, "'" + path + "': latents_std values must be positive");
  return c;
}

WanComponent<Umt5Config> openUmt5(const std::string& path) {
  const fs::path p(path);
  checkModelPath(p);
  WanComponent<Umt5Config> c;
  c.path = path;
  if (isDir(p)) {
    const fs::path dir = componentFolder(p, "text_encoder");
    for (const auto& f : folderWeights(dir))
      c.index.addFile(tensor_io::SafetensorsFile::open(f.string()));
  } else {
    c.index.addFile(tensor_io::SafetensorsFile::open(path));
  }
  if (!c.index.contains("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight") ||
      !c.index.contains("encoder.final_layer_norm.weight"))
    throw Error(ErrorKind::UnsupportedModel,
                "'" + path + "' is not a UMT5 text encoder (" + c.index.summary() + ")");
  if (!c.index.contains("encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight") &&
      c.index.contains("encoder.block.1.layer.0.SelfAttention.q.weight"))
    throw Error(ErrorKind::UnsupportedModel, "'" + path +
                                                 "' is a T5 encoder (one shared position bias); "
                                                 "Wan needs UMT5, which has one per layer");
  c.config = Umt5Config::detect(c.index, "");
  return c;
}

WanSamplingDefaults wanSamplingDefaults(const std::string& path) {
  WanSamplingDefaults d;
  const fs::path sched = fs::path(path) / "scheduler" / "scheduler_config.json";
  if (!isDir(path) || !isFile(sched)) {
    d.note = "Wan 2.1's sampling defaults (UniPC, shift 5)";
    return d;
  }
  const json j = readJsonObject(sched);
  const std::string cls = j.value("_class_name", "");
  if (cls == "FlowMatchEulerDiscreteScheduler") {
    d.unipc = false;
    if (j.contains("shift") && j["shift"].is_number()) d.flow_shift = j["shift"].get<double>();
  } else if (j.contains("flow_shift") && j["flow_shift"].is_number()) {
    d.flow_shift = j["flow_shift"].get<double>();
  }
  if (!(d.flow_shift > 0.0))
    throw Error(ErrorKind::CorruptFile,
                "'" + sched.string() + "': the flow shift must be positive");
  d.note = "sampling defaults from " + sched.string();
  return d;
}

}  // namespace kiln::models
