#include "pipelines/common/image_prep.h"

#include <cmath>

#include "kiln/error.h"
#include "kiln/render.h"

namespace kiln::pipelines {

void checkImage(const Image& image, const std::string& what) {
  if (image.width <= 0 || image.height <= 0 || image.channels <= 0)
    throw Error(ErrorKind::InvalidArgument, what + " is empty (" + std::to_string(image.width) +
                                                "x" + std::to_string(image.height) + " pixels)");
  if (image.channels > 4)
    throw Error(ErrorKind::InvalidArgument,
                what + " has " + std::to_string(image.channels) +
                    " channels; grey, grey with alpha, RGB or RGBA images work");
  if (image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * image.channels)
    throw Error(ErrorKind::InvalidArgument,
                what + " is malformed: its pixel count does not match its size");
}

at::Tensor imageTensor(const Image& image) {
  // host: a picture's pixels, read where they are; the encoder's caller moves them.
  const at::Tensor hwc = at::from_blob(const_cast<float*>(image.pixels.data()),
                                       {image.height, image.width, image.channels},
                                       at::TensorOptions().dtype(at::kFloat));
  return hwc.permute({2, 0, 1}).unsqueeze(0).contiguous().nan_to_num(0.0).clamp(0.0, 1.0);
}

at::Tensor rgbOf(const at::Tensor& image) {
  const int64_t c = image.size(1);
  if (c >= 3) return image.narrow(1, 0, 3);
  return image.narrow(1, 0, 1).expand({image.size(0), 3, image.size(2), image.size(3)});
}

at::Tensor fitImage(const at::Tensor& image, int64_t height, int64_t width, bool* cropped) {
  const int64_t h = image.size(2), w = image.size(3);
  if (cropped) *cropped = false;
  if (h == height && w == width) return image;
  const double scale = std::max(static_cast<double>(height) / static_cast<double>(h),
                                static_cast<double>(width) / static_cast<double>(w));
  const int64_t sh = std::max<int64_t>(height, std::llround(static_cast<double>(h) * scale));
  const int64_t sw = std::max<int64_t>(width, std::llround(static_cast<double>(w) * scale));
  at::Tensor scaled = image;
  if (sh != h || sw != w)
    scaled = scale < 1.0 ? at::_upsample_bilinear2d_aa(image, {sh, sw}, false)
                         : at::upsample_bilinear2d(image, {sh, sw}, false);
  if (cropped) *cropped = sh != height || sw != width;
  return scaled.narrow(2, (sh - height) / 2, height)
      .narrow(3, (sw - width) / 2, width)
      .clamp(0.0, 1.0)
      .contiguous();
}

at::Tensor maskTensor(const Image& mask) {
  const at::Tensor t = imageTensor(mask);
  const int64_t c = t.size(1);
  at::Tensor value;
  if (c >= 3)
    value = 0.2126 * t.narrow(1, 0, 1) + 0.7152 * t.narrow(1, 1, 1) + 0.0722 * t.narrow(1, 2, 1);
  else
    value = t.narrow(1, 0, 1);
  if (c == 2 || c == 4) value = value * t.narrow(1, c - 1, 1);
  return value.clamp(0.0, 1.0).contiguous();
}

at::Tensor featherMask(const at::Tensor& mask, int64_t pixels) {
  if (pixels <= 0) return mask;
  const double sigma = static_cast<double>(pixels) / 2.0;
  const int64_t radius = pixels;
  const at::Tensor x = at::arange(-radius, radius + 1, mask.options().dtype(at::kFloat));
  at::Tensor k = at::exp(-(x * x) / static_cast<float>(2.0 * sigma * sigma));
  k = k / k.sum();
  // Separable blur with edge replication, so the border does not fade.
  at::Tensor m = at::replication_pad2d(mask, {radius, radius, radius, radius});
  m = at::conv2d(m, k.view({1, 1, 1, -1}));
  m = at::conv2d(m, k.view({1, 1, -1, 1}));
  return m.clamp(0.0, 1.0).contiguous();
}

at::Tensor latentMask(const at::Tensor& mask, int64_t downscale) {
  return at::avg_pool2d(mask, {downscale, downscale}, {downscale, downscale});
}

}  // namespace kiln::pipelines

namespace kiln {

Image maskFromAlpha(const Image& image) {
  pipelines::checkImage(image, "the image");
  if (image.channels != 2 && image.channels != 4)
    throw Error(ErrorKind::InvalidArgument, "the image has no alpha channel to take a mask from");
  Image mask;
  mask.width = image.width;
  mask.height = image.height;
  mask.channels = 1;
  mask.pixels.resize(static_cast<std::size_t>(image.width) * image.height);
  const auto c = static_cast<std::size_t>(image.channels);
  for (std::size_t i = 0; i < mask.pixels.size(); ++i)
    mask.pixels[i] = 1.0f - std::clamp(image.pixels[i * c + c - 1], 0.0f, 1.0f);
  return mask;
}

}  // namespace kiln
