// Textual-inversion embeddings: learned token vectors in a .safetensors file, named in a
// prompt by the file's name. A1111 writes one tensor "emb_params" [n, width] (SD 1.x,
// SD 2.x); SDXL embeddings hold "clip_l" [n, 768] and "clip_g" [n, 1280], one per text
// encoder. A prompt names one as `embedding:NAME` (ComfyUI) or by the bare word NAME
// (A1111), where NAME is the file name without ".safetensors".
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::models {

struct TextualInversion {
  std::string name;
  std::string path;
  // Vectors by key ("emb_params", "clip_l", "clip_g"; a lone tensor of another name is
  // kept as "emb_params"), float32 [n, width].
  std::map<std::string, at::Tensor> vectors;
  int64_t tokens() const;

  // The vectors for a text encoder `width` wide: the key that encoder's kind uses
  // ("clip_l" for CLIP ViT-L, "clip_g" for OpenCLIP encoders), else "emb_params".
  // Throws kiln::Error(ShapeMismatch) naming the embedding when none is that wide (made
  // for another model family).
  at::Tensor forEncoder(int64_t width, bool open_clip) const;
};

// Reads an embedding file; throws kiln::Error (FileNotFound, CorruptFile,
// UnsupportedModel for files that hold no embedding or a .pt pickle).
TextualInversion loadTextualInversion(const std::string& path);

// Embedding files found in folders, by name.
class EmbeddingLibrary {
 public:
  EmbeddingLibrary() = default;
  // Each folder's *.safetensors files (not sub-folders); the first folder wins a name.
  explicit EmbeddingLibrary(const std::vector<std::string>& folders);
  bool empty() const noexcept { return files_.empty(); }
  std::optional<std::string> find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::string> files_;  // name -> path
};

// A run of prompt text cut where embeddings are named: plain text pieces, and the names
// of embeddings (`embedding:NAME`, or a bare word that is a name in the library). An
// `embedding:NAME` missing from the library throws kiln::Error(FileNotFound) listing
// what there is.
struct PromptPiece {
  std::string text;       // plain text, when `embedding` is empty
  std::string embedding;  // the embedding's name
};
std::vector<PromptPiece> splitEmbeddings(std::string_view text, const EmbeddingLibrary& library);

}  // namespace kiln::models
