#include "tensor_io/wan_key_map.h"

#include <algorithm>
#include <utility>

#include "kiln/error.h"
#include "tensor_io/key_map.h"

namespace kiln::tensor_io {
namespace {

using Table = std::initializer_list<std::pair<const char*, const char*>>;

bool startsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Replaces the first matching leading path of `name` (whole components) from the table
// (read right to left when `back`); empty when none matches.
std::string renamePrefix(const std::string& name, Table table, bool back = false) {
  for (auto [from, to] : table) {
    if (back) std::swap(from, to);
    const std::string f(from);
    if (name == f) return to;
    if (startsWith(name, f + ".")) return std::string(to) + name.substr(f.size());
  }
  return {};
}

// "<head>.<index>.<rest>" -> {index, rest}; index -1 when the name does not continue so.
std::pair<int64_t, std::string> indexAfter(const std::string& name, const std::string& head) {
  if (!startsWith(name, head)) return {-1, {}};
  const std::size_t dot = name.find('.', head.size());
  if (dot == std::string::npos || dot == head.size()) return {-1, {}};
  const std::string digits = name.substr(head.size(), dot - head.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return {-1, {}};
  if (digits.size() > 6)  // no model has a millionth block: a damaged name, not an overflow
    throw Error(ErrorKind::CorruptFile, "tensor '" + name + "' has the block index " + digits +
                                            "; the file is damaged or not a Wan model");
  return {std::stoll(digits), name.substr(dot + 1)};
}

constexpr Table kResidual = {{"norm1", "residual.0"},
                             {"conv1", "residual.2"},
                             {"norm2", "residual.3"},
                             {"conv2", "residual.6"},
                             {"conv_shortcut", "shortcut"}};

// mid_block.{resnets.0, attentions.0, resnets.1} -> middle.{0, 1, 2}
std::string middle(const std::string& rest, const std::string& out_prefix) {
  if (auto [i, r] = indexAfter(rest, "mid_block.resnets."); i >= 0) {
    const std::string mapped = renamePrefix(r, kResidual);
    return mapped.empty() || i > 1 ? ""
                                   : out_prefix + "middle." + std::to_string(i * 2) + "." + mapped;
  }
  if (auto [i, r] = indexAfter(rest, "mid_block.attentions."); i == 0)
    return out_prefix + "middle.1." + r;
  return {};
}

}  // namespace

namespace {

// Inside blocks.N: diffusers -> original.
constexpr Table kTransformerBlock = {{"attn1.to_q", "self_attn.q"},
                                     {"attn1.to_k", "self_attn.k"},
                                     {"attn1.to_v", "self_attn.v"},
                                     {"attn1.to_out.0", "self_attn.o"},
                                     {"attn1.norm_q", "self_attn.norm_q"},
                                     {"attn1.norm_k", "self_attn.norm_k"},
                                     {"attn2.to_q", "cross_attn.q"},
                                     {"attn2.to_k", "cross_attn.k"},
                                     {"attn2.to_v", "cross_attn.v"},
                                     {"attn2.to_out.0", "cross_attn.o"},
                                     {"attn2.norm_q", "cross_attn.norm_q"},
                                     {"attn2.norm_k", "cross_attn.norm_k"},
                                     {"norm2", "norm3"},
                                     {"ffn.net.0.proj", "ffn.0"},
                                     {"ffn.net.2", "ffn.2"}};
// Outside the blocks: diffusers -> original.
constexpr Table kTransformerTop = {
    {"patch_embedding", "patch_embedding"},
    {"condition_embedder.text_embedder.linear_1", "text_embedding.0"},
    {"condition_embedder.text_embedder.linear_2", "text_embedding.2"},
    {"condition_embedder.time_embedder.linear_1", "time_embedding.0"},
    {"condition_embedder.time_embedder.linear_2", "time_embedding.2"},
    {"condition_embedder.time_proj", "time_projection.1"},
    {"proj_out", "head.head"}};

}  // namespace

std::string wanTransformerFromDiffusers(const std::string& name) {
  if (auto [i, rest] = indexAfter(name, "blocks."); i >= 0) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    if (rest == "scale_shift_table") return b + "modulation";
    const std::string mapped = renamePrefix(rest, kTransformerBlock);
    return mapped.empty() ? "" : b + mapped;
  }
  if (name == "scale_shift_table") return "head.modulation";
  return renamePrefix(name, kTransformerTop);
}

std::string wanTransformerToDiffusers(const std::string& name) {
  if (auto [i, rest] = indexAfter(name, "blocks."); i >= 0) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    if (rest == "modulation") return b + "scale_shift_table";
    const std::string mapped = renamePrefix(rest, kTransformerBlock, true);
    return mapped.empty() ? "" : b + mapped;
  }
  if (name == "head.modulation") return "scale_shift_table";
  return renamePrefix(name, kTransformerTop, true);
}

std::string wanVaeFromDiffusers(const std::string& name, int64_t num_res_blocks) {
  if (std::string r = renamePrefix(name, {{"quant_conv", "conv1"}, {"post_quant_conv", "conv2"}});
      !r.empty())
    return r;
  for (const char* side : {"encoder.", "decoder."}) {
    if (!startsWith(name, side)) continue;
    const std::string rest = name.substr(std::string(side).size());
    if (std::string r = renamePrefix(
            rest, {{"conv_in", "conv1"}, {"norm_out", "head.0"}, {"conv_out", "head.2"}});
        !r.empty())
      return side + r;
    if (std::string r = middle(rest, side); !r.empty()) return r;
    if (auto [i, r] = indexAfter(rest, "down_blocks."); i >= 0) {
      const std::string mapped = startsWith(r, "resample.") || startsWith(r, "time_conv.")
                                     ? r
                                     : renamePrefix(r, kResidual);
      return mapped.empty() ? ""
                            : std::string(side) + "downsamples." + std::to_string(i) + "." + mapped;
    }
    if (auto [i, r] = indexAfter(rest, "up_blocks."); i >= 0) {
      const int64_t stride = num_res_blocks + 2;  // res blocks + 1, then the upsampler
      if (auto [j, rr] = indexAfter(r, "resnets."); j >= 0 && j <= num_res_blocks) {
        const std::string mapped = renamePrefix(rr, kResidual);
        return mapped.empty() ? ""
                              : std::string(side) + "upsamples." + std::to_string(i * stride + j) +
                                    "." + mapped;
      }
      if (auto [j, rr] = indexAfter(r, "upsamplers."); j == 0)
        return std::string(side) + "upsamples." + std::to_string(i * stride + num_res_blocks + 1) +
               "." + rr;
    }
  }
  return {};
}

void mapDiffusersWanTransformer(const std::shared_ptr<SafetensorsFile>& file,
                                const std::string& prefix, TensorIndex& out) {
  for (const auto& t : file->tensors()) {
    const std::string name = wanTransformerFromDiffusers(t.name);
    if (name.empty())
      throw Error(ErrorKind::UnsupportedModel,
                  "'" + file->path() + "' is not a diffusers Wan transformer: tensor '" + t.name +
                      "' is unknown");
    out.add(prefix + name, identityEntry(file, t));
  }
}

void mapDiffusersWanVae(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix,
                        TensorIndex& out) {
  int64_t per_level = 0;  // encoder residual blocks before the first resampler
  while (file->find("encoder.down_blocks." + std::to_string(per_level) + ".conv1.weight"))
    ++per_level;
  if (per_level == 0)
    throw Error(ErrorKind::UnsupportedModel,
                "'" + file->path() + "' is not a diffusers Wan VAE (no encoder.down_blocks)");
  for (const auto& t : file->tensors()) {
    const std::string name = wanVaeFromDiffusers(t.name, per_level);
    if (name.empty())
      throw Error(
          ErrorKind::UnsupportedModel,
          "'" + file->path() + "' is not a diffusers Wan VAE: tensor '" + t.name + "' is unknown");
    out.add(prefix + name, identityEntry(file, t));
  }
}

}  // namespace kiln::tensor_io
