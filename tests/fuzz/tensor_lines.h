// A text form of a safetensors header for the structure-aware fuzzers: one tensor per
// line, "name DTYPE d0,d1,...", and "@key value" for a metadata entry. Mutating names and
// shapes as text reaches the layout and detection code far more often than mutating a
// binary file image would (the header parser has its own fuzzer).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tensor_io/dtype.h"
#include "tensor_io/safetensors.h"

namespace kiln::fuzz {

struct TensorLines {
  std::vector<tensor_io::TensorInfo> tensors;  // begin/end laid out one after another
  std::map<std::string, std::string> metadata;
  uint64_t data_bytes = 0;
};

// Parses `text`; lines that are not a tensor or a metadata entry are skipped (a fuzzer
// wants every input to do something). Returns nothing when the tensors would hold more
// than `max_bytes` of data, or a name repeats (a file cannot say that).
inline std::optional<TensorLines> parseTensorLines(std::string_view text, uint64_t max_bytes) {
  TensorLines out;
  std::map<std::string, bool> seen;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '@') {
      const std::size_t space = line.find(' ');
      if (space == std::string::npos) continue;
      out.metadata[line.substr(1, space - 1)] = line.substr(space + 1);
      continue;
    }
    std::istringstream fields(line);
    std::string name, dtype_name, dims;
    if (!(fields >> name >> dtype_name)) continue;
    fields >> dims;  // absent for a scalar
    const tensor_io::DType dtype = tensor_io::parseDType(dtype_name);
    if (dtype == tensor_io::DType::Invalid) continue;
    tensor_io::TensorInfo info;
    info.name = name;
    info.dtype = dtype;
    uint64_t bytes = tensor_io::dtypeSize(dtype);
    bool ok = true;
    std::istringstream dim_list(dims);
    std::string dim;
    while (ok && std::getline(dim_list, dim, ',')) {
      if (dim.empty() || dim.size() > 18 ||
          dim.find_first_not_of("0123456789") != std::string::npos) {
        ok = false;
        break;
      }
      const int64_t d = std::stoll(dim);
      info.shape.push_back(d);
      if (d != 0 && bytes > max_bytes / static_cast<uint64_t>(d)) ok = false;
      bytes *= static_cast<uint64_t>(d);
    }
    if (!ok || out.data_bytes + bytes > max_bytes) return std::nullopt;
    if (seen[name]) return std::nullopt;
    seen[name] = true;
    info.begin = out.data_bytes;
    info.end = out.data_bytes + bytes;
    out.data_bytes = info.end;
    out.tensors.push_back(std::move(info));
  }
  return out;
}

}  // namespace kiln::fuzz
