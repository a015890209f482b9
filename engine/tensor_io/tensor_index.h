// TensorIndex: the metadata of every tensor a model can load (name, dtype, shape, where
// its bytes are), under canonical names: the keys of the original single-file layout.
// Built without reading any tensor data, so architecture detection is cheap; tensors are
// materialised later (tensor_io/materialize.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensor_io/safetensors.h"

namespace kiln::tensor_io {

// How the stored tensor(s) become the canonical tensor. Layout conversions between
// diffusers folders and single files are exact reshapes, transposes and concatenations.
enum class Transform {
  Invalid = 0,
  Identity,     // one source, used as stored
  Reshape,      // one source, same elements, canonical shape (Linear [C,C] -> conv [C,C,1,1])
  Transpose2D,  // one 2-D source, transposed
  Concat0,      // several sources concatenated along dim 0 (q|k|v -> in_proj_weight)
  SwapHalves0,  // one source whose two halves along dim 0 are exchanged ([a; b] -> [b; a])
  Scaled,       // a stored tensor times its one-element scale (the second source): scaled fp8
};

struct TensorSource {
  std::shared_ptr<SafetensorsFile> file;
  const TensorInfo* info = nullptr;  // owned by file
};

struct IndexEntry {
  DType dtype = DType::Invalid;
  std::vector<int64_t> shape;  // canonical shape
  Transform transform = Transform::Invalid;
  std::vector<TensorSource> sources;
};

class TensorIndex {
 public:
  // Adds every tensor of `file` as an identity entry named prefix + stored name.
  void addFile(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix = "");
  void add(const std::string& name, IndexEntry entry);

  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  const IndexEntry* find(const std::string& name) const;
  // Throws kiln::Error(ShapeMismatch) naming the tensor when it is absent.
  const IndexEntry& at(const std::string& name) const;
  const std::vector<int64_t>& shape(const std::string& name) const { return at(name).shape; }
  // Dimension k of a tensor that architecture detection reads (a channel or vocabulary
  // count). Throws kiln::Error(ShapeMismatch) naming the tensor when it is absent, has
  // fewer dimensions, or that dimension is empty: a crafted file is an error, not a
  // division by zero.
  int64_t dim(const std::string& name, std::size_t k) const;
  // Number of names starting with prefix.
  std::size_t countPrefix(const std::string& prefix) const;
  bool hasPrefix(const std::string& prefix) const { return countPrefix(prefix) != 0; }
  const std::map<std::string, IndexEntry>& entries() const noexcept { return entries_; }
  std::size_t size() const noexcept { return entries_.size(); }
  // A short description ("601 tensors; prefixes: model.diffusion_model (…), …") for
  // error messages about unknown checkpoints.
  std::string summary() const;
  // The files the entries come from, for metadata look-ups.
  std::vector<std::shared_ptr<SafetensorsFile>> files() const;

 private:
  std::map<std::string, IndexEntry> entries_;
};

std::string shapeToString(const std::vector<int64_t>& shape);

}  // namespace kiln::tensor_io
