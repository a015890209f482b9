// ComfyUI workflows into Kiln workflows: one table says which ComfyUI node becomes which
// Kiln node, how its inputs, widgets and outputs map; the two file formats are read into
// the same intermediate form first.
#include "kiln/comfy_import.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "kiln/error.h"
#include "kiln/units.h"
#include "sampling/sampler_names.h"

namespace kiln {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

enum class FileKind { None = 0, Checkpoint, Lora, Vae, Image, Diffusion, TextEncoder };

struct Mapping {
  const char* comfy;
  const char* kiln;
  std::vector<std::pair<const char*, const char*>> links;   // ComfyUI input -> Kiln input
  std::vector<std::pair<const char*, const char*>> params;  // ComfyUI widget -> Kiln parameter
  std::vector<const char*> outputs;                         // Kiln output by ComfyUI slot
  std::vector<const char*> widgets;  // the UI format's widgets_values order (ComfyUI names)
  FileKind file = FileKind::None;    // the kind of file the first parameter names
};

// One entry per ComfyUI node type Kiln imports: a data table, as long as the list of types.
const std::vector<Mapping>& mappings() {
  static const std::vector<Mapping> table{
      {"CheckpointLoaderSimple",
       "LoadCheckpoint",
       {},
       {{"ckpt_name", "ckpt_name"}},
       {"MODEL", "CLIP", "VAE"},
       {"ckpt_name"},
       FileKind::Checkpoint},
      {"VAELoader",
       "LoadVAE",
       {},
       {{"vae_name", "vae_name"}},
       {"VAE"},
       {"vae_name"},
       FileKind::Vae},
      {"CLIPTextEncode",
       "TextEncode",
       {{"clip", "clip"}},
       {{"text", "text"}},
       {"CONDITIONING"},
       {"text"}},
      // The refiner's size ids come from the latent's size in Kiln, as for SDXL base.
      {"CLIPTextEncodeSDXLRefiner",
       "TextEncode",
       {{"clip", "clip"}},
       {{"text", "text"}, {"ascore", "aesthetic_score"}},
       {"CONDITIONING"},
       {"ascore", "width", "height", "text"}},
      {"KSampler",
       "Sampler",
       {{"model", "model"},
        {"positive", "positive"},
        {"negative", "negative"},
        {"latent_image", "latent_image"}},
       {{"seed", "seed"},
        {"steps", "steps"},
        {"cfg", "cfg"},
        {"sampler_name", "sampler_name"},
        {"scheduler", "scheduler"},
        {"denoise", "denoise"}},
       {"LATENT"},
       {"seed", "control_after_generate", "steps", "cfg", "sampler_name", "scheduler", "denoise"}},
      {"KSamplerAdvanced",
       "Sampler",
       {{"model", "model"},
        {"positive", "positive"},
        {"negative", "negative"},
        {"latent_image", "latent_image"}},
       {{"noise_seed", "seed"},
        {"steps", "steps"},
        {"cfg", "cfg"},
        {"sampler_name", "sampler_name"},
        {"scheduler", "scheduler"}},
       {"LATENT"},
       {"add_noise", "noise_seed", "control_after_generate", "steps", "cfg", "sampler_name",
        "scheduler", "start_at_step", "end_at_step", "return_with_leftover_noise"}},
      {"EmptyLatentImage",
       "EmptyLatent",
       {},
       {{"width", "width"}, {"height", "height"}, {"batch_size", "batch_size"}},
       {"LATENT"},
       {"width", "height", "batch_size"}},
      {"VAEDecode", "VAEDecode", {{"samples", "samples"}, {"vae", "vae"}}, {}, {"IMAGE"}, {}},
      {"VAEDecodeTiled",
       "VAEDecode",
       {{"samples", "samples"}, {"vae", "vae"}},
       {{"tile_size", "tile_size"}, {"overlap", "tile_overlap"}},
       {"IMAGE"},
       {"tile_size", "overlap", "temporal_size", "temporal_overlap"}},
      {"VAEEncode", "VAEEncode", {{"pixels", "pixels"}, {"vae", "vae"}}, {}, {"LATENT"}, {}},
      {"VAEEncodeForInpaint",
       "VAEEncode",
       {{"pixels", "pixels"}, {"vae", "vae"}, {"mask", "mask"}},
       {},
       {"LATENT"},
       {"grow_mask_by"}},
      {"LoadImage",
       "LoadImage",
       {},
       {{"image", "image"}},
       {"IMAGE", "MASK"},
       {"image", "upload"},
       FileKind::Image},
      {"LoadImageMask",
       "LoadMask",
       {},
       {{"image", "image"}},
       {"MASK"},
       {"image", "channel", "upload"},
       FileKind::Image},
      {"SaveImage",
       "SaveImage",
       {{"images", "images"}},
       {{"filename_prefix", "filename_prefix"}},
       {},
       {"filename_prefix"}},
      {"PreviewImage", "PreviewImage", {{"images", "images"}}, {}, {}, {}},
      {"LoraLoader",
       "LoadLoRA",
       {{"model", "model"}, {"clip", "clip"}},
       {{"lora_name", "lora_name"},
        {"strength_model", "strength_model"},
        {"strength_clip", "strength_clip"}},
       {"MODEL", "CLIP"},
       {"lora_name", "strength_model", "strength_clip"},
       FileKind::Lora},
      // FLUX.1 as ComfyUI loads it in parts: UNETLoader takes DualCLIPLoader's (or
      // CLIPLoader's) files (mergeSplitLoaders) and becomes one LoadCheckpoint.
      {"UNETLoader",
       "LoadCheckpoint",
       {},
       {{"unet_name", "ckpt_name"},
        {"clip_l", "text_encoder_name"},
        {"t5", "text_encoder_2_name"},
        {"vae", "vae_name"}},
       {"MODEL", "CLIP", "VAE"},
       {"unet_name", "weight_dtype"},
       FileKind::Diffusion},
      {"CLIPTextEncodeFlux",
       "TextEncodeFlux",
       {{"clip", "clip"}},
       {{"clip_l", "clip_l"}, {"t5xxl", "t5xxl"}, {"guidance", "guidance"}},
       {"CONDITIONING"},
       {"clip_l", "t5xxl", "guidance"}},
      {"FluxGuidance",
       "FluxGuidance",
       {{"conditioning", "conditioning"}},
       {{"guidance", "guidance"}},
       {"CONDITIONING"},
       {"guidance"}},
      {"ModelSamplingFlux",
       "ModelSamplingFlux",
       {{"model", "model"}},
       {{"max_shift", "max_shift"},
        {"base_shift", "base_shift"},
        {"width", "width"},
        {"height", "height"}},
       {"MODEL"},
       {"max_shift", "base_shift", "width", "height"}},
      {"EmptySD3LatentImage",
       "EmptyLatent",
       {},
       {{"width", "width"}, {"height", "height"}, {"batch_size", "batch_size"}},
       {"LATENT"},
       {"width", "height", "batch_size"}},
      // SamplerCustomAdvanced with its RandomNoise, guider, KSamplerSelect and
      // BasicScheduler folded in (mergeCustomSamplers): one Sampler.
      {"SamplerCustomAdvanced",
       "Sampler",
       {{"model", "model"},
        {"positive", "positive"},
        {"negative", "negative"},
        {"latent_image", "latent_image"}},
       {{"seed", "seed"},
        {"steps", "steps"},
        {"cfg", "cfg"},
        {"sampler_name", "sampler_name"},
        {"scheduler", "scheduler"},
        {"denoise", "denoise"}},
       {"LATENT", "LATENT"},  // output, denoised_output
       {}},
      {"LoraLoaderModelOnly",
       "LoadLoRAModelOnly",
       {{"model", "model"}},
       {{"lora_name", "lora_name"}, {"strength_model", "strength_model"}},
       {"MODEL"},
       {"lora_name", "strength_model"},
       FileKind::Lora},
  };
  return table;
}

const Mapping* mappingFor(const std::string& type) {
  for (const Mapping& m : mappings())
    if (type == m.comfy) return &m;
  return nullptr;
}

// The widgets_values order of the nodes that are folded into others before mapping.
std::vector<const char*> foldedWidgets(const std::string& type) {
  if (type == "DualCLIPLoader") return {"clip_name1", "clip_name2", "type", "device"};
  if (type == "CLIPLoader") return {"clip_name", "type", "device"};
  if (type == "RandomNoise") return {"noise_seed", "control_after_generate"};
  if (type == "KSamplerSelect") return {"sampler_name"};
  if (type == "BasicScheduler") return {"scheduler", "steps", "denoise"};
  if (type == "CFGGuider") return {"cfg"};
  return {};
}

// Both formats read into this: per node, its type, title, position, widget values by
// ComfyUI name and links by input name.
struct ComfyLink {
  std::string from;
  int64_t slot = 0;
};
struct ComfyNode {
  std::string id, type, title;
  double x = 0, y = 0;
  std::map<std::string, json> values;
  std::map<std::string, ComfyLink> links;
  bool skipped = false;  // muted or bypassed in the editor
};

[[noreturn]] void bad(const std::string& what) {
  throw Error(ErrorKind::InvalidWorkflow, "not a ComfyUI workflow Kiln can import: " + what);
}

std::string idOf(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  bad("a node id is neither a number nor a string");
}

bool isApiFormat(const json& doc) {
  if (!doc.is_object() || doc.empty()) return false;
  for (const auto& [key, node] : doc.items())
    if (!node.is_object() || !node.contains("class_type")) return false;
  return true;
}

bool isUiFormat(const json& doc) {
  return doc.is_object() && doc.contains("nodes") && doc["nodes"].is_array() &&
         doc.contains("links") && doc["links"].is_array();
}

std::vector<ComfyNode> readApi(const json& doc) {
  std::vector<ComfyNode> nodes;
  for (const auto& [key, n] : doc.items()) {
    ComfyNode node;
    node.id = key;
    if (!n["class_type"].is_string()) bad("node " + key + " has no class_type");
    node.type = n["class_type"].get<std::string>();
    if (const auto meta = n.find("_meta"); meta != n.end() && meta->is_object() &&
                                           meta->contains("title") && (*meta)["title"].is_string())
      node.title = (*meta)["title"].get<std::string>();
    if (const auto inputs = n.find("inputs"); inputs != n.end() && inputs->is_object()) {
      for (const auto& [name, v] : inputs->items()) {
        if (v.is_array() && v.size() == 2 && (v[0].is_string() || v[0].is_number_integer()) &&
            v[1].is_number_integer())
          node.links[name] = {idOf(v[0]), v[1].get<int64_t>()};
        else
          node.values[name] = v;
      }
    }
    nodes.push_back(std::move(node));
  }
  // ComfyUI numbers its nodes; keep that order.
  std::stable_sort(nodes.begin(), nodes.end(), [](const ComfyNode& a, const ComfyNode& b) {
    const auto digits = [](const std::string& s) {
      return !s.empty() &&
             std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
    };
    const bool an = digits(a.id), bn = digits(b.id);
    if (an && bn && a.id.size() != b.id.size()) return a.id.size() < b.id.size();
    return a.id < b.id;
  });
  return nodes;
}

std::vector<ComfyNode> readUi(const json& doc, std::vector<std::string>& unmapped) {
  // Link id -> (from node, from slot).
  std::map<int64_t, ComfyLink> links;
  for (const json& l : doc["links"]) {
    if (l.is_array() && l.size() >= 5 && l[0].is_number_integer() && l[2].is_number_integer())
      links[l[0].get<int64_t>()] = {idOf(l[1]), l[2].get<int64_t>()};
    else if (l.is_object() && l.contains("id") && l.contains("origin_id") &&
             l.contains("origin_slot"))
      links[l["id"].get<int64_t>()] = {idOf(l["origin_id"]), l["origin_slot"].get<int64_t>()};
  }
  std::vector<ComfyNode> nodes;
  for (const json& n : doc["nodes"]) {
    if (!n.is_object() || !n.contains("id") || !n.contains("type") || !n["type"].is_string())
      bad("a node has no id or type");
    ComfyNode node;
    node.id = idOf(n["id"]);
    node.type = n["type"].get<std::string>();
    if (n.contains("title") && n["title"].is_string()) node.title = n["title"].get<std::string>();
    if (const auto pos = n.find("pos"); pos != n.end()) {
      if (pos->is_array() && pos->size() >= 2 && (*pos)[0].is_number() && (*pos)[1].is_number()) {
        node.x = (*pos)[0].get<double>();
        node.y = (*pos)[1].get<double>();
      } else if (pos->is_object() && pos->contains("0") && pos->contains("1")) {
        node.x = (*pos)["0"].get<double>();
        node.y = (*pos)["1"].get<double>();
      }
    }
    const int64_t mode =
        n.contains("mode") && n["mode"].is_number_integer() ? n["mode"].get<int64_t>() : 0;
    if (mode == 2 || mode == 4) {
      node.skipped = true;
      unmapped.push_back("node " + node.id + " (" + node.type + ") is " +
                         (mode == 2 ? "muted" : "bypassed") + " in ComfyUI and was left out");
    }
    if (const auto inputs = n.find("inputs"); inputs != n.end() && inputs->is_array())
      for (const json& in : *inputs)
        if (in.is_object() && in.contains("name") && in["name"].is_string() &&
            in.contains("link") && in["link"].is_number_integer()) {
          const auto l = links.find(in["link"].get<int64_t>());
          if (l != links.end()) node.links[in["name"].get<std::string>()] = l->second;
        }
    if (const auto w = n.find("widgets_values"); w != n.end() && w->is_array()) {
      const Mapping* m = mappingFor(node.type);
      std::vector<const char*> order = m ? m->widgets : foldedWidgets(node.type);
      // The seed's "control after generate" widget is only saved by some versions.
      if ((node.type == "KSampler" || node.type == "KSamplerAdvanced" ||
           node.type == "RandomNoise") &&
          w->size() + 1 == order.size())
        order.erase(
            std::find(order.begin(), order.end(), std::string_view("control_after_generate")));
      for (std::size_t i = 0; i < w->size() && i < order.size(); ++i)
        node.values[order[i]] = (*w)[i];
      if (node.type == "PrimitiveNode" && !w->empty()) node.values["value"] = (*w)[0];
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

const std::vector<std::string>& subfolders(FileKind kind) {
  // Flat folders, ComfyUI, A1111 and InvokeAI (models/<base>/<type>) trees.
  static const std::vector<std::string> checkpoints{"",
                                                    "checkpoints",
                                                    "models/checkpoints",
                                                    "Stable-diffusion",
                                                    "models/Stable-diffusion",
                                                    "models/sd-1/main",
                                                    "models/sd-2/main",
                                                    "models/sdxl/main",
                                                    "models/sdxl-refiner/main"};
  static const std::vector<std::string> loras{"",
                                              "loras",
                                              "models/loras",
                                              "Lora",
                                              "models/Lora",
                                              "LyCORIS",
                                              "models/LyCORIS",
                                              "models/sd-1/lora",
                                              "models/sd-2/lora",
                                              "models/sdxl/lora"};
  static const std::vector<std::string> vaes{"",
                                             "vae",
                                             "models/vae",
                                             "VAE",
                                             "models/VAE",
                                             "models/sd-1/vae",
                                             "models/sd-2/vae",
                                             "models/sdxl/vae",
                                             "models/sdxl-refiner/vae"};
  static const std::vector<std::string> images{"", "input"};
  static const std::vector<std::string> diffusion{"",
                                                  "diffusion_models",
                                                  "models/diffusion_models",
                                                  "unet",
                                                  "models/unet",
                                                  "checkpoints",
                                                  "models/checkpoints"};
  static const std::vector<std::string> text_encoders{"", "text_encoders", "models/text_encoders",
                                                      "clip", "models/clip"};
  switch (kind) {
    case FileKind::Diffusion:
      return diffusion;
    case FileKind::TextEncoder:
      return text_encoders;
    case FileKind::Lora:
      return loras;
    case FileKind::Vae:
      return vaes;
    case FileKind::Image:
      return images;
    default:
      return checkpoints;
  }
}

std::string resolveFile(std::string name, FileKind kind, const ModelFolders& folders,
                        const std::string& where, std::vector<std::string>& unmapped) {
  std::replace(name.begin(), name.end(), '\\', '/');
  std::error_code ec;
  if (fs::path(name).is_absolute()) {
    if (!fs::exists(name, ec)) unmapped.push_back(where + ": '" + name + "' does not exist");
    return name;
  }
  for (const std::string& root : folders.roots)
    for (const std::string& sub : subfolders(kind)) {
      const fs::path candidate = fs::path(root) / sub / name;
      if (fs::is_regular_file(candidate, ec) ||
          (kind == FileKind::Checkpoint && fs::is_directory(candidate, ec)))
        return candidate.lexically_normal().string();
    }
  std::string roots;
  for (const std::string& r : folders.roots) roots += (roots.empty() ? "" : ", ") + r;
  unmapped.push_back(where + ": '" + name + "' was not found in the model folders (" +
                     (roots.empty() ? std::string("none configured") : roots) + ")");
  return name;
}

std::optional<ParamValue> toParam(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  return std::nullopt;
}

bool known(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

double numberOr(const std::map<std::string, json>& values, const char* key, double fallback) {
  const auto it = values.find(key);
  return it != values.end() && it->second.is_number() ? it->second.get<double>() : fallback;
}

std::string nodeName(const ComfyNode& n) {
  return "node " + n.id + " (" + n.type + ")";
}

std::string lowerFileName(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

// Removes the nodes whose ids are in `gone`.
void removeNodes(std::vector<ComfyNode>& nodes, const std::set<std::string>& gone) {
  nodes.erase(std::remove_if(nodes.begin(), nodes.end(),
                             [&](const ComfyNode& n) { return gone.count(n.id) != 0; }),
              nodes.end());
}

// ComfyUI loads FLUX.1 (and Wan) in parts: UNETLoader's transformer, DualCLIPLoader's or
// CLIPLoader's text encoders, VAELoader's VAE. Kiln loads one model with its parts: the
// UNETLoader takes the text encoders' (and the VAE's) files, and whatever read the text
// encoder loader's CLIP reads the UNETLoader's (its LoadCheckpoint's second output).
void mergeSplitLoaders(std::vector<ComfyNode>& nodes, const ModelFolders& folders,
                       std::vector<std::string>& unmapped) {
  std::vector<ComfyNode*> unets, clips, vaes;
  for (ComfyNode& n : nodes) {
    if (n.skipped) continue;
    if (n.type == "UNETLoader") unets.push_back(&n);
    if (n.type == "DualCLIPLoader" || n.type == "CLIPLoader") clips.push_back(&n);
    if (n.type == "VAELoader") vaes.push_back(&n);
  }
  if (clips.empty()) return;
  std::set<std::string> gone;
  for (ComfyNode* c : clips) gone.insert(c->id);
  if (unets.size() != 1) {
    for (ComfyNode* c : clips)
      unmapped.push_back(nodeName(*c) + ": Kiln loads text encoders with their model, and " +
                         (unets.empty() ? std::string("this workflow has no UNETLoader")
                                        : std::string("with several UNETLoader nodes it "
                                                      "cannot tell whose these are")) +
                         "; it was left out");
    removeNodes(nodes, gone);
    return;
  }
  ComfyNode& u = *unets.front();
  for (std::size_t i = 1; i < clips.size(); ++i)
    unmapped.push_back(nodeName(*clips[i]) + ": only one text encoder loader goes with " +
                       nodeName(u) + "; it was left out");
  const ComfyNode& c = *clips.front();
  for (const char* key : {"clip_name1", "clip_name2", "clip_name"}) {
    const auto it = c.values.find(key);
    if (it == c.values.end() || !it->second.is_string()) continue;
    const std::string file = resolveFile(it->second.get<std::string>(), FileKind::TextEncoder,
                                         folders, nodeName(c), unmapped);
    const std::string name = lowerFileName(file);
    // T5 (FLUX's second encoder) by its name; CLIP-L, or Wan's UMT5, as the first.
    const bool t5 = name.find("t5") != std::string::npos && name.find("umt5") == std::string::npos;
    u.values[t5 ? "t5" : "clip_l"] = file;
  }
  if (const auto t = c.values.find("type"); t != c.values.end() && t->second.is_string() &&
                                            t->second.get<std::string>() != "flux" &&
                                            t->second.get<std::string>() != "wan")
    unmapped.push_back(nodeName(c) + ": type '" + t->second.get<std::string>() +
                       "' is not one Kiln loads apart (flux, wan); the files go to the model as "
                       "its text encoders");
  if (vaes.size() == 1)
    if (const auto v = vaes.front()->values.find("vae_name");
        v != vaes.front()->values.end() && v->second.is_string())
      u.values["vae"] = resolveFile(v->second.get<std::string>(), FileKind::Vae, folders,
                                    nodeName(*vaes.front()), unmapped);
  if (const auto d = u.values.find("weight_dtype");
      d != u.values.end() && d->second.is_string() && d->second.get<std::string>() != "default")
    unmapped.push_back(nodeName(u) + ": weight_dtype '" + d->second.get<std::string>() +
                       "' is not applied; Kiln computes in the model's precision (fp8 files are "
                       "upcast as they load)");
  for (ComfyNode& n : nodes)
    for (auto& entry : n.links)
      if (entry.second.from == c.id) entry.second = {u.id, 1};
  removeNodes(nodes, gone);
}

// SamplerCustomAdvanced with its RandomNoise, guider (BasicGuider: CFG 1, the one
// conditioning as both prompts; CFGGuider), KSamplerSelect and BasicScheduler folds into
// one node that maps as a Sampler.
void mergeCustomSamplers(std::vector<ComfyNode>& nodes, std::vector<std::string>& unmapped) {
  std::map<std::string, ComfyNode*> by_id;
  for (ComfyNode& n : nodes) by_id[n.id] = &n;
  const auto follow = [&](ComfyLink link) -> ComfyNode* {
    for (int hops = 0; hops < 64; ++hops) {
      const auto it = by_id.find(link.from);
      if (it == by_id.end()) return nullptr;
      if (it->second->type != "Reroute" || it->second->links.empty()) return it->second;
      link = it->second->links.begin()->second;
    }
    return nullptr;
  };
  std::set<std::string> folded;
  for (ComfyNode& n : nodes) {
    if (n.type != "SamplerCustomAdvanced" || n.skipped) continue;
    const auto from = [&](const char* input,
                          std::initializer_list<const char*> types) -> ComfyNode* {
      const auto l = n.links.find(input);
      ComfyNode* src = l == n.links.end() ? nullptr : follow(l->second);
      if (src &&
          std::any_of(types.begin(), types.end(), [&](const char* t) { return src->type == t; }))
        return src;
      unmapped.push_back(nodeName(n) + ": its " + input + " comes from " +
                         (src ? nodeName(*src) : std::string("no node")) +
                         ", which Kiln cannot fold into a sampler; it was left out");
      return nullptr;
    };
    ComfyNode* noise = from("noise", {"RandomNoise"});
    ComfyNode* guider = noise ? from("guider", {"BasicGuider", "CFGGuider"}) : nullptr;
    ComfyNode* sampler = guider ? from("sampler", {"KSamplerSelect"}) : nullptr;
    ComfyNode* sigmas = sampler ? from("sigmas", {"BasicScheduler"}) : nullptr;
    if (!sigmas) {
      n.skipped = true;
      continue;
    }
    const auto copy = [&](const ComfyNode& src, const char* from_key, const char* to_key) {
      if (const auto it = src.values.find(from_key); it != src.values.end())
        n.values[to_key] = it->second;
    };
    copy(*noise, "noise_seed", "seed");
    copy(*sampler, "sampler_name", "sampler_name");
    copy(*sigmas, "scheduler", "scheduler");
    copy(*sigmas, "steps", "steps");
    copy(*sigmas, "denoise", "denoise");
    const auto link = [&](const ComfyNode& src, const char* from_input, const char* to_input) {
      if (const auto it = src.links.find(from_input); it != src.links.end())
        n.links[to_input] = it->second;
    };
    link(*guider, "model", "model");
    if (guider->type == "BasicGuider") {
      link(*guider, "conditioning", "positive");
      link(*guider, "conditioning", "negative");  // unused at CFG 1
      n.values["cfg"] = 1.0;
    } else {
      link(*guider, "positive", "positive");
      link(*guider, "negative", "negative");
      copy(*guider, "cfg", "cfg");
    }
    for (const ComfyNode* helper : {noise, guider, sampler, sigmas}) folded.insert(helper->id);
  }
  removeNodes(nodes, folded);
}

ComfyImport convert(std::vector<ComfyNode> nodes, const ModelFolders& folders, std::string format,
                    std::vector<std::string> unmapped) {
  mergeSplitLoaders(nodes, folders, unmapped);
  mergeCustomSamplers(nodes, unmapped);
  ComfyImport result;
  result.format = std::move(format);
  std::map<std::string, const ComfyNode*> by_id;
  for (const ComfyNode& n : nodes)
    if (!by_id.emplace(n.id, &n).second)
      bad("the node id " + n.id + " is used by more than one node");
  // Reroutes pass a link through: follow them to the real source.
  const auto source = [&](ComfyLink link) {
    for (int hops = 0; hops < 64; ++hops) {
      const auto it = by_id.find(link.from);
      if (it == by_id.end() || it->second->type != "Reroute" || it->second->links.empty()) break;
      link = it->second->links.begin()->second;
    }
    return link;
  };
  std::map<std::string, bool> kept;
  for (const ComfyNode& n : nodes) {
    if (n.skipped || n.type == "Reroute" || n.type == "Note" || n.type == "MarkdownNote" ||
        n.type == "PrimitiveNode")
      continue;
    const Mapping* m = mappingFor(n.type);
    const std::string where = "node " + n.id + " (" + n.type + ")";
    if (!m) {
      unmapped.push_back(where + ": Kiln has no node of this type; it was left out");
      continue;
    }
    kept[n.id] = true;
    WorkflowNode node;
    node.id = n.id;
    node.type = m->kiln;
    node.x = n.x;
    node.y = n.y;
    if (!n.title.empty() && n.title != n.type) node.title = n.title;
    std::map<std::string, json> values = n.values;
    // Widgets fed by a link (a primitive node's value, or a node Kiln lacks).
    for (const auto& entry : n.links) {
      const std::string& input = entry.first;
      const ComfyLink& link = entry.second;
      const bool is_widget = std::any_of(m->params.begin(), m->params.end(),
                                         [&](const auto& p) { return input == p.first; });
      if (!is_widget) continue;
      const ComfyLink from = source(link);
      const auto it = by_id.find(from.from);
      if (it != by_id.end() && it->second->type == "PrimitiveNode" &&
          it->second->values.count("value"))
        values[input] = it->second->values.at("value");
      else
        unmapped.push_back(where + ": '" + input + "' comes from node " + from.from +
                           (it != by_id.end() ? " (" + it->second->type + ")" : "") +
                           ", which Kiln cannot evaluate");
    }
    for (const auto& [comfy, kiln] : m->params) {
      const auto it = values.find(comfy);
      if (it == values.end()) continue;
      std::optional<ParamValue> v = toParam(it->second);
      if (!v && it->second.is_number_unsigned()) {
        // ComfyUI seeds go up to 2^64 - 1; Kiln's to 2^63 - 1.
        v = static_cast<int64_t>(it->second.get<uint64_t>() & static_cast<uint64_t>(INT64_MAX));
        unmapped.push_back(where + ": " + comfy + " " + std::to_string(it->second.get<uint64_t>()) +
                           " is beyond Kiln's seeds; using " +
                           std::to_string(std::get<int64_t>(*v)));
      }
      if (!v) {
        unmapped.push_back(where + ": " + comfy + " has a value Kiln cannot read (" +
                           it->second.dump() + ")");
        continue;
      }
      if (m->file != FileKind::None && comfy == m->params.front().first)
        if (const auto* name = std::get_if<std::string>(&*v))
          v = resolveFile(*name, m->file, folders, where, unmapped);
      if (std::string(kiln) == "sampler_name")
        if (const auto* s = std::get_if<std::string>(&*v);
            s && !known(sampling::samplerNames(), *s))
          unmapped.push_back(where + ": sampler '" + *s + "' is not one of Kiln's samplers (" +
                             list(sampling::samplerNames()) + "); choose one before running");
      if (std::string(kiln) == "scheduler")
        if (const auto* s = std::get_if<std::string>(&*v);
            s && !known(sampling::scheduleNames(), *s))
          unmapped.push_back(where + ": scheduler '" + *s + "' is not one of Kiln's schedules (" +
                             list(sampling::scheduleNames()) + "); choose one before running");
      node.params[kiln] = std::move(*v);
    }
    // What the table alone cannot say.
    if (n.type == "VAEDecodeTiled") node.params["tiling"] = std::string("always");
    if (n.type == "KSamplerAdvanced") {
      const auto add = values.find("add_noise");
      const double steps = numberOr(values, "steps", 20);
      const double start = numberOr(values, "start_at_step", 0);
      if (start > 0 && start < steps) {
        // The second half of a base + refiner split: refine the earlier result over the
        // same share of the schedule.
        node.params["denoise"] = (steps - start) / steps;
        unmapped.push_back(
            where + ": start_at_step " + formatNumber(start) + " of " + formatNumber(steps) +
            " becomes denoise " + formatNumber((steps - start) / steps) +
            ": the sampler re-noises the earlier sampler's finished result rather than "
            "continuing from its leftover noise");
      } else if (start > 0) {
        unmapped.push_back(where + ": start_at_step " + formatNumber(start) +
                           " is past the last step; the sampler "
                           "runs the whole schedule");
      }
      if (numberOr(values, "end_at_step", 10000) < steps)
        unmapped.push_back(
            where +
            ": end_at_step (stopping with leftover noise) is not supported; the sampler "
            "finishes the schedule");
      else if (start == 0 && add != values.end() && add->second.is_string() &&
               add->second.get<std::string>() != "enable")
        unmapped.push_back(where +
                           ": add_noise 'disable' is not supported; the sampler starts from noise");
    }
    if (n.type == "VAEEncodeForInpaint" && numberOr(values, "grow_mask_by", 0) > 0)
      unmapped.push_back(
          where + ": grow_mask_by is not applied (Kiln's VAEEncode feathers the mask instead)");
    if (n.type == "LoadImageMask") {
      const auto c = values.find("channel");
      if (c != values.end() && c->second.is_string() && c->second.get<std::string>() != "alpha")
        unmapped.push_back(
            where + ": channel '" + c->second.get<std::string>() +
            "' is not used; Kiln's LoadMask reads the picture's brightness times its alpha");
    }
    result.workflow.nodes.push_back(std::move(node));
  }
  for (const ComfyNode& n : nodes) {
    if (!kept.count(n.id)) continue;
    const Mapping* m = mappingFor(n.type);
    for (const auto& entry : n.links) {
      const std::string& input = entry.first;
      const ComfyLink& link = entry.second;
      const auto in = std::find_if(m->links.begin(), m->links.end(),
                                   [&](const auto& l) { return input == l.first; });
      if (in == m->links.end()) continue;  // a widget fed by a link, handled above
      const ComfyLink from = source(link);
      const auto src = by_id.find(from.from);
      if (src == by_id.end() || !kept.count(from.from))
        continue;  // its source was left out and is listed
      const Mapping* sm = mappingFor(src->second->type);
      if (from.slot < 0 || from.slot >= static_cast<int64_t>(sm->outputs.size())) {
        unmapped.push_back("node " + n.id + " (" + n.type + "): input '" + input +
                           "' reads output " + std::to_string(from.slot) + " of node " + from.from +
                           ", which Kiln's " + sm->kiln + " does not have");
        continue;
      }
      result.workflow.links.push_back(
          {from.from, sm->outputs[static_cast<std::size_t>(from.slot)], n.id, in->second});
    }
  }
  // The API format has no positions: lay the nodes out in a row.
  if (result.format == "api")
    for (std::size_t i = 0; i < result.workflow.nodes.size(); ++i)
      result.workflow.nodes[i].x = 300.0 * static_cast<double>(i);
  result.unmapped = std::move(unmapped);
  return result;
}

// ComfyUI's groups are rectangles; a node belongs to one when its corner lies inside.
void readGroups(const json& doc, Workflow& w) {
  const auto groups = doc.find("groups");
  if (groups == doc.end() || !groups->is_array()) return;
  for (const json& g : *groups) {
    const auto box = g.is_object() ? g.find("bounding") : g.end();
    if (box == g.end() || !box->is_array() || box->size() != 4 ||
        !std::all_of(box->begin(), box->end(), [](const json& v) { return v.is_number(); }))
      continue;
    const double x = (*box)[0].get<double>(), y = (*box)[1].get<double>();
    const double right = x + (*box)[2].get<double>(), bottom = y + (*box)[3].get<double>();
    WorkflowGroup group;
    if (g.contains("title") && g["title"].is_string()) group.title = g["title"].get<std::string>();
    if (g.contains("color") && g["color"].is_string()) group.color = g["color"].get<std::string>();
    for (const WorkflowNode& n : w.nodes)
      if (n.x >= x && n.x <= right && n.y >= y && n.y <= bottom) group.nodes.push_back(n.id);
    if (!group.nodes.empty()) w.groups.push_back(std::move(group));
  }
}

json parseJson(std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    bad(std::string("the JSON does not parse (") + e.what() + ")");
  }
}

}  // namespace

bool looksLikeComfyWorkflow(std::string_view text) {
  try {
    const json doc = json::parse(text.begin(), text.end());
    return isApiFormat(doc) || (isUiFormat(doc) && !doc.contains("kiln_workflow"));
  } catch (const json::exception&) {
    return false;
  }
}

ComfyImport importComfyWorkflow(std::string_view text, const ModelFolders& folders) {
  const json doc = parseJson(text);
  try {
    if (isApiFormat(doc)) return convert(readApi(doc), folders, "api", {});
    if (isUiFormat(doc)) {
      std::vector<std::string> unmapped;
      std::vector<ComfyNode> nodes = readUi(doc, unmapped);
      ComfyImport result = convert(std::move(nodes), folders, "ui", std::move(unmapped));
      readGroups(doc, result.workflow);
      return result;
    }
  } catch (const json::exception& e) {  // a field of an unexpected type somewhere
    bad(std::string("a field has an unexpected type (") + e.what() + ")");
  }
  bad("it is neither ComfyUI's API format (nodes with class_type) nor its UI format (nodes and "
      "links)");
}

ModelFolders defaultModelFolders() {
  ModelFolders f;
  if (const char* dirs = std::getenv("KILN_MODEL_DIRS"); dirs != nullptr && *dirs != '\0') {
    std::string all = dirs;
    for (std::size_t start = 0; start <= all.size();) {
      const std::size_t end = std::min(all.find(':', start), all.size());
      if (end > start) f.roots.push_back(all.substr(start, end - start));
      start = end + 1;
    }
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    std::error_code ec;
    for (const char* sub : {"ComfyUI", "stable-diffusion-webui", ".local/share/kiln/models"})
      if (fs::is_directory(fs::path(home) / sub, ec))
        f.roots.push_back((fs::path(home) / sub).string());
  }
  return f;
}

std::vector<std::string> embeddingFolders(const ModelFolders& folders) {
  std::vector<std::string> out;
  for (const auto& root : folders.roots)
    for (const char* sub : {"embeddings", "models/embeddings"}) {
      std::error_code ec;
      if (fs::is_directory(fs::path(root) / sub, ec))
        out.push_back((fs::path(root) / sub).string());
    }
  return out;
}

}  // namespace kiln
