// Checkpoints the tests write from the sd1 conformance file, with tensors changed,
// dropped, added or poisoned.
#pragma once

#include <QFile>
#include <QFileInfo>
#include <QString>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ref_tensors.h"
#include "tensor_io/safetensors.h"

namespace kiln::testing {

using kiln::tensor_io::TensorToWrite;

// Copies the sd1 conformance checkpoint (and its configuration) to `path`, letting
// `edit` change, drop or add tensors first.
inline void writeVariant(const QString& path,
                  const std::function<void(std::vector<TensorToWrite>&,
                                           std::vector<std::vector<uint8_t>>&)>& edit,
                  const std::map<std::string, std::string>& metadata = {}) {
  const auto src = kiln::tensor_io::SafetensorsFile::open(
      kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors"));
  std::vector<TensorToWrite> tensors;
  std::vector<std::vector<uint8_t>> storage;
  storage.reserve(src->tensors().size() + 8);
  for (const auto& t : src->tensors()) {
    const auto bytes = src->bytes(t);
    storage.emplace_back(bytes.begin(), bytes.end());
    tensors.push_back({t.name, t.dtype, t.shape, {}});
  }
  edit(tensors, storage);
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].bytes.empty()) tensors[i].bytes = storage[i];
  kiln::tensor_io::writeSafetensors(path.toStdString(), tensors, metadata);
  QFile::copy(
      QString::fromStdString(kiln::testing::conformancePath("sd-tiny-1234/sd1/ldm_config.json")),
      QFileInfo(path).absolutePath() + "/" + QFileInfo(path).completeBaseName() + ".json");
}

inline std::size_t indexOf(const std::vector<TensorToWrite>& t, const std::string& name) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i].name == name) return i;
  throw std::runtime_error("no tensor " + name);
}

// Sets every F16 element of a tensor to +infinity.
inline void poison(std::vector<TensorToWrite>& t, std::vector<std::vector<uint8_t>>& s,
            const std::string& name) {
  auto& bytes = s[indexOf(t, name)];
  for (std::size_t i = 0; i + 1 < bytes.size(); i += 2) {
    bytes[i] = 0x00;
    bytes[i + 1] = 0x7c;
  }
}

}  // namespace kiln::testing
