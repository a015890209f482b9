// Reading a JSON configuration file (model configs and sidecars) that must hold an object.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

namespace kiln::core {

// Throws kiln::Error: FileNotFound when it cannot be opened, CorruptFile when it is not
// a JSON object.
nlohmann::json readJsonObject(const std::filesystem::path& path);

}  // namespace kiln::core
