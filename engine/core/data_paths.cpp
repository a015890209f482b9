#include "core/data_paths.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "kiln/error.h"

namespace kiln::core {

std::filesystem::path executableInstallRoot() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path().parent_path();
}

std::string findDataFile(const std::string& name) {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("KILN_DATA_DIR"); env && *env) dirs.emplace_back(env);
  // Relative to the executable first, so an install works wherever it was unpacked.
  if (const auto root = executableInstallRoot(); !root.empty())
    dirs.push_back(root / "share" / "kiln");
  dirs.emplace_back(KILN_INSTALL_DATA_DIR);
  dirs.emplace_back(KILN_SOURCE_DATA_DIR);
  std::string looked;
  for (const auto& dir : dirs) {
    const auto candidate = dir / name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
    looked += "\n  " + candidate.string();
  }
  throw Error(ErrorKind::FileNotFound,
              "Kiln's data file '" + name + "' is missing; looked in:" + looked +
                  "\nReinstall Kiln or set KILN_DATA_DIR to the folder that holds it.");
}

}  // namespace kiln::core
