// Checkpoints the tests write from the sd1 conformance file, with tensors changed,
// dropped, added or poisoned.
#pragma once

#include <QFile>
#include <QFileInfo>
#include <QString>

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ref_tensors.h"
#include "tensor_io/safetensors.h"

namespace kiln::testing {

using kiln::tensor_io::TensorToWrite;

// Copies a conformance checkpoint ("sd1" or "sdxl") and its configuration to `path`,
// letting `edit` change, drop or add tensors first.
inline void writeVariant(const QString& path,
                         const std::function<void(std::vector<TensorToWrite>&,
                                                  std::vector<std::vector<uint8_t>>&)>& edit,
                         const std::map<std::string, std::string>& metadata = {},
                         const std::string& family = "sd1") {
  const std::string dir = "sd-tiny-1234/" + family + "/";
  const auto src = kiln::tensor_io::SafetensorsFile::open(
      kiln::testing::conformancePath(dir + family + "_tiny_ldm.safetensors"));
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
  QFile::copy(QString::fromStdString(kiln::testing::conformancePath(dir + "ldm_config.json")),
              QFileInfo(path).absolutePath() + "/" + QFileInfo(path).completeBaseName() + ".json");
}

inline std::size_t indexOf(const std::vector<TensorToWrite>& t, const std::string& name) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i].name == name) return i;
  throw std::runtime_error("no tensor " + name);
}

// A 2-D tensor [rows, cols] (any element size) cut to columns [from, from + count).
inline void keepColumns(std::vector<TensorToWrite>& t, std::vector<std::vector<uint8_t>>& s,
                        const std::string& name, int64_t from, int64_t count) {
  const std::size_t i = indexOf(t, name);
  const int64_t rows = t[i].shape.at(0), cols = t[i].shape.at(1);
  const std::size_t elem = s[i].size() / static_cast<std::size_t>(rows * cols);
  std::vector<uint8_t> out;
  out.reserve(static_cast<std::size_t>(rows * count) * elem);
  for (int64_t r = 0; r < rows; ++r) {
    const auto row =
        s[i].begin() + static_cast<std::ptrdiff_t>((r * cols + from) * static_cast<int64_t>(elem));
    out.insert(out.end(), row,
               row + static_cast<std::ptrdiff_t>(count * static_cast<int64_t>(elem)));
  }
  s[i] = std::move(out);
  t[i].shape[1] = count;
}

// Columns [from, from + count) of a 2-D tensor set to zero.
inline void zeroColumns(std::vector<TensorToWrite>& t, std::vector<std::vector<uint8_t>>& s,
                        const std::string& name, int64_t from, int64_t count) {
  const std::size_t i = indexOf(t, name);
  const int64_t rows = t[i].shape.at(0), cols = t[i].shape.at(1);
  const std::size_t elem = s[i].size() / static_cast<std::size_t>(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    std::fill_n(
        s[i].begin() + static_cast<std::ptrdiff_t>((r * cols + from) * static_cast<int64_t>(elem)),
        count * static_cast<int64_t>(elem), uint8_t{0});
}

// An SDXL refiner written from the sdxl tiny file, with its configuration beside it: its
// OpenCLIP encoder alone under conditioner.embedders.0.model., cross-attention over that
// encoder's 24 channels (the base's last 24 of 40), and a label embedding for the pooled
// 20 + 5 ids of 8 (the aesthetic score in place of the target size; the base's first 60).
inline void writeSdxlRefiner(const QString& path) {
  const int64_t clip_l = 16, clip_g = 24, pooled = 20, id_width = 8;
  writeVariant(
      path,
      [&](std::vector<TensorToWrite>& t, std::vector<std::vector<uint8_t>>& s) {
        for (std::size_t i = t.size(); i-- > 0;)
          if (t[i].name.rfind("conditioner.embedders.0.", 0) == 0) {
            t.erase(t.begin() + static_cast<std::ptrdiff_t>(i));
            s.erase(s.begin() + static_cast<std::ptrdiff_t>(i));
          }
        const std::string second = "conditioner.embedders.1.";
        for (auto& x : t)
          if (x.name.rfind(second, 0) == 0)
            x.name = "conditioner.embedders.0." + x.name.substr(second.size());
        for (std::size_t i = 0; i < t.size(); ++i)
          if (t[i].name.find("attn2.to_k.weight") != std::string::npos ||
              t[i].name.find("attn2.to_v.weight") != std::string::npos)
            keepColumns(t, s, t[i].name, clip_l, clip_g);
        keepColumns(t, s, "model.diffusion_model.label_emb.0.0.weight", 0, pooled + 5 * id_width);
      },
      {}, "sdxl");
  QFile sidecar(QFileInfo(path).absolutePath() + "/" + QFileInfo(path).completeBaseName() +
                ".json");
  if (!sidecar.open(QIODevice::WriteOnly | QIODevice::Truncate))
    throw std::runtime_error("cannot write sidecar");
  sidecar.write(
      "{\"family\": \"sdxl_refiner\", \"network_config\": {\"num_head_channels\": 16}, "
      "\"conditioner\": {\"embedders.0\": {\"heads\": 3, \"act\": \"gelu\"}}}");
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
