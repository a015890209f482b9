#include "tensor_io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "kiln/error.h"

namespace kiln::tensor_io {
namespace {

[[noreturn]] void corrupt(const std::string& label, const std::string& what) {
  throw Error(ErrorKind::CorruptFile, "'" + label + "' is not a valid safetensors file: " + what);
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// Multiplies with an overflow check; false when the product does not fit.
bool mulChecked(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return false;
  *out = a * b;
  return true;
}

TensorInfo parseEntry(const std::string& label, const std::string& name,
                      const nlohmann::json& entry, uint64_t data_size) {
  const std::string where = "tensor '" + name + "'";
  if (!entry.is_object()) corrupt(label, where + " is not a JSON object");
  TensorInfo info;
  info.name = name;

  const auto dt = entry.find("dtype");
  if (dt == entry.end() || !dt->is_string()) corrupt(label, where + " has no dtype string");
  info.dtype = parseDType(dt->get<std::string>());
  if (info.dtype == DType::Invalid)
    corrupt(label, where + " has unknown dtype '" + dt->get<std::string>() + "'");

  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) corrupt(label, where + " has no shape array");
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 62))
      corrupt(label, where + " has an invalid dimension in its shape");
    info.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
  }

  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
    corrupt(label, where + " has no valid data_offsets pair");
  info.begin = (*offsets)[0].get<uint64_t>();
  info.end = (*offsets)[1].get<uint64_t>();
  if (info.begin > info.end) corrupt(label, where + " has data_offsets that end before they begin");
  if (info.end > data_size)
    corrupt(label, where + " has data_offsets [" + std::to_string(info.begin) + ", " +
                       std::to_string(info.end) + ") outside the data area of " +
                       std::to_string(data_size) + " bytes (file truncated?)");

  uint64_t expected = dtypeSize(info.dtype);
  for (int64_t d : info.shape) {
    if (!mulChecked(expected, static_cast<uint64_t>(d), &expected))
      corrupt(label, where + " has a shape whose size overflows");
  }
  if (expected != info.byteSize())
    corrupt(label, where + " has shape " + shapeText(info.shape) + " of " + dtypeName(info.dtype) +
                       " (" + std::to_string(expected) + " bytes) but its data range holds " +
                       std::to_string(info.byteSize()) + " bytes");
  return info;
}

}  // namespace

uint64_t TensorInfo::numel() const noexcept {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

SafetensorsHeader parseSafetensorsHeader(const uint8_t* data, uint64_t file_size,
                                         const std::string& label, uint64_t max_header_bytes) {
  if (file_size < 8) corrupt(label, "the file is shorter than the 8-byte header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | data[i];
  if (header_len > max_header_bytes)
    corrupt(label, "its header claims " + std::to_string(header_len) +
                       " bytes, more than the limit of " + std::to_string(max_header_bytes));
  if (header_len > file_size - 8)
    corrupt(label, "its header claims " + std::to_string(header_len) +
                       " bytes but the file has only " + std::to_string(file_size - 8) +
                       " after the length field (truncated?)");
  if (header_len < 2 || data[8] != '{') corrupt(label, "the header is not a JSON object");

  const char* text = reinterpret_cast<const char*>(data + 8);
  nlohmann::json root = nlohmann::json::parse(text, text + header_len, nullptr, false);
  if (root.is_discarded()) corrupt(label, "the header is not well-formed JSON (or not UTF-8)");
  if (!root.is_object()) corrupt(label, "the header is not a JSON object");

  SafetensorsHeader header;
  header.data_offset = 8 + header_len;
  const uint64_t data_size = file_size - header.data_offset;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object()) corrupt(label, "__metadata__ is not an object");
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        if (!m.value().is_string())
          corrupt(label, "__metadata__ entry '" + m.key() + "' is not a string");
        header.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    header.tensors.push_back(parseEntry(label, it.key(), it.value(), data_size));
  }

  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  const TensorInfo* previous = nullptr;
  for (const auto& t : header.tensors) {
    if (t.byteSize() == 0) continue;
    if (previous && t.begin < previous->end)
      corrupt(label,
              "tensors '" + previous->name + "' and '" + t.name + "' overlap in the data area");
    previous = &t;
  }
  return header;
}

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw Error(err == ENOENT ? ErrorKind::FileNotFound : ErrorKind::Io,
                "cannot open '" + path + "': " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::Io, "'" + path + "' is not a regular file");
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<uint64_t>(st.st_size);
  file->device_ = static_cast<uint64_t>(st.st_dev);
  file->inode_ = static_cast<uint64_t>(st.st_ino);
  file->mtime_ns_ = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (file->size_ > 0) {
    // Private and writable: a consumer that writes into a tensor gets its own copy of
    // the page instead of a crash, and the file on disk never changes.
    void* p = ::mmap(nullptr, file->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(ErrorKind::Io, "cannot map '" + path + "': " + std::strerror(err));
    }
    file->data_ = static_cast<uint8_t*>(p);
  }
  ::close(fd);
  return file;
}

std::string MappedFile::changeOnDisk() const {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return "'" + path_ + "' is gone";
  if (static_cast<uint64_t>(st.st_dev) != device_ || static_cast<uint64_t>(st.st_ino) != inode_)
    return "'" + path_ + "' was replaced by another file";
  if (static_cast<uint64_t>(st.st_size) != size_)
    return "'" + path_ + "' changed size on disk (" + std::to_string(size_) +
           " bytes when loaded, " + std::to_string(st.st_size) + " now)";
  if (static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec != mtime_ns_)
    return "'" + path_ + "' was rewritten on disk";
  return {};
}

std::string filesChangedOnDisk(const std::vector<std::shared_ptr<SafetensorsFile>>& files) {
  for (const auto& f : files)
    if (std::string change = f->mapping()->changeOnDisk(); !change.empty()) return change;
  return {};
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

std::shared_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path,
                                                       uint64_t max_header_bytes) {
  auto file = std::make_shared<SafetensorsFile>();
  file->file_ = MappedFile::open(path);
  file->header_ =
      parseSafetensorsHeader(file->file_->data(), file->file_->size(), path, max_header_bytes);
  for (std::size_t i = 0; i < file->header_.tensors.size(); ++i)
    file->by_name_[file->header_.tensors[i].name] = i;
  return file;
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &header_.tensors[it->second];
}

std::span<const uint8_t> SafetensorsFile::bytes(const TensorInfo& info) const {
  return {file_->data() + header_.data_offset + info.begin, info.byteSize()};
}

void writeSafetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    uint64_t expected = dtypeSize(t.dtype);
    bool valid = t.dtype != DType::Invalid;
    for (int64_t d : t.shape)
      valid = valid && d >= 0 && mulChecked(expected, static_cast<uint64_t>(d), &expected);
    if (!valid || expected != t.bytes.size())
      throw Error(ErrorKind::InvalidArgument, "cannot write tensor '" + t.name + "' to '" + path +
                                                  "': shape " + shapeText(t.shape) +
                                                  " does not match its " +
                                                  std::to_string(t.bytes.size()) + " bytes");
    // A repeated name would silently drop the earlier tensor's entry (its bytes stay in
    // the file); a tensor named "__metadata__" would collide with the metadata.
    if (t.name == "__metadata__" || header.contains(t.name))
      throw Error(ErrorKind::InvalidArgument,
                  "cannot write tensor '" + t.name + "' to '" + path +
                      "': the name is reserved or used by another tensor");
    header[t.name] = {{"dtype", dtypeName(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception&) {
    // The format's header is JSON text, which holds UTF-8 names and values only.
    throw Error(ErrorKind::InvalidArgument,
                "cannot write '" + path +
                    "': a tensor name or metadata entry is not UTF-8 text, "
                    "which a safetensors header cannot hold");
  }
  // Pad with spaces so the data area starts 8-byte aligned (zero-copy friendly).
  while ((8 + text.size()) % 8 != 0) text.push_back(' ');

  core::AtomicFile out(path);
  {
    std::ofstream f(out.temporaryPath(), std::ios::binary | std::ios::trunc);
    if (!f) throw Error(ErrorKind::Io, "cannot create '" + out.temporaryPath() + "'");
    uint8_t len[8];
    uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
    f.write(reinterpret_cast<const char*>(len), 8);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& t : tensors)
      f.write(reinterpret_cast<const char*>(t.bytes.data()),
              static_cast<std::streamsize>(t.bytes.size()));
    f.flush();
    if (!f) throw Error(ErrorKind::Io, "failed writing '" + out.temporaryPath() + "' (disk full?)");
  }
  out.commit();
}

}  // namespace kiln::tensor_io
