#include "core/cpu_features.h"

#include <fstream>
#include <sstream>

#include "kiln/render.h"

namespace kiln {
namespace core {

bool cpuinfoHasNativeBf16(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    if (key != "flags" && key != "Features") continue;
    std::istringstream words(line.substr(colon + 1));
    for (std::string w; words >> w;)
      if (w == "avx512_bf16" || w == "amx_bf16" || (key == "Features" && w == "bf16")) return true;
  }
  return false;
}

bool cpuHasNativeBf16() {
  static const bool native = [] {
    std::ifstream in("/proc/cpuinfo");
    if (!in) return false;
    std::ostringstream text;
    text << in.rdbuf();
    return cpuinfoHasNativeBf16(text.str());
  }();
  return native;
}

}  // namespace core

ComputeDType fastCpuDType() {
  return core::cpuHasNativeBf16() ? ComputeDType::BFloat16 : ComputeDType::Float32;
}

}  // namespace kiln
