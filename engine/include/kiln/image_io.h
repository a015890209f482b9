// Reading and writing images through OpenImageIO (part of kiln_media, not of the bare
// engine, so engine-only builds do without OpenImageIO).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "kiln/image.h"

namespace kiln {

// Writes an 8-bit image (PNG, JPEG, TIFF, WebP ... by extension) with its text metadata.
// Atomic: written to a temporary name and renamed, so no half-written file is left.
// Throws kiln::Error(Io / InvalidArgument).
void writeImage(const std::string& path, const Image& image);

// The most pixels readImage decodes (a 16384 x 16384 picture): beyond it a picture is
// refused from its header, before any memory is taken for it.
inline constexpr int64_t kMaxImagePixels = int64_t{16384} * 16384;

// Reads an image as float samples in [0, 1] with its string attributes (PNG text chunks
// among them). Throws kiln::Error(FileNotFound / CorruptFile, or InvalidArgument for a
// picture larger than kMaxImagePixels or of more than 4 channels).
Image readImage(const std::string& path);

// Only the string attributes (PNG text chunks: "parameters", "prompt", "workflow",
// "kiln_workflow"), read from the header without decoding a pixel. Throws like readImage.
std::map<std::string, std::string> readImageText(const std::string& path);

}  // namespace kiln
