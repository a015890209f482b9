#include "core/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "kiln/error.h"

namespace kiln::core {
namespace {

std::string makeTemporaryName(const std::string& final_path) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path p(final_path);
  // Keep the extension last so format-sniffing writers (OpenImageIO) pick the right one.
  std::string name = "." + p.stem().string() + ".tmp" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1)) + p.extension().string();
  return (p.parent_path() / name).string();
}

}  // namespace

AtomicFile::AtomicFile(std::string final_path)
    : final_path_(std::move(final_path)), temp_path_(makeTemporaryName(final_path_)) {}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(temp_path_.c_str());
}

void AtomicFile::commit() {
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    const int err = errno;
    std::remove(temp_path_.c_str());
    throw Error(ErrorKind::Io, "cannot write '" + final_path_ + "': " + std::strerror(err));
  }
  committed_ = true;
}

}  // namespace kiln::core
