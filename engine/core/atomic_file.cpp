#include "core/atomic_file.h"

#include <fcntl.h>
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

namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw Error(ErrorKind::Io, "cannot write '" + path + "' (" + what + "): " + std::strerror(err));
}

// fsync of a file or folder; a failed close is a failure too (NFS reports late errors there).
void flushToDisk(const std::string& path, const std::string& reported_as, bool folder) {
  const int fd = ::open(path.c_str(), (folder ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) fail(reported_as, folder ? "opening its folder" : "opening it", errno);
  // Some file systems cannot sync folders (EINVAL): nothing is lost by going on there.
  if (::fsync(fd) != 0 && !(folder && (errno == EINVAL || errno == EROFS))) {
    const int err = errno;
    ::close(fd);
    fail(reported_as, folder ? "flushing its folder" : "flushing it", err);
  }
  if (::close(fd) != 0) fail(reported_as, "closing it", errno);
}

std::string folderOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

void AtomicFile::commit() {
  flushToDisk(temp_path_, final_path_, false);
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0)
    fail(final_path_, "renaming it into place", errno);
  committed_ = true;
  flushToDisk(folderOf(final_path_), final_path_, true);
}

bool AtomicFile::commitIfAbsent() {
  flushToDisk(temp_path_, final_path_, false);
  if (::link(temp_path_.c_str(), final_path_.c_str()) != 0) {
    if (errno == EEXIST) return false;
    fail(final_path_, "linking it into place", errno);
  }
  ::unlink(temp_path_.c_str());
  committed_ = true;
  flushToDisk(folderOf(final_path_), final_path_, true);
  return true;
}

}  // namespace kiln::core
