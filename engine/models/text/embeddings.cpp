#include "models/text/embeddings.h"

#include <algorithm>
#include <filesystem>

#include "kiln/error.h"
#include "tensor_io/materialize.h"
#include "tensor_io/safetensors.h"
#include "tensor_io/tensor_index.h"

namespace kiln::models {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "embedding:";

bool isSeparator(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',';
}

std::string nameOf(std::string name) {
  constexpr std::string_view ext = ".safetensors";
  if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
    name.resize(name.size() - ext.size());
  return name;
}

}  // namespace

int64_t TextualInversion::tokens() const {
  return vectors.empty() ? 0 : vectors.begin()->second.size(0);
}

at::Tensor TextualInversion::forEncoder(int64_t width, bool open_clip) const {
  for (const char* key : {open_clip ? "clip_g" : "clip_l", "emb_params"}) {
    const auto it = vectors.find(key);
    if (it != vectors.end() && it->second.size(1) == width) return it->second;
  }
  std::string widths;
  for (const auto& [key, v] : vectors)
    widths += (widths.empty() ? "" : ", ") + key + " " + std::to_string(v.size(1));
  throw Error(ErrorKind::ShapeMismatch,
              "embedding '" + name + "' has vectors " + widths + " wide; this model's " +
                  std::string(open_clip ? "OpenCLIP" : "CLIP") + " text encoder takes " +
                  std::to_string(width) + " (the embedding was made for another model family)");
}

TextualInversion loadTextualInversion(const std::string& path) {
  const fs::path p(path);
  const std::string ext = p.extension().string();
  if (ext == ".pt" || ext == ".bin" || ext == ".ckpt")
    throw Error(ErrorKind::UnsupportedModel,
                "embedding '" + path +
                    "' is a pickle file, which can run arbitrary code when loaded; "
                    "Kiln only loads .safetensors embeddings");
  tensor_io::TensorIndex index;
  index.addFile(tensor_io::SafetensorsFile::open(path));
  TextualInversion ti;
  ti.path = path;
  ti.name = nameOf(p.filename().string());
  const auto take = [&](const std::string& stored, const std::string& key) {
    const auto& entry = index.at(stored);
    at::Tensor v = tensor_io::materialize(entry, at::kFloat);
    if (v.dim() == 1) v = v.unsqueeze(0);
    if (v.dim() != 2 || v.size(0) < 1 || v.size(0) > 75 || v.size(1) < 1)
      throw Error(ErrorKind::ShapeMismatch, "embedding '" + path + "': tensor '" + stored +
                                                "' is not [tokens (1 to 75), width]");
    if (!at::isfinite(v).all().item<bool>())
      throw Error(ErrorKind::NonFinite, "embedding '" + path + "': tensor '" + stored +
                                            "' holds NaN or infinity; the file is damaged");
    ti.vectors[key] = v.contiguous();
  };
  for (const char* key : {"emb_params", "clip_l", "clip_g"})
    if (index.contains(key)) take(key, key);
  if (ti.vectors.empty() && index.entries().size() == 1)
    take(index.entries().begin()->first, "emb_params");
  if (ti.vectors.empty())
    throw Error(ErrorKind::UnsupportedModel, "'" + path +
                                                 "' holds no textual-inversion embedding (expected "
                                                 "'emb_params', or 'clip_l' and 'clip_g'); found " +
                                                 index.summary());
  for (const auto& [key, v] : ti.vectors)
    if (v.size(0) != ti.tokens())
      throw Error(ErrorKind::ShapeMismatch,
                  "embedding '" + path + "': its tensors have different token counts");
  return ti;
}

EmbeddingLibrary::EmbeddingLibrary(const std::vector<std::string>& folders) {
  for (const auto& folder : folders) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) continue;
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (entry.is_regular_file(ec) && entry.path().extension() == ".safetensors")
        found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    for (const auto& f : found) files_.emplace(nameOf(f.filename().string()), f.string());
  }
}

std::optional<std::string> EmbeddingLibrary::find(const std::string& name) const {
  const auto it = files_.find(nameOf(name));
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> EmbeddingLibrary::names() const {
  std::vector<std::string> out;
  for (const auto& [name, path] : files_) out.push_back(name);
  return out;
}

std::vector<PromptPiece> splitEmbeddings(std::string_view text, const EmbeddingLibrary& library) {
  std::vector<PromptPiece> pieces;
  std::string plain;
  const auto flush = [&] {
    if (!plain.empty()) pieces.push_back({plain, {}});
    plain.clear();
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (isSeparator(text[i])) {
      plain += text[i++];
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !isSeparator(text[end])) ++end;
    const std::string word(text.substr(i, end - i));
    if (word.size() > kPrefix.size() && word.compare(0, kPrefix.size(), kPrefix) == 0) {
      const std::string name = nameOf(word.substr(kPrefix.size()));
      if (!library.find(name)) {
        std::string known;
        for (const auto& n : library.names()) known += (known.empty() ? "" : ", ") + n;
        throw Error(
            ErrorKind::FileNotFound,
            "the prompt names embedding '" + name + "', which is not in the embeddings folders" +
                (known.empty() ? std::string(" (there are none)") : " (there are: " + known + ")"));
      }
      flush();
      pieces.push_back({{}, name});
    } else if (library.find(word)) {
      flush();
      pieces.push_back({{}, word});
    } else {
      plain += word;
    }
    i = end;
  }
  flush();
  return pieces;
}

}  // namespace kiln::models
