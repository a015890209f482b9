#include "tensor_io/tensor_index.h"

#include <set>

#include "kiln/error.h"

namespace kiln::tensor_io {

std::string shapeToString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

void TensorIndex::addFile(const std::shared_ptr<SafetensorsFile>& file, const std::string& prefix) {
  for (const auto& info : file->tensors()) {
    IndexEntry e;
    e.dtype = info.dtype;
    e.shape = info.shape;
    e.transform = Transform::Identity;
    e.sources.push_back({file, &info});
    entries_[prefix + info.name] = std::move(e);
  }
}

void TensorIndex::add(const std::string& name, IndexEntry entry) {
  entries_[name] = std::move(entry);
}

const IndexEntry* TensorIndex::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

const IndexEntry& TensorIndex::at(const std::string& name) const {
  if (const auto* e = find(name)) return *e;
  throw Error(ErrorKind::ShapeMismatch, "the checkpoint has no tensor '" + name + "'");
}

int64_t TensorIndex::dim(const std::string& name, std::size_t k) const {
  const std::vector<int64_t>& s = at(name).shape;
  if (k >= s.size() || s[k] <= 0)
    throw Error(ErrorKind::ShapeMismatch,
                "the checkpoint's tensor '" + name + "' has the shape " + shapeToString(s) +
                    ", which has no dimension " + std::to_string(k) +
                    " of size 1 or more; the file is damaged or not this kind of model");
  return s[k];
}

std::size_t TensorIndex::countPrefix(const std::string& prefix) const {
  std::size_t n = 0;
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    ++n;
  return n;
}

std::string TensorIndex::summary() const {
  std::map<std::string, std::size_t> groups;
  for (const auto& [name, entry] : entries_) {
    // Group by the first two dotted components: enough to recognise a layout.
    std::size_t dot = name.find('.');
    if (dot != std::string::npos) dot = name.find('.', dot + 1);
    ++groups[name.substr(0, dot)];
  }
  std::string s = std::to_string(entries_.size()) + " tensors";
  std::size_t shown = 0;
  for (const auto& [prefix, count] : groups) {
    if (shown++ == 12) {
      s += ", ...";
      break;
    }
    s += (shown == 1 ? "; " : ", ") + prefix + " (" + std::to_string(count) + ")";
  }
  return s;
}

std::vector<std::shared_ptr<SafetensorsFile>> TensorIndex::files() const {
  std::vector<std::shared_ptr<SafetensorsFile>> out;
  std::set<const SafetensorsFile*> seen;
  for (const auto& [name, entry] : entries_) {
    for (const auto& src : entry.sources) {
      if (seen.insert(src.file.get()).second) out.push_back(src.file);
    }
  }
  return out;
}

}  // namespace kiln::tensor_io
