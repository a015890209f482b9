// Writing and reading videos through FFmpeg's libraries (part of kiln_media, not of the
// bare engine): MP4 (H.264), WebM (VP9), MOV (ProRes 422) and PNG sequences, with the
// generation parameters and the workflow in the container's metadata.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kiln/image.h"

namespace kiln {

enum class VideoFormat { Invalid = 0, Mp4, WebM, Mov, PngSequence };

// By the name: ".mp4", ".webm", ".mov", or a folder (a name ending in '/' or an existing
// folder) for a PNG sequence; Invalid otherwise.
VideoFormat videoFormatFor(const std::string& path);
const char* videoFormatName(VideoFormat format) noexcept;  // "mp4", "webm", "mov", "png"

struct VideoWriteOptions {
  double fps = 16.0;
  // Constant quality for H.264 and VP9 (lower is better; -1: 19 for H.264, 31 for VP9).
  // ProRes and PNG ignore it.
  int crf = -1;
  // Stored as container tags (MP4/MOV/WebM), and as text chunks of each PNG frame.
  std::map<std::string, std::string> metadata;
  // After each frame is encoded, (frames done, frames in all); it may throw to cancel.
  std::function<void(int, int)> progress;
};

// Writes 8-bit RGB frames (all of one even size; float samples in [0, 1]) as a video.
// Nothing partial is left: a file is written under a temporary name and renamed, a PNG
// sequence is written into a temporary folder that is renamed to `path` (which must not
// hold files already). A cancel (progress throwing) or failure removes what was written.
// Throws kiln::Error(InvalidArgument / Io).
void writeVideo(const std::string& path, const std::vector<Image>& frames,
                const VideoWriteOptions& options);

struct Video {
  int width = 0;
  int height = 0;
  double fps = 0;
  std::string codec;  // FFmpeg's decoder name ("h264", "vp9", "prores"; "png" for a sequence)
  std::string pixel_format;                     // FFmpeg's name ("yuv420p", ...)
  std::vector<Image> frames;                    // RGB, float samples in [0, 1]
  std::map<std::string, std::string> metadata;  // keys in lower case
};

// The most bytes of decoded frames readVideo holds (float RGB).
inline constexpr int64_t kMaxVideoReadBytes = int64_t{8} << 30;

// Reads a video file's frames (up to max_frames; -1: all) and metadata, or a PNG sequence
// folder. Throws kiln::Error(FileNotFound / CorruptFile; InvalidArgument when the frames
// would pass kMaxVideoReadBytes).
Video readVideo(const std::string& path, int max_frames = -1);

}  // namespace kiln
