// Writing files so that readers never see a half-written one: write to a temporary
// sibling, then rename it over the destination (atomic on POSIX file systems).
#pragma once

#include <string>

namespace kiln::core {

class AtomicFile {
 public:
  explicit AtomicFile(std::string final_path);
  ~AtomicFile();  // removes the temporary file unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Where the content must be written before commit().
  const std::string& temporaryPath() const noexcept { return temp_path_; }
  const std::string& finalPath() const noexcept { return final_path_; }
  // Renames the temporary file over the final path. Throws kiln::Error(Io) on failure.
  void commit();

 private:
  std::string final_path_;
  std::string temp_path_;
  bool committed_ = false;
};

}  // namespace kiln::core
