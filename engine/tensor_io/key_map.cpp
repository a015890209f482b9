#include "tensor_io/key_map.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "kiln/error.h"

namespace kiln::tensor_io {
namespace {

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::size_t from) {
  std::string s;
  for (std::size_t i = from; i < parts.size(); ++i) s += (s.empty() ? "" : ".") + parts[i];
  return s;
}

// Block indices in checkpoint keys are small numbers; six digits is far beyond any real
// model and keeps the arithmetic on them far from overflow.
bool isIndex(const std::string& s) {
  return !s.empty() && s.size() <= 6 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The block index `s` of tensor `name`; a name with no index where the layout has one
// is a damaged file's (a typed error, not std::stoll's exception or overflow).
int64_t blockIndex(const std::string& s, const std::string& name) {
  if (!isIndex(s))
    throw Error(
        ErrorKind::CorruptFile,
        "tensor '" + name + "' has '" + s +
            "' where its layout has a block index; the file is damaged or not a checkpoint");
  return std::stoll(s);
}

// Replaces a leading component path of `rest` using a table of (from, to) pairs.
std::string renameLeading(const std::string& rest,
                          std::initializer_list<std::pair<const char*, const char*>> table) {
  for (const auto& [from, to] : table) {
    const std::string f = std::string(from) + ".";
    if (rest.compare(0, f.size(), f) == 0) return std::string(to) + "." + rest.substr(f.size());
  }
  return rest;
}

constexpr std::initializer_list<std::pair<const char*, const char*>> kUNetResnet = {
    {"norm1", "in_layers.0"},  {"conv1", "in_layers.2"},  {"time_emb_proj", "emb_layers.1"},
    {"norm2", "out_layers.0"}, {"conv2", "out_layers.3"}, {"conv_shortcut", "skip_connection"}};

int64_t countIndexed(const SafetensorsFile& file, const std::string& prefix) {
  int64_t n = 0;
  for (const auto& t : file.tensors()) {
    if (t.name.compare(0, prefix.size(), prefix) != 0) continue;
    const auto parts = split(t.name.substr(prefix.size()));
    if (!parts.empty() && isIndex(parts[0]))
      n = std::max<int64_t>(n, blockIndex(parts[0], t.name) + 1);
  }
  return n;
}

}  // namespace

IndexEntry identityEntry(const std::shared_ptr<SafetensorsFile>& file, const TensorInfo& info) {
  IndexEntry e;
  e.dtype = info.dtype;
  e.shape = info.shape;
  e.transform = Transform::Identity;
  e.sources.push_back({file, &info});
  return e;
}

void mapDiffusersUNet(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                      TensorIndex& out) {
  const int64_t layers = countIndexed(*file, "down_blocks.0.resnets.");
  if (layers == 0)
    throw Error(ErrorKind::UnsupportedModel,
                "'" + file->path() + "' is not a diffusers UNet (no down_blocks.0.resnets)");
  const int64_t stride = layers + 1;
  for (const auto& info : file->tensors()) {
    const auto p = split(info.name);
    std::string name;
    if (p[0] == "down_blocks" && p.size() > 4 && isIndex(p[1])) {
      const int64_t i = blockIndex(p[1], info.name);
      const std::string rest = join(p, 4);
      if (p[2] == "resnets")
        name = "input_blocks." + std::to_string(1 + i * stride + blockIndex(p[3], info.name)) +
               ".0." + renameLeading(rest, kUNetResnet);
      else if (p[2] == "attentions")
        name = "input_blocks." + std::to_string(1 + i * stride + blockIndex(p[3], info.name)) +
               ".1." + rest;
      else if (p[2] == "downsamplers")
        name = "input_blocks." + std::to_string((i + 1) * stride) + ".0.op." + join(p, 5);
    } else if (p[0] == "up_blocks" && p.size() > 4 && isIndex(p[1])) {
      const int64_t i = blockIndex(p[1], info.name);
      const std::string rest = join(p, 4);
      if (p[2] == "resnets")
        name = "output_blocks." + std::to_string(i * stride + blockIndex(p[3], info.name)) + ".0." +
               renameLeading(rest, kUNetResnet);
      else if (p[2] == "attentions")
        name = "output_blocks." + std::to_string(i * stride + blockIndex(p[3], info.name)) + ".1." +
               rest;
      else if (p[2] == "upsamplers") {
        const bool has_attention =
            countIndexed(*file, "up_blocks." + std::to_string(i) + ".attentions.") > 0;
        name = "output_blocks." + std::to_string(i * stride + layers) +
               (has_attention ? ".2." : ".1.") + join(p, 4);
      }
    } else if (p[0] == "mid_block" && p.size() > 3) {
      const std::string rest = join(p, 3);
      if (p[1] == "resnets")
        name = std::string("middle_block.") + (p[2] == "0" ? "0." : "2.") +
               renameLeading(rest, kUNetResnet);
      else if (p[1] == "attentions")
        name = "middle_block.1." + rest;
    } else {
      name = renameLeading(info.name, {{"time_embedding.linear_1", "time_embed.0"},
                                       {"time_embedding.linear_2", "time_embed.2"},
                                       {"add_embedding.linear_1", "label_emb.0.0"},
                                       {"add_embedding.linear_2", "label_emb.0.2"},
                                       {"conv_in", "input_blocks.0.0"},
                                       {"conv_norm_out", "out.0"},
                                       {"conv_out", "out.2"}});
    }
    // Names no rule covers keep their diffusers spelling, so the loader lists them.
    out.add(prefix + (name.empty() ? info.name : name), identityEntry(file, info));
  }
}

void mapDiffusersVae(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                     TensorIndex& out) {
  const int64_t levels = countIndexed(*file, "decoder.up_blocks.");
  for (const auto& info : file->tensors()) {
    const auto p = split(info.name);
    std::string name;
    IndexEntry entry = identityEntry(file, info);
    const std::string coder = p[0];  // encoder / decoder
    if ((p.size() > 5) && (p[1] == "down_blocks" || p[1] == "up_blocks")) {
      const int64_t i = blockIndex(p[2], info.name);
      const int64_t level = p[1] == "up_blocks" ? levels - 1 - i : i;
      const std::string lp =
          coder + (p[1] == "up_blocks" ? ".up." : ".down.") + std::to_string(level) + ".";
      if (p[3] == "resnets")
        name = lp + "block." + p[4] + "." +
               renameLeading(join(p, 5), {{"conv_shortcut", "nin_shortcut"}});
      else if (p[3] == "downsamplers")
        name = lp + "downsample." + join(p, 5);
      else if (p[3] == "upsamplers")
        name = lp + "upsample." + join(p, 5);
    } else if (p.size() > 4 && p[1] == "mid_block") {
      const std::string rest = join(p, 4);
      if (p[2] == "resnets") {
        name = coder + ".mid.block_" + std::to_string(blockIndex(p[3], info.name) + 1) + "." +
               renameLeading(rest, {{"conv_shortcut", "nin_shortcut"}});
      } else if (p[2] == "attentions") {
        name = coder + ".mid.attn_1." +
               renameLeading(rest, {{"group_norm", "norm"},
                                    {"to_q", "q"},
                                    {"to_k", "k"},
                                    {"to_v", "v"},
                                    {"to_out.0", "proj_out"},
                                    {"query", "q"},
                                    {"key", "k"},
                                    {"value", "v"},
                                    {"proj_attn", "proj_out"}});
        // Linear [C, C] in diffusers, 1x1 convolution [C, C, 1, 1] in the original.
        if (info.shape.size() == 2) {
          entry.transform = Transform::Reshape;
          entry.shape = {info.shape[0], info.shape[1], 1, 1};
        }
      }
    } else if (p.size() > 2) {
      const std::string from = coder + ".conv_norm_out.";
      if (info.name.compare(0, from.size(), from) == 0)
        name = coder + ".norm_out." + info.name.substr(from.size());
    }
    out.add(prefix + (name.empty() ? info.name : name), std::move(entry));
  }
}

void mapHfClipText(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                   TensorIndex& out) {
  for (const auto& info : file->tensors()) out.add(prefix + info.name, identityEntry(file, info));
}

void mapHfClipToOpenClip(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                         TensorIndex& out) {
  const std::string layers = "text_model.encoder.layers.";
  for (const auto& info : file->tensors()) {
    const auto p = split(info.name);
    IndexEntry entry = identityEntry(file, info);
    std::string name;
    if (info.name.compare(0, layers.size(), layers) == 0 && p.size() > 5) {
      const std::string lp = "transformer.resblocks." + p[3] + ".";
      const std::string rest = join(p, 4);
      if (p[4] == "self_attn" && (p[5] == "k_proj" || p[5] == "v_proj")) continue;  // fused below
      if (p[4] == "self_attn" && p[5] == "q_proj") {
        const std::string kind = p.back();  // weight / bias
        const std::string base = layers + p[3] + ".self_attn.";
        entry.transform = Transform::Concat0;
        entry.sources.clear();
        int64_t rows = 0;
        for (const char* proj : {"q_proj.", "k_proj.", "v_proj."}) {
          const TensorInfo* part = file->find(base + proj + kind);
          if (!part)
            throw Error(ErrorKind::ShapeMismatch,
                        "'" + file->path() + "' has no tensor '" + base + proj + kind + "'");
          entry.sources.push_back({file, part});
          rows += part->shape.at(0);
        }
        entry.shape = info.shape;
        entry.shape[0] = rows;
        name = lp + "attn.in_proj_" + kind;
      } else {
        name = lp + renameLeading(rest, {{"self_attn.out_proj", "attn.out_proj"},
                                         {"layer_norm1", "ln_1"},
                                         {"layer_norm2", "ln_2"},
                                         {"mlp.fc1", "mlp.c_fc"},
                                         {"mlp.fc2", "mlp.c_proj"}});
      }
    } else if (info.name == "text_model.embeddings.token_embedding.weight") {
      name = "token_embedding.weight";
    } else if (info.name == "text_model.embeddings.position_embedding.weight") {
      name = "positional_embedding";
    } else if (info.name == "text_model.embeddings.position_ids") {
      continue;  // a buffer, not a weight
    } else if (info.name.compare(0, 28, "text_model.final_layer_norm.") == 0) {
      name = "ln_final." + info.name.substr(28);
    } else if (info.name == "text_projection.weight" && info.shape.size() == 2) {
      name = "text_projection";
      entry.transform = Transform::Transpose2D;
      entry.shape = {info.shape[1], info.shape[0]};
    }
    out.add(prefix + (name.empty() ? info.name : name), std::move(entry));
  }
}

std::string originalToDiffusersUNet(const std::string& name, int64_t num_res_blocks) {
  const auto p = split(name);
  const auto inverseResnet = [](const std::string& rest) {
    for (const auto& [diffusers, original] : kUNetResnet) {
      const std::string o = original;
      if (rest == o) return std::string(diffusers);
      if (rest.starts_with(o + ".")) return std::string(diffusers) + rest.substr(o.size());
    }
    return rest;
  };
  const auto with = [](std::string head, const std::string& rest) {
    return rest.empty() ? head : head + "." + rest;
  };
  const int64_t stride = num_res_blocks + 1;
  if ((p[0] == "input_blocks" || p[0] == "output_blocks") && p.size() >= 3 && isIndex(p[1]) &&
      isIndex(p[2])) {
    const int64_t k = blockIndex(p[1], name), m = blockIndex(p[2], name);
    const std::string rest = join(p, 3);
    if (p[0] == "input_blocks") {
      if (k == 0) return m == 0 ? with("conv_in", rest) : "";
      const std::string level = "down_blocks." + std::to_string((k - 1) / stride) + ".";
      const int64_t j = (k - 1) % stride;
      if (j == num_res_blocks) {
        if (m != 0 || (rest != "op" && !rest.starts_with("op."))) return "";
        return with(level + "downsamplers.0.conv",
                    rest.substr(std::min<std::size_t>(rest.size(), 3)));
      }
      if (m == 0) return with(level + "resnets." + std::to_string(j), inverseResnet(rest));
      if (m == 1) return with(level + "attentions." + std::to_string(j), rest);
      return "";
    }
    const std::string level = "up_blocks." + std::to_string(k / stride) + ".";
    const int64_t j = k % stride;
    const bool upsampler = rest == "conv" || rest.starts_with("conv.");
    if (m == 0) return with(level + "resnets." + std::to_string(j), inverseResnet(rest));
    if ((m == 1 || m == 2) && upsampler) return with(level + "upsamplers.0", rest);
    if (m == 1) return with(level + "attentions." + std::to_string(j), rest);
    return "";
  }
  if (p[0] == "middle_block" && p.size() >= 2) {
    const std::string rest = join(p, 2);
    if (p[1] == "0") return with("mid_block.resnets.0", inverseResnet(rest));
    if (p[1] == "1") return with("mid_block.attentions.0", rest);
    if (p[1] == "2") return with("mid_block.resnets.1", inverseResnet(rest));
    return "";
  }
  static const std::pair<const char*, const char*> kOthers[] = {
      {"time_embed.0", "time_embedding.linear_1"},
      {"time_embed.2", "time_embedding.linear_2"},
      {"label_emb.0.0", "add_embedding.linear_1"},
      {"label_emb.0.2", "add_embedding.linear_2"},
      {"out.0", "conv_norm_out"},
      {"out.2", "conv_out"}};
  for (const auto& [original, diffusers] : kOthers) {
    const std::string o = original;
    if (name == o) return diffusers;
    if (name.starts_with(o + ".")) return std::string(diffusers) + name.substr(o.size());
  }
  return "";
}

}  // namespace kiln::tensor_io
