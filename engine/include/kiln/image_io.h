// Reading and writing images through OpenImageIO (part of kiln_media, not of the bare
// engine, so engine-only builds do without OpenImageIO).
#pragma once

#include <string>

#include "kiln/image.h"

namespace kiln {

// Writes an 8-bit image (PNG, JPEG, TIFF, WebP ... by extension) with its text metadata.
// Atomic: written to a temporary name and renamed, so no half-written file is left.
// Throws kiln::Error(Io / InvalidArgument).
void writeImage(const std::string& path, const Image& image);

// Reads an image as float samples in [0, 1] with its string attributes (PNG text chunks
// among them). Throws kiln::Error(FileNotFound / CorruptFile).
Image readImage(const std::string& path);

}  // namespace kiln
