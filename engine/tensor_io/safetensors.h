// Reading and writing .safetensors files. The reader maps the file and validates the
// whole header before any tensor is touched: every violation is a kiln::Error naming the
// file and the tensor, never a crash and never a read outside the file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tensor_io/dtype.h"

namespace kiln::tensor_io {

struct TensorInfo {
  std::string name;
  DType dtype = DType::Invalid;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets relative to the start of the data area
  uint64_t end = 0;

  uint64_t numel() const noexcept;
  uint64_t byteSize() const noexcept { return end - begin; }
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // in file order of their data
  std::map<std::string, std::string> metadata;
  uint64_t data_offset = 0;  // where the data area starts in the file
};

// Largest header accepted by default; real checkpoints have headers of a few MiB.
inline constexpr uint64_t kDefaultMaxHeaderBytes = 100ull << 20;

// Validates a complete file image (the first file_size bytes at data). `label` names the
// file in error messages. Throws kiln::Error(CorruptFile) on any violation.
SafetensorsHeader parseSafetensorsHeader(const uint8_t* data, uint64_t file_size,
                                         const std::string& label,
                                         uint64_t max_header_bytes = kDefaultMaxHeaderBytes);

// A read-only view of a file through a private (copy-on-write) memory map.
class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const noexcept { return data_; }
  uint64_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }
  // How the file on disk differs from the one mapped ("" when it does not): gone,
  // replaced by another file, another size, rewritten. A mapped file cut short under its
  // readers means SIGBUS, so what holds views of it checks this before using them.
  std::string changeOnDisk() const;

 private:
  MappedFile() = default;
  std::string path_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t device_ = 0, inode_ = 0;
  int64_t mtime_ns_ = 0;
};

class SafetensorsFile;
// The first of `files` that changed on disk since it was mapped, said for a person ("" when
// none did).
std::string filesChangedOnDisk(const std::vector<std::shared_ptr<SafetensorsFile>>& files);

class SafetensorsFile {
 public:
  static std::shared_ptr<SafetensorsFile> open(const std::string& path,
                                               uint64_t max_header_bytes = kDefaultMaxHeaderBytes);

  const std::string& path() const noexcept { return file_->path(); }
  const std::vector<TensorInfo>& tensors() const noexcept { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const noexcept { return header_.metadata; }
  const TensorInfo* find(const std::string& name) const;
  // The raw little-endian bytes of one tensor (inside the mapping, checked at open).
  std::span<const uint8_t> bytes(const TensorInfo& info) const;
  const std::shared_ptr<MappedFile>& mapping() const noexcept { return file_; }

 private:
  std::shared_ptr<MappedFile> file_;
  SafetensorsHeader header_;
  std::map<std::string, std::size_t> by_name_;
};

// One tensor to write: raw little-endian bytes whose size must equal shape x dtype size.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::Invalid;
  std::vector<int64_t> shape;
  std::span<const uint8_t> bytes;
};

// Writes a file atomically: to a temporary name in the same folder, then renamed over
// `path`, so a failure never leaves a half-written file behind.
void writeSafetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace kiln::tensor_io
