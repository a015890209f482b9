#include "pipelines/registry.h"

#include <filesystem>

#include "pipelines/flux/flux_family.h"
#include "pipelines/sd/sd_family.h"
#include "pipelines/wan/wan_family.h"

namespace kiln::pipelines {

const std::vector<Family>& families() {
  // One line per family; SD last, as it takes whatever the others do not claim.
  static const std::vector<Family> all{wanFamily(), fluxFamily(), sdFamily()};
  return all;
}

const Family& familyOf(const std::string& path) {
  for (const Family& f : families())
    if (f.detect(path)) return f;
  return families().back();
}

std::string modelKey(const std::string& path, at::ScalarType dtype) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  const std::string name = ec ? path : p.string();
  std::string key = name + "|" + at::toString(dtype);
  if (std::filesystem::is_regular_file(p, ec)) {
    key += "|" + std::to_string(std::filesystem::file_size(p, ec));
    key += "|" + std::to_string(std::filesystem::last_write_time(p, ec).time_since_epoch().count());
  }
  return key;
}

}  // namespace kiln::pipelines
