// The video formats by name: in the engine (not the media library) so that jobs can tell a
// video output from an image output without FFmpeg.
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "kiln/video_io.h"

namespace kiln {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

VideoFormat videoFormatFor(const std::string& path) {
  if (path.empty()) return VideoFormat::Invalid;
  std::error_code ec;
  if (path.back() == '/' || std::filesystem::is_directory(path, ec))
    return VideoFormat::PngSequence;
  const std::string ext = lower(std::filesystem::path(path).extension().string());
  if (ext == ".mp4") return VideoFormat::Mp4;
  if (ext == ".webm") return VideoFormat::WebM;
  if (ext == ".mov") return VideoFormat::Mov;
  return VideoFormat::Invalid;
}

const char* videoFormatName(VideoFormat format) noexcept {
  switch (format) {
    case VideoFormat::Mp4:
      return "mp4";
    case VideoFormat::WebM:
      return "webm";
    case VideoFormat::Mov:
      return "mov";
    case VideoFormat::PngSequence:
      return "png";
    case VideoFormat::Invalid:
      break;
  }
  return "invalid";
}

}  // namespace kiln
