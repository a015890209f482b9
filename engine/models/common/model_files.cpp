#include "models/common/model_files.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "core/json_file.h"

#include "kiln/error.h"

namespace kiln::models {

namespace fs = std::filesystem;

void refusePickle(const fs::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".ckpt" || ext == ".pt" || ext == ".pth" || ext == ".bin")
    throw Error(ErrorKind::UnsupportedModel,
                "'" + p.string() +
                    "' is a pickle file, which can run arbitrary code when loaded; "
                    "Kiln only loads .safetensors. Convert it once with a trusted "
                    "tool and open the .safetensors file.");
}

void checkModelPath(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw Error(ErrorKind::FileNotFound, "model '" + p.string() + "' does not exist");
  if (!fs::is_directory(p, ec)) refusePickle(p);
}

std::vector<fs::path> folderWeights(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".bin") refusePickle(e.path());
    throw Error(ErrorKind::FileNotFound, "no .safetensors weights in '" + dir.string() + "'");
  }
  return files;
}

fs::path componentFolder(const fs::path& path, const char* sub) {
  std::error_code ec;
  if (fs::is_regular_file(path / "config.json", ec)) return path;
  if (fs::is_directory(path / sub, ec)) return path / sub;
  throw Error(ErrorKind::UnsupportedModel, "'" + path.string() + "' is neither a diffusers " + sub +
                                               " folder (config.json) nor a pipeline folder with " +
                                               sub + "/");
}

std::string diffusersClass(const fs::path& config) {
  std::error_code ec;
  if (!fs::is_regular_file(config, ec)) return {};
  try {
    return core::readJsonObject(config).value("_class_name", "");
  } catch (const Error&) {
    return {};
  } catch (const nlohmann::json::exception&) {
    return {};
  }
}

std::string findModelFile(const std::vector<fs::path>& dirs,
                          const std::vector<std::string>& words) {
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".safetensors") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::string name = f.filename().string();
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (std::all_of(words.begin(), words.end(),
                      [&](const std::string& w) { return name.find(w) != std::string::npos; }))
        return f.string();
    }
  }
  return {};
}

}  // namespace kiln::models
