// An image in host memory: interleaved float samples in [0, 1], row-major, top row first.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<float> pixels;  // width * height * channels
  // Text metadata carried into files that support it (PNG tEXt chunks).
  std::map<std::string, std::string> text;

  bool empty() const noexcept { return pixels.empty(); }
};

}  // namespace kiln
