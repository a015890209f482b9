#include "kiln/image_io.h"

#include <OpenImageIO/imageio.h>

#include <filesystem>

#include "core/atomic_file.h"
#include "kiln/error.h"

namespace kiln {

void writeImage(const std::string& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0 || image.channels <= 0 ||
      image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * image.channels)
    throw Error(ErrorKind::InvalidArgument,
                "cannot write '" + path + "': the image is empty or malformed");
  core::AtomicFile file(path);
  auto out = OIIO::ImageOutput::create(path);
  if (!out)
    throw Error(ErrorKind::InvalidArgument, "cannot write '" + path +
                                                "': no image format for its extension (" +
                                                OIIO::geterror() + ")");
  OIIO::ImageSpec spec(image.width, image.height, image.channels, OIIO::TypeDesc::UINT8);
  for (const auto& [key, value] : image.text) spec.attribute(key, value);
  // OpenImageIO picks the format from the final name; open the temporary file with it.
  if (!out->open(file.temporaryPath(), spec))
    throw Error(ErrorKind::Io, "cannot write '" + path + "': " + out->geterror());
  // Float samples are quantised (rounded, clamped) by OpenImageIO's conversion.
  if (!out->write_image(OIIO::TypeDesc::FLOAT, image.pixels.data()) || !out->close())
    throw Error(ErrorKind::Io, "failed writing '" + path + "': " + out->geterror());
  file.commit();
}

namespace {

std::unique_ptr<OIIO::ImageInput> openImage(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::FileNotFound, "image '" + path + "' does not exist");
  auto in = OIIO::ImageInput::open(path);
  if (!in)
    throw Error(ErrorKind::CorruptFile, "cannot read image '" + path + "': " + OIIO::geterror());
  return in;
}

std::map<std::string, std::string> textOf(const OIIO::ImageSpec& spec) {
  std::map<std::string, std::string> text;
  for (const auto& attr : spec.extra_attribs)
    if (attr.type() == OIIO::TypeDesc::STRING) text[attr.name().string()] = attr.get_string();
  return text;
}

}  // namespace

std::map<std::string, std::string> readImageText(const std::string& path) {
  auto in = openImage(path);
  std::map<std::string, std::string> text = textOf(in->spec());
  in->close();
  return text;
}

Image readImage(const std::string& path) {
  auto in = openImage(path);
  const OIIO::ImageSpec& spec = in->spec();
  // Sizes from the header are checked before a byte is taken for the pixels: a crafted
  // header can claim gigapixels.
  if (spec.width <= 0 || spec.height <= 0 || spec.nchannels <= 0)
    throw Error(ErrorKind::CorruptFile, "image '" + path + "' has no pixels (" +
                                            std::to_string(spec.width) + "x" +
                                            std::to_string(spec.height) + ")");
  if (static_cast<int64_t>(spec.width) * spec.height > kMaxImagePixels || spec.nchannels > 4)
    throw Error(ErrorKind::InvalidArgument,
                "image '" + path + "' is " + std::to_string(spec.width) + "x" +
                    std::to_string(spec.height) + " with " + std::to_string(spec.nchannels) +
                    " channels; Kiln reads pictures of up to 16384x16384 with 1 to 4 channels");
  Image image;
  image.width = spec.width;
  image.height = spec.height;
  image.channels = spec.nchannels;
  image.pixels.resize(static_cast<std::size_t>(spec.width) * spec.height * spec.nchannels);
  if (!in->read_image(0, 0, 0, spec.nchannels, OIIO::TypeDesc::FLOAT, image.pixels.data()))
    throw Error(ErrorKind::CorruptFile, "cannot decode image '" + path + "': " + in->geterror());
  image.text = textOf(spec);
  in->close();
  return image;
}

}  // namespace kiln
