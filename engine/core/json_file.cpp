#include "core/json_file.h"

#include <fstream>

#include "kiln/error.h"

namespace kiln::core {

nlohmann::json readJsonObject(const std::filesystem::path& path) {
  std::ifstream f(path);
  if (!f) throw Error(ErrorKind::FileNotFound, "cannot open '" + path.string() + "'");
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(ErrorKind::CorruptFile, "'" + path.string() + "' is not a JSON object");
  return j;
}

}  // namespace kiln::core
