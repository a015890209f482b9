#include "models/sd/sd_checkpoint.h"

#include <filesystem>
#include <fstream>

#include <cmath>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/json_file.h"
#include "kiln/error.h"
#include "tensor_io/key_map.h"

namespace kiln::models {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSd1Text = "cond_stage_model.transformer.text_model.";
constexpr const char* kSd2Text = "cond_stage_model.model.";
constexpr const char* kSdxlText1 = "conditioner.embedders.0.transformer.text_model.";
constexpr const char* kSdxlText2 = "conditioner.embedders.1.model.";
constexpr const char* kSdxlRefinerText = "conditioner.embedders.0.model.";

json readJson(const fs::path& path) {
  return core::readJsonObject(path);
}

Activation parseActivation(const std::string& name, const std::string& where) {
  if (name == "quick_gelu") return Activation::QuickGelu;
  if (name == "gelu") return Activation::Gelu;
  throw Error(ErrorKind::UnsupportedModel, where + ": unsupported activation '" + name + "'");
}

void applyTextOverrides(const json& j, TextEncoderSpec& te, const std::string& where) {
  if (j.contains("heads")) te.config.heads = j["heads"].get<int64_t>();
  if (j.contains("num_attention_heads")) te.config.heads = j["num_attention_heads"].get<int64_t>();
  if (j.contains("act")) te.config.act = parseActivation(j["act"].get<std::string>(), where);
  if (j.contains("hidden_act"))
    te.config.act = parseActivation(j["hidden_act"].get<std::string>(), where);
}

// The original-style hyperparameters (the analogue of v1-inference.yaml) kept beside a
// single file: they say what shapes cannot (head counts, the latent scale).
void applyLdmConfig(const json& j, SdModelSpec& spec, const std::string& where) {
  if (j.contains("scale_factor")) spec.vae.scaling_factor = j["scale_factor"].get<double>();
  if (j.contains("linear_start")) spec.schedule.beta_start = j["linear_start"].get<double>();
  if (j.contains("linear_end")) spec.schedule.beta_end = j["linear_end"].get<double>();
  if (j.contains("timesteps")) spec.schedule.train_steps = j["timesteps"].get<int64_t>();
  if (j.contains("parameterization") && j["parameterization"].is_string())
    spec.prediction = j["parameterization"].get<std::string>() == "v"
                          ? sampling::Prediction::V
                          : sampling::Prediction::Epsilon;
  for (const char* key : {"unet_config", "network_config"}) {
    if (!j.contains(key)) continue;
    const json& u = j[key];
    if (u.contains("num_heads") && u["num_heads"].get<int64_t>() > 0) {
      spec.unet.num_heads = u["num_heads"].get<int64_t>();
      spec.unet.num_head_channels = 0;
    }
    if (u.contains("num_head_channels") && u["num_head_channels"].get<int64_t>() > 0) {
      spec.unet.num_head_channels = u["num_head_channels"].get<int64_t>();
      spec.unet.num_heads = 0;
    }
  }
  if (j.contains("cond_stage_config") && !spec.text_encoders.empty())
    applyTextOverrides(j["cond_stage_config"], spec.text_encoders[0], where);
  if (j.contains("conditioner")) {
    const json& c = j["conditioner"];
    for (std::size_t i = 0; i < spec.text_encoders.size(); ++i) {
      const std::string key = "embedders." + std::to_string(i);
      if (c.contains(key)) applyTextOverrides(c[key], spec.text_encoders[i], where);
    }
  }
}

std::string familyOfLdmConfig(const json& j) {
  return j.contains("family") && j["family"].is_string() ? j["family"].get<std::string>() : "";
}

// A single file's configuration sidecar: "<stem>.json", or "ldm_config.json" beside it
// when its family matches.
void applySidecar(const fs::path& file, Checkpoint& ck) {
  const fs::path named = file.parent_path() / (file.stem().string() + ".json");
  const fs::path shared = file.parent_path() / "ldm_config.json";
  for (const auto& candidate : {named, shared}) {
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) continue;
    const json j = readJson(candidate);
    const std::string family = familyOfLdmConfig(j);
    if (!family.empty() && family != familyName(ck.spec.family)) continue;
    applyLdmConfig(j, ck.spec, candidate.string());
    ck.notes.push_back("configuration from " + candidate.string());
    return;
  }
  ck.notes.push_back(std::string("default ") + familyName(ck.spec.family) + " configuration");
}

// "modelspec.resolution" ("WxH"), the ModelSpec metadata key checkpoints carry for the
// size they were trained at. Malformed values are ignored (noted) rather than trusted.
void applyResolutionMetadata(Checkpoint& ck) {
  for (const auto& file : ck.index.files()) {
    const auto& meta = file->metadata();
    const auto it = meta.find("modelspec.resolution");
    if (it == meta.end()) continue;
    int w = 0, h = 0;
    char tail = 0;
    if (std::sscanf(it->second.c_str(), "%dx%d%c", &w, &h, &tail) == 2 && w >= 8 && h >= 8 &&
        w <= 8192 && h <= 8192) {
      ck.spec.native_width = w;
      ck.spec.native_height = h;
    } else {
      ck.notes.push_back("ignored malformed modelspec.resolution '" + it->second + "'");
    }
    return;
  }
}

// The population standard deviation of a tensor stored as it is used (one source, no
// transform) in a floating type; nothing for anything else.
std::optional<double> spreadOf(const tensor_io::IndexEntry& entry) {
  if (entry.transform != tensor_io::Transform::Identity || entry.sources.size() != 1)
    return std::nullopt;
  const tensor_io::TensorSource& source = entry.sources.front();
  const uint64_t count = source.info->numel();
  if (count == 0 || count > (uint64_t{1} << 24)) return std::nullopt;
  std::vector<double> values(count);
  if (!tensor_io::toDoubles(source.info->dtype, source.file->bytes(*source.info).data(),
                            values.size(), values.data()))
    return std::nullopt;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(count);
  double variance = 0;
  for (double v : values) variance += (v - mean) * (v - mean);
  return std::sqrt(variance / static_cast<double>(count));
}

// What the file itself says about its prediction type (see SdModelSpec::prediction).
void applyPredictionHints(Checkpoint& ck) {
  bool known = false;
  for (const auto& file : ck.index.files()) {
    const auto& meta = file->metadata();
    const auto it = meta.find("modelspec.prediction_type");
    if (it == meta.end()) continue;
    if (it->second == "v" || it->second == "v_prediction")
      ck.spec.prediction = sampling::Prediction::V;
    else if (it->second == "epsilon" || it->second == "eps")
      ck.spec.prediction = sampling::Prediction::Epsilon;
    else
      continue;
    known = true;
    ck.notes.push_back("prediction type from modelspec.prediction_type '" + it->second + "'");
  }
  if (ck.index.contains("v_pred")) {
    ck.spec.prediction = sampling::Prediction::V;
    known = true;
    ck.notes.push_back("v-prediction: the file has a v_pred key");
  }
  if (ck.index.contains("ztsnr")) {
    ck.spec.schedule.zero_terminal_snr = true;
    ck.notes.push_back("zero terminal SNR: the file has a ztsnr key");
  }
  // SD 2.x 768 models predict v and the 512 base models epsilon, and nothing in the file
  // says which: ComfyUI tells them by the spread of one norm's bias, as here.
  const std::string probe =
      ck.spec.unet_prefix + "output_blocks.11.1.transformer_blocks.0.norm1.bias";
  if (!known && ck.spec.family == ModelFamily::SD2 &&
      ck.spec.prediction == sampling::Prediction::Epsilon && ck.spec.unet.in_channels == 4 &&
      ck.index.contains(probe)) {
    const std::optional<double> spread = spreadOf(ck.index.at(probe));
    if (spread && *spread > 0.09) {
      ck.spec.prediction = sampling::Prediction::V;
      ck.notes.push_back("v-prediction: SD 2.x whose UNet norms look like the 768-v model's");
    }
  }
  if (ck.spec.family == ModelFamily::SD2 && ck.spec.prediction == sampling::Prediction::V)
    ck.spec.native_width = ck.spec.native_height = 768;
}

fs::path findWeights(const fs::path& dir, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    std::error_code ec;
    if (fs::is_regular_file(dir / n, ec)) return dir / n;
  }
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".bin")
        throw Error(ErrorKind::UnsupportedModel,
                    "'" + dir.string() + "' holds only pickle weights (" +
                        e.path().filename().string() +
                        "); Kiln loads .safetensors only. Convert the folder with diffusers' "
                        "save_pretrained(..., safe_serialization=True).");
    }
  }
  throw Error(ErrorKind::FileNotFound, "no weights found in '" + dir.string() + "'");
}

void applyDiffusersConfigs(const fs::path& dir, Checkpoint& ck) {
  SdModelSpec& spec = ck.spec;
  std::error_code ec;
  if (fs::is_regular_file(dir / "unet" / "config.json", ec)) {
    const json u = readJson(dir / "unet" / "config.json");
    const json heads = u.contains("num_attention_heads") && !u["num_attention_heads"].is_null()
                           ? u["num_attention_heads"]
                           : u.value("attention_head_dim", json());
    if (heads.is_number_integer()) {
      spec.unet.num_heads = heads.get<int64_t>();
      spec.unet.num_head_channels = 0;
    } else if (heads.is_array()) {
      spec.unet.heads_per_level = heads.get<std::vector<int64_t>>();
    }
    if (u.contains("addition_time_embed_dim") && u["addition_time_embed_dim"].is_number_integer())
      spec.unet.time_id_embed_dim = u["addition_time_embed_dim"].get<int64_t>();
  }
  const std::vector<const char*> te_dirs =
      spec.family == ModelFamily::SDXLRefiner
          ? std::vector<const char*>{"text_encoder_2"}
          : std::vector<const char*>{"text_encoder", "text_encoder_2"};
  for (std::size_t i = 0; i < spec.text_encoders.size() && i < te_dirs.size(); ++i) {
    const fs::path cfg = dir / te_dirs[i] / "config.json";
    if (fs::is_regular_file(cfg, ec))
      applyTextOverrides(readJson(cfg), spec.text_encoders[i], cfg.string());
  }
  if (fs::is_regular_file(dir / "vae" / "config.json", ec)) {
    const json v = readJson(dir / "vae" / "config.json");
    if (v.contains("scaling_factor")) spec.vae.scaling_factor = v["scaling_factor"].get<double>();
  }
  if (fs::is_regular_file(dir / "scheduler" / "scheduler_config.json", ec)) {
    const json s = readJson(dir / "scheduler" / "scheduler_config.json");
    const std::string where = (dir / "scheduler" / "scheduler_config.json").string();
    if (s.value("beta_schedule", "scaled_linear") != "scaled_linear")
      throw Error(ErrorKind::UnsupportedModel,
                  where + ": only the scaled_linear beta schedule is supported");
    const std::string prediction = s.value("prediction_type", "epsilon");
    if (prediction != "epsilon" && prediction != "v_prediction")
      throw Error(ErrorKind::UnsupportedModel, where + ": prediction type '" + prediction +
                                                   "' is not supported (epsilon or v_prediction)");
    spec.prediction =
        prediction == "v_prediction" ? sampling::Prediction::V : sampling::Prediction::Epsilon;
    spec.schedule.zero_terminal_snr = s.value("rescale_betas_zero_snr", false);
    spec.schedule.beta_start = s.value("beta_start", spec.schedule.beta_start);
    spec.schedule.beta_end = s.value("beta_end", spec.schedule.beta_end);
    spec.schedule.train_steps = s.value("num_train_timesteps", spec.schedule.train_steps);
    spec.schedule.steps_offset = s.value("steps_offset", spec.schedule.steps_offset);
    if (s.contains("timestep_spacing"))
      spec.schedule.spacing = sampling::parseSpacing(s["timestep_spacing"].get<std::string>());
  }
  ck.notes.push_back("configuration from the diffusers folder's config files");
}

Checkpoint openDiffusersFolder(const fs::path& dir) {
  using namespace tensor_io;
  Checkpoint ck;
  std::error_code ec;
  const bool has_te1 = fs::is_directory(dir / "text_encoder", ec);
  const bool has_te2 = fs::is_directory(dir / "text_encoder_2", ec);
  if (!fs::is_directory(dir / "unet", ec) || !fs::is_directory(dir / "vae", ec) ||
      (!has_te1 && !has_te2))
    throw Error(ErrorKind::UnsupportedModel,
                "'" + dir.string() +
                    "' is not a diffusers model folder (it needs unet/, vae/ and "
                    "text_encoder/ subfolders, or text_encoder_2/ for an SDXL refiner)");
  const auto unet =
      SafetensorsFile::open(findWeights(dir / "unet", {"diffusion_pytorch_model.safetensors",
                                                       "diffusion_pytorch_model.fp16.safetensors"})
                                .string());
  const auto vae =
      SafetensorsFile::open(findWeights(dir / "vae", {"diffusion_pytorch_model.safetensors",
                                                      "diffusion_pytorch_model.fp16.safetensors"})
                                .string());
  const auto weightsOf = [&](const char* sub) {
    return SafetensorsFile::open(
        findWeights(dir / sub, {"model.safetensors", "model.fp16.safetensors"}).string());
  };
  mapDiffusersUNet(unet, "model.diffusion_model.", ck.index);
  mapDiffusersVae(vae, "first_stage_model.", ck.index);
  if (has_te1 && has_te2) {
    mapHfClipText(weightsOf("text_encoder"), "conditioner.embedders.0.transformer.", ck.index);
    mapHfClipToOpenClip(weightsOf("text_encoder_2"), kSdxlText2, ck.index);
  } else if (has_te2) {
    mapHfClipToOpenClip(weightsOf("text_encoder_2"), kSdxlRefinerText, ck.index);  // SDXL refiner
  } else {
    mapHfClipText(weightsOf("text_encoder"), "cond_stage_model.transformer.", ck.index);
  }
  ck.spec = detectSdModel(ck.index);
  applyDiffusersConfigs(dir, ck);
  return ck;
}

}  // namespace

const char* familyName(ModelFamily family) {
  switch (family) {
    case ModelFamily::SD1:
      return "sd1";
    case ModelFamily::SDXL:
      return "sdxl";
    case ModelFamily::SD2:
      return "sd2";
    case ModelFamily::SDXLRefiner:
      return "sdxl_refiner";
    case ModelFamily::Invalid:
      break;
  }
  return "unknown";
}

// Key probes, one family after another in the order that tells them apart (SDXL's two
// text encoders before either one alone), then the UNet's shape; one function so the
// order stays in view.
SdModelSpec detectSdModel(const tensor_io::TensorIndex& index) {
  SdModelSpec spec;
  const bool has_unet = index.contains(spec.unet_prefix + "input_blocks.0.0.weight");
  const bool has_vae = index.contains(spec.vae_prefix + "encoder.conv_in.weight");
  if (index.contains(std::string(kSdxlText1) + "embeddings.token_embedding.weight") &&
      index.contains(std::string(kSdxlText2) + "token_embedding.weight")) {
    spec.family = ModelFamily::SDXL;
    TextEncoderSpec te1{kSdxlText1,
                        ClipTextConfig::detect(index, kSdxlText1, ClipLayout::HuggingFace), 49407,
                        TextOutput::Penultimate, false};
    TextEncoderSpec te2{kSdxlText2, ClipTextConfig::detect(index, kSdxlText2, ClipLayout::OpenClip),
                        0, TextOutput::Penultimate, true};
    spec.text_encoders = {te1, te2};
    spec.vae.scaling_factor = 0.13025;
    spec.schedule.spacing = sampling::TimestepSpacing::Leading;
    spec.native_width = spec.native_height = 1024;
  } else if (index.contains(std::string(kSd1Text) + "embeddings.token_embedding.weight")) {
    spec.family = ModelFamily::SD1;
    spec.text_encoders = {{kSd1Text,
                           ClipTextConfig::detect(index, kSd1Text, ClipLayout::HuggingFace), 49407,
                           TextOutput::LastHidden, false}};
    spec.vae.scaling_factor = 0.18215;
    spec.schedule.spacing = sampling::TimestepSpacing::Linspace;
    spec.native_width = spec.native_height = 512;
  } else if (index.contains(std::string(kSd2Text) + "token_embedding.weight")) {
    // SD 2.x: OpenCLIP ViT-H, its penultimate layer through the final norm, padded with 0.
    spec.family = ModelFamily::SD2;
    spec.text_encoders = {{kSd2Text, ClipTextConfig::detect(index, kSd2Text, ClipLayout::OpenClip),
                           0, TextOutput::PenultimateNormed, false}};
    spec.vae.scaling_factor = 0.18215;
    spec.schedule.spacing = sampling::TimestepSpacing::Leading;
    spec.native_width = spec.native_height = 512;
  } else if (index.contains(std::string(kSdxlRefinerText) + "token_embedding.weight")) {
    // SDXL refiner: OpenCLIP ViT-bigG alone (SDXL's second encoder), size conditioning
    // with an aesthetic score in place of the target size.
    spec.family = ModelFamily::SDXLRefiner;
    spec.text_encoders = {{kSdxlRefinerText,
                           ClipTextConfig::detect(index, kSdxlRefinerText, ClipLayout::OpenClip), 0,
                           TextOutput::Penultimate, true}};
    spec.vae.scaling_factor = 0.13025;
    spec.schedule.spacing = sampling::TimestepSpacing::Leading;
    spec.aesthetic_time_ids = true;
    spec.native_width = spec.native_height = 1024;
  } else {
    throw Error(ErrorKind::UnsupportedModel,
                "not a checkpoint Kiln recognises (expected an SD 1.x, SD 2.x, SDXL or SDXL "
                "refiner text encoder); found " +
                    index.summary());
  }
  if (!has_unet || !has_vae)
    throw Error(ErrorKind::UnsupportedModel,
                std::string("the ") + familyName(spec.family) + " checkpoint lacks its " +
                    (!has_unet ? "UNet (model.diffusion_model.*)" : "VAE (first_stage_model.*)") +
                    "; Kiln needs a full checkpoint. Found " + index.summary());
  spec.unet = UNetConfig::detect(index, spec.unet_prefix);
  spec.vae = [&] {
    VaeConfig v = VaeConfig::detect(index, spec.vae_prefix);
    v.scaling_factor = spec.vae.scaling_factor;
    return v;
  }();
  if (spec.family == ModelFamily::SDXL || spec.family == ModelFamily::SDXLRefiner) {
    spec.unet.num_heads = 0;
    spec.unet.num_head_channels = 64;
    const int64_t pooled = spec.text_encoders.back().config.projection_dim;
    const int64_t ids = spec.aesthetic_time_ids ? 5 : 6;
    if (spec.unet.adm_in_channels <= pooled || (spec.unet.adm_in_channels - pooled) % ids != 0)
      throw Error(ErrorKind::ShapeMismatch,
                  std::string(familyName(spec.family)) + " label embedding takes " +
                      std::to_string(spec.unet.adm_in_channels) + " inputs, which does not fit a " +
                      std::to_string(pooled) + "-wide pooled embedding plus " +
                      std::to_string(ids) +
                      (spec.aesthetic_time_ids ? " size and aesthetic-score ids" : " size ids"));
    spec.unet.time_id_embed_dim = (spec.unet.adm_in_channels - pooled) / ids;
    int64_t context = 0;
    for (const auto& te : spec.text_encoders) context += te.config.hidden;
    if (context != spec.unet.context_dim)
      throw Error(ErrorKind::ShapeMismatch, "the text encoders give " + std::to_string(context) +
                                                "-wide context but the UNet expects " +
                                                std::to_string(spec.unet.context_dim));
  } else {
    // SD 1.x: 8 heads; SD 2.x: 64-wide heads.
    spec.unet.num_heads = spec.family == ModelFamily::SD2 ? 0 : 8;
    spec.unet.num_head_channels = spec.family == ModelFamily::SD2 ? 64 : 0;
    if (spec.text_encoders[0].config.hidden != spec.unet.context_dim)
      throw Error(ErrorKind::ShapeMismatch,
                  "the text encoder gives " + std::to_string(spec.text_encoders[0].config.hidden) +
                      "-wide context but the UNet expects " +
                      std::to_string(spec.unet.context_dim));
  }
  return spec;
}

namespace {

// Every number the networks divide or loop by, checked once the configuration is settled
// (shapes, then a sidecar or diffusers config that may say otherwise): a zero or negative
// head, channel or layer count is a clear error naming where it came from, not a SIGFPE.
void requireAtLeast(int64_t value, int64_t least, const std::string& field,
                    const std::string& where) {
  if (value < least)
    throw Error(ErrorKind::UnsupportedModel,
                where + ": " + field + " is " + std::to_string(value) + "; it must be " +
                    (least == 0 ? "0 or more" : "at least " + std::to_string(least)));
}

void validateUNet(const UNetConfig& u, const std::string& where) {
  requireAtLeast(u.in_channels, 1, "the UNet's input channels", where);
  requireAtLeast(u.out_channels, 1, "the UNet's output channels", where);
  requireAtLeast(u.model_channels, 1, "the UNet's model channels", where);
  requireAtLeast(u.time_embed_dim, 1, "the UNet's time embedding width", where);
  requireAtLeast(u.num_res_blocks, 1, "the UNet's blocks per level", where);
  requireAtLeast(u.context_dim, 1, "the UNet's context width", where);
  requireAtLeast(u.levels(), 1, "the UNet's level count", where);
  for (int64_t m : u.channel_mult) requireAtLeast(m, 1, "a UNet channel multiplier", where);
  for (const auto* depths : {&u.input_depth, &u.output_depth})
    for (int64_t d : *depths) requireAtLeast(d, 0, "a UNet transformer depth", where);
  requireAtLeast(u.middle_depth, 0, "the UNet's middle transformer depth", where);
  requireAtLeast(u.adm_in_channels, 0, "the UNet's adm_in_channels", where);
  requireAtLeast(u.time_id_embed_dim, 0, "the UNet's time-id width", where);
  if (!u.heads_per_level.empty() && static_cast<int64_t>(u.heads_per_level.size()) != u.levels())
    throw Error(ErrorKind::UnsupportedModel,
                where + ": " + std::to_string(u.heads_per_level.size()) +
                    " head counts for a UNet of " + std::to_string(u.levels()) + " levels");
  if (u.heads_per_level.empty()) {
    if (u.num_heads <= 0 && u.num_head_channels <= 0)
      throw Error(ErrorKind::UnsupportedModel,
                  where + ": the UNet has neither a head count (num_heads " +
                      std::to_string(u.num_heads) + ") nor a head width (num_head_channels " +
                      std::to_string(u.num_head_channels) + ")");
  }
  for (int64_t level = 0; level < u.levels(); ++level) {
    const int64_t channels = u.model_channels * u.channel_mult[static_cast<std::size_t>(level)];
    if (u.heads_per_level.empty() && u.num_heads <= 0 && channels % u.num_head_channels != 0)
      throw Error(ErrorKind::UnsupportedModel, where + ": UNet level " + std::to_string(level) +
                                                   " has " + std::to_string(channels) +
                                                   " channels, not a multiple of the head width " +
                                                   std::to_string(u.num_head_channels));
    const int64_t heads = u.headsFor(level, channels);
    requireAtLeast(heads, 1, "the head count of UNet level " + std::to_string(level), where);
    if (channels % heads != 0)
      throw Error(ErrorKind::UnsupportedModel, where + ": UNet level " + std::to_string(level) +
                                                   " has " + std::to_string(channels) +
                                                   " channels, which " + std::to_string(heads) +
                                                   " heads do not divide");
  }
}

void validateVae(const VaeConfig& v, const std::string& where) {
  requireAtLeast(v.in_channels, 1, "the VAE's input channels", where);
  requireAtLeast(v.out_channels, 1, "the VAE's output channels", where);
  requireAtLeast(v.base_channels, 1, "the VAE's base channels", where);
  requireAtLeast(v.num_res_blocks, 1, "the VAE's blocks per level", where);
  requireAtLeast(v.z_channels, 1, "the VAE's latent channels (z_channels)", where);
  requireAtLeast(v.embed_dim, 1, "the VAE's embed_dim", where);
  requireAtLeast(static_cast<int64_t>(v.channel_mult.size()), 1, "the VAE's level count", where);
  for (int64_t m : v.channel_mult) requireAtLeast(m, 1, "a VAE channel multiplier", where);
  if (!(v.scaling_factor > 0) || !std::isfinite(v.scaling_factor))
    throw Error(ErrorKind::UnsupportedModel, where + ": the VAE's scaling factor " +
                                                 std::to_string(v.scaling_factor) +
                                                 " must be a positive number");
}

void validateText(const ClipTextConfig& c, const std::string& where) {
  requireAtLeast(c.vocab, 1, "the text encoder's vocabulary", where);
  requireAtLeast(c.hidden, 1, "the text encoder's width", where);
  requireAtLeast(c.layers, 1, "the text encoder's layer count", where);
  requireAtLeast(c.heads, 1, "the text encoder's head count", where);
  requireAtLeast(c.intermediate, 1, "the text encoder's feed-forward width", where);
  requireAtLeast(c.max_positions, 1, "the text encoder's positions", where);
  requireAtLeast(c.projection_dim, 0, "the text encoder's projection width", where);
  if (c.hidden % c.heads != 0)
    throw Error(ErrorKind::UnsupportedModel,
                where + ": the text encoder's width " + std::to_string(c.hidden) +
                    " does not split into " + std::to_string(c.heads) + " heads");
}

void validateSpec(const SdModelSpec& spec, const std::string& where) {
  validateUNet(spec.unet, where);
  validateVae(spec.vae, where);
  for (const TextEncoderSpec& te : spec.text_encoders) validateText(te.config, where);
  requireAtLeast(spec.schedule.train_steps, 1, "the schedule's training steps", where);
  if (!(spec.schedule.beta_start > 0) || !(spec.schedule.beta_end > spec.schedule.beta_start) ||
      !(spec.schedule.beta_end < 1))
    throw Error(ErrorKind::UnsupportedModel, where + ": the noise schedule's betas (" +
                                                 std::to_string(spec.schedule.beta_start) + " to " +
                                                 std::to_string(spec.schedule.beta_end) +
                                                 ") must rise between 0 and 1");
}

// A configuration file's value of the wrong type ("num_heads": "eight") is the file's
// fault, said with its name.
template <typename F>
void readingConfig(const std::string& where, F&& apply) {
  try {
    apply();
  } catch (const json::exception& e) {
    throw Error(ErrorKind::CorruptFile,
                where + ": a configuration value has the wrong type or form (" + e.what() + ")");
  }
}

}  // namespace

Checkpoint openCheckpoint(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw Error(ErrorKind::FileNotFound, "model '" + path + "' does not exist");
  if (fs::is_directory(p, ec)) {
    Checkpoint ck;
    readingConfig("the diffusers folder '" + path + "'", [&] { ck = openDiffusersFolder(p); });
    validateSpec(ck.spec, "the diffusers folder '" + path + "'");
    ck.path = path;
    ck.display_name =
        p.filename().empty() ? p.parent_path().filename().string() : p.filename().string();
    return ck;
  }
  const std::string ext = p.extension().string();
  if (ext == ".ckpt" || ext == ".pt" || ext == ".pth" || ext == ".bin")
    throw Error(
        ErrorKind::UnsupportedModel,
        "'" + path +
            "' is a pickle checkpoint, which can run arbitrary code when loaded; "
            "Kiln only loads .safetensors. Convert it once with a trusted tool (for example "
            "diffusers' convert_original_stable_diffusion_to_diffusers.py, or any "
            "'ckpt to safetensors' converter) and open the .safetensors file.");
  Checkpoint ck;
  ck.path = path;
  ck.display_name = p.stem().string();
  ck.index.addFile(tensor_io::SafetensorsFile::open(path));
  ck.spec = detectSdModel(ck.index);
  readingConfig("the configuration beside '" + path + "'", [&] { applySidecar(p, ck); });
  applyPredictionHints(ck);
  applyResolutionMetadata(ck);
  validateSpec(ck.spec,
               ck.notes.empty() ? "'" + path + "'" : "'" + path + "' (" + ck.notes.front() + ")");
  return ck;
}

}  // namespace kiln::models
