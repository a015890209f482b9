#include "tensor_io/flux_key_map.h"

#include <array>
#include <utility>
#include <vector>

#include "kiln/error.h"
#include "tensor_io/key_map.h"

namespace kiln::tensor_io {
namespace {

using Rule = std::pair<const char*, const char*>;  // diffusers prefix -> original prefix

constexpr std::array<Rule, 8> kTopLevel{{
    {"x_embedder.", "img_in."},
    {"context_embedder.", "txt_in."},
    {"time_text_embed.timestep_embedder.linear_1.", "time_in.in_layer."},
    {"time_text_embed.timestep_embedder.linear_2.", "time_in.out_layer."},
    {"time_text_embed.guidance_embedder.linear_1.", "guidance_in.in_layer."},
    {"time_text_embed.guidance_embedder.linear_2.", "guidance_in.out_layer."},
    {"time_text_embed.text_embedder.linear_1.", "vector_in.in_layer."},
    {"time_text_embed.text_embedder.linear_2.", "vector_in.out_layer."},
}};

constexpr std::array<Rule, 12> kDoubleBlock{{
    {"norm1.linear.", "img_mod.lin."},
    {"norm1_context.linear.", "txt_mod.lin."},
    {"attn.norm_q.weight", "img_attn.norm.query_norm.scale"},
    {"attn.norm_k.weight", "img_attn.norm.key_norm.scale"},
    {"attn.norm_added_q.weight", "txt_attn.norm.query_norm.scale"},
    {"attn.norm_added_k.weight", "txt_attn.norm.key_norm.scale"},
    {"attn.to_out.0.", "img_attn.proj."},
    {"attn.to_add_out.", "txt_attn.proj."},
    {"ff.net.0.proj.", "img_mlp.0."},
    {"ff.net.2.", "img_mlp.2."},
    {"ff_context.net.0.proj.", "txt_mlp.0."},
    {"ff_context.net.2.", "txt_mlp.2."},
}};

constexpr std::array<Rule, 4> kSingleBlock{{
    {"norm.linear.", "modulation.lin."},
    {"attn.norm_q.weight", "norm.query_norm.scale"},
    {"attn.norm_k.weight", "norm.key_norm.scale"},
    {"proj_out.", "linear2."},
}};

// A fused projection: its parts' diffusers names (in order) and its original name.
struct Fused {
  std::vector<const char*> parts;
  const char* original;
};
const Fused kImgQkv{{"attn.to_q.", "attn.to_k.", "attn.to_v."}, "img_attn.qkv."};
const Fused kTxtQkv{{"attn.add_q_proj.", "attn.add_k_proj.", "attn.add_v_proj."}, "txt_attn.qkv."};
const Fused kLinear1{{"attn.to_q.", "attn.to_k.", "attn.to_v.", "proj_mlp."}, "linear1."};

bool startsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

template <std::size_t N>
std::string applyRules(const std::array<Rule, N>& rules, const std::string& rest) {
  for (const auto& [from, to] : rules)
    if (startsWith(rest, from)) return to + rest.substr(std::string(from).size());
  return {};
}

// "transformer_blocks.3.attn.to_q.weight" -> {"transformer_blocks.3.", "attn.to_q.weight"}
bool splitBlock(const std::string& name, const std::string& kind, std::string* block,
                std::string* rest) {
  if (!startsWith(name, kind)) return false;
  const auto dot = name.find('.', kind.size());
  if (dot == std::string::npos || dot == kind.size()) return false;
  *block = name.substr(0, dot + 1);
  *rest = name.substr(dot + 1);
  return true;
}

// The fused projection `name` is the first part of, and whether it is any part of one.
const Fused* fusedOf(const std::string& kind, const std::string& rest, bool* part) {
  const std::vector<const Fused*> candidates = kind == "single_transformer_blocks."
                                                   ? std::vector<const Fused*>{&kLinear1}
                                                   : std::vector<const Fused*>{&kImgQkv, &kTxtQkv};
  *part = false;
  for (const Fused* f : candidates)
    for (std::size_t i = 0; i < f->parts.size(); ++i)
      if (startsWith(rest, f->parts[i])) {
        *part = true;
        return i == 0 ? f : nullptr;
      }
  return nullptr;
}

}  // namespace

std::string fluxTransformerFromDiffusers(const std::string& name) {
  if (std::string top = applyRules(kTopLevel, name); !top.empty()) return top;
  if (startsWith(name, "proj_out.")) return "final_layer.linear." + name.substr(9);
  std::string block, rest;
  if (splitBlock(name, "transformer_blocks.", &block, &rest)) {
    const std::string mapped = applyRules(kDoubleBlock, rest);
    return mapped.empty() ? "" : "double_blocks." + block.substr(19) + mapped;
  }
  if (splitBlock(name, "single_transformer_blocks.", &block, &rest)) {
    const std::string mapped = applyRules(kSingleBlock, rest);
    return mapped.empty() ? "" : "single_blocks." + block.substr(26) + mapped;
  }
  return {};
}

std::vector<FluxDiffusersPart> fluxTransformerDiffusersParts(const std::string& original,
                                                             int64_t dim, int64_t mlp_hidden) {
  const std::string name = original + ".";
  const auto reverse = [&](const auto& rules, const std::string& rest,
                           const std::string& block) -> std::vector<FluxDiffusersPart> {
    for (const auto& [from, to] : rules) {
      const std::string t(to), f(from);
      if (t.back() == '.' && rest == t) return {{block + f.substr(0, f.size() - 1)}};
    }
    return {};
  };
  if (auto top = reverse(kTopLevel, name, ""); !top.empty()) return top;
  if (name == "final_layer.linear.") return {{"proj_out"}};
  const auto fused = [&](const Fused& f, const std::string& block,
                         const std::vector<int64_t>& rows) {
    std::vector<FluxDiffusersPart> parts;
    int64_t offset = 0;
    for (std::size_t i = 0; i < f.parts.size(); ++i) {
      const std::string part(f.parts[i]);
      parts.push_back({block + part.substr(0, part.size() - 1), offset, rows[i]});
      offset += rows[i];
    }
    return parts;
  };
  std::string block, rest;
  if (splitBlock(name, "double_blocks.", &block, &rest)) {
    const std::string d = "transformer_blocks." + block.substr(14);
    if (rest == kImgQkv.original) return fused(kImgQkv, d, {dim, dim, dim});
    if (rest == kTxtQkv.original) return fused(kTxtQkv, d, {dim, dim, dim});
    return reverse(kDoubleBlock, rest, d);
  }
  if (splitBlock(name, "single_blocks.", &block, &rest)) {
    const std::string d = "single_transformer_blocks." + block.substr(14);
    if (rest == kLinear1.original) return fused(kLinear1, d, {dim, dim, dim, mlp_hidden});
    return reverse(kSingleBlock, rest, d);
  }
  return {};
}

void mapDiffusersFluxTransformer(const std::shared_ptr<SafetensorsFile>& file,
                                 const std::string& prefix, TensorIndex& out) {
  mapDiffusersFluxTransformer(std::vector<std::shared_ptr<SafetensorsFile>>{file}, prefix, out);
}

void mapDiffusersFluxTransformer(const std::vector<std::shared_ptr<SafetensorsFile>>& files,
                                 const std::string& prefix, TensorIndex& out) {
  // A fused projection's parts may lie in different shards.
  const auto findAny = [&](const std::string& name) -> TensorSource {
    for (const auto& f : files)
      if (const TensorInfo* t = f->find(name)) return {f, t};
    return {};
  };
  for (const auto& file : files)
    for (const auto& info : file->tensors()) {
      if (std::string name = fluxTransformerFromDiffusers(info.name); !name.empty()) {
        out.add(prefix + name, identityEntry(file, info));
        continue;
      }
      if (startsWith(info.name, "norm_out.linear.")) {
        // [scale; shift] in diffusers, [shift; scale] in the original.
        IndexEntry entry = identityEntry(file, info);
        entry.transform = Transform::SwapHalves0;
        out.add(prefix + "final_layer.adaLN_modulation.1." + info.name.substr(16),
                std::move(entry));
        continue;
      }
      std::string block, rest;
      std::string kind = "single_transformer_blocks.";
      bool found = splitBlock(info.name, kind, &block, &rest);
      if (!found) {
        kind = "transformer_blocks.";
        found = splitBlock(info.name, kind, &block, &rest);
      }
      bool part = false;
      const Fused* fused = found ? fusedOf(kind, rest, &part) : nullptr;
      if (part && !fused) continue;  // a later part: added with the first
      if (!fused)
        throw Error(ErrorKind::UnsupportedModel, "'" + file->path() + "' has a tensor '" +
                                                     info.name +
                                                     "' that is not part of a FLUX transformer");
      const std::string suffix = rest.substr(std::string(fused->parts[0]).size());  // weight/bias
      IndexEntry entry = identityEntry(file, info);
      entry.transform = Transform::Concat0;
      entry.sources.clear();
      int64_t rows = 0;
      for (const char* p : fused->parts) {
        const std::string source = block + p + suffix;
        const TensorSource t = findAny(source);
        if (!t.info)
          throw Error(ErrorKind::ShapeMismatch,
                      "'" + file->path() + "' has no tensor '" + source + "'");
        entry.sources.push_back(t);
        rows += t.info->shape.at(0);
      }
      entry.shape[0] = rows;
      const std::string original =
          kind == "single_transformer_blocks." ? "single_blocks." : "double_blocks.";
      out.add(prefix + original + block.substr(kind.size()) + fused->original + suffix,
              std::move(entry));
    }
}

}  // namespace kiln::tensor_io
