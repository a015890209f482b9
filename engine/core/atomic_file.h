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
  // Flushes the temporary file to the disk, renames it over the final path and flushes
  // the folder, so a crash leaves the old file or the new one, never a torn or empty one.
  // Throws kiln::Error(Io) on failure (a failed flush or close included).
  void commit();
  // The same, but only where the final path does not exist yet (link, not rename: two
  // writers never overwrite each other). False, and the temporary file kept for another
  // name (retarget), when something is there already.
  bool commitIfAbsent();
  // Gives the content another final name (the temporary file stays where it is).
  void retarget(std::string final_path) { final_path_ = std::move(final_path); }

 private:
  std::string final_path_;
  std::string temp_path_;
  bool committed_ = false;
};

}  // namespace kiln::core
