// Test support: reading reference tensors from the conformance files and comparing.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "tensor_io/materialize.h"
#include "tensor_io/safetensors.h"

namespace kiln::testing {

inline std::string conformancePath(const std::string& relative) {
  return std::string(KILN_CONFORMANCE_DIR) + "/" + relative;
}

// All tensors of one reference file, by name.
class RefFile {
 public:
  explicit RefFile(const std::string& relative)
      : file_(tensor_io::SafetensorsFile::open(conformancePath(relative))) {}
  at::Tensor operator[](const std::string& name) const {
    const auto* info = file_->find(name);
    if (!info) throw std::runtime_error("reference tensor '" + name + "' missing");
    return tensor_io::viewStored({file_, info}).clone();
  }
  bool has(const std::string& name) const { return file_->find(name) != nullptr; }

 private:
  std::shared_ptr<tensor_io::SafetensorsFile> file_;
};

inline double maxAbsDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

inline double maxAbs(const at::Tensor& a) {
  return a.to(at::kDouble).abs().max().item<double>();
}

}  // namespace kiln::testing
