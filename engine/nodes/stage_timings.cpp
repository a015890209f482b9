#include "nodes/stage_timings.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/atomic_file.h"

namespace kiln::nodes {
namespace {

// Before anything is measured: rough seconds per unit on a desktop CPU at 512x512.
double builtInGuess(StageKind kind) {
  switch (kind) {
    case StageKind::LoadModel:
      return 0.005;  // per tensor
    case StageKind::ApplyLora:
      return 0.002;  // per key
    case StageKind::EncodePrompt:
      return 0.2;  // per text encoder
    case StageKind::EncodeImage:
      return 3.0;  // per tile pass
    case StageKind::Denoise:
      return 2.0;  // per step
    case StageKind::Decode:
      return 5.0;  // per tile pass
    case StageKind::EncodeVideo:
      return 0.05;  // per frame
    case StageKind::Save:
      return 0.05;  // per file
    case StageKind::Invalid:
      break;
  }
  return 0.1;
}

bool growsWithPixels(StageKind kind) {
  return kind == StageKind::Denoise || kind == StageKind::Decode ||
         kind == StageKind::EncodeImage || kind == StageKind::Save;
}

StageKind kindFromName(const std::string& name) {
  for (StageKind k :
       {StageKind::LoadModel, StageKind::ApplyLora, StageKind::EncodePrompt, StageKind::EncodeImage,
        StageKind::Denoise, StageKind::Decode, StageKind::EncodeVideo, StageKind::Save})
    if (name == stageKindName(k)) return k;
  return StageKind::Invalid;
}

// "denoise|sd1|262144|bf16" -> key
bool parseKey(const std::string& text, TimingKey& key) {
  std::stringstream ss(text);
  std::string kind, family, pixels, dtype;
  if (!std::getline(ss, kind, '|') || !std::getline(ss, family, '|') ||
      !std::getline(ss, pixels, '|') || !std::getline(ss, dtype))
    return false;
  key.kind = kindFromName(kind);
  key.family = family;
  key.dtype = dtype;
  try {
    key.pixels = std::stoll(pixels);
  } catch (const std::exception&) {
    return false;
  }
  return key.kind != StageKind::Invalid && key.pixels >= 0;
}

}  // namespace

std::string StageTimings::keyString(const TimingKey& key) {
  return std::string(stageKindName(key.kind)) + "|" + key.family + "|" +
         std::to_string(key.pixels) + "|" + key.dtype;
}

StageTimings StageTimings::load(const std::string& path, std::string* problem) {
  StageTimings t;
  if (path.empty() || !std::filesystem::exists(path)) return t;
  std::ifstream in(path);
  const nlohmann::json root = nlohmann::json::parse(in, nullptr, false);
  if (root.is_discarded() || !root.is_object() || !root.contains("stages") ||
      !root["stages"].is_object()) {
    if (problem) *problem = "ignoring the stage timings in '" + path + "': not a Kiln timings file";
    return t;
  }
  for (const auto& [name, value] : root["stages"].items()) {
    TimingKey key;
    if (!parseKey(name, key) || !value.is_object() || !value.contains("seconds_per_unit") ||
        !value["seconds_per_unit"].is_number())
      continue;
    const double s = value["seconds_per_unit"].get<double>();
    if (!std::isfinite(s) || s < 0) continue;
    t.entries_[name] = {s, value.value("runs", int64_t{1})};
  }
  return t;
}

void StageTimings::save(const std::string& path) const {
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& [name, e] : entries_)
    stages[name] = {{"seconds_per_unit", e.seconds_per_unit}, {"runs", e.runs}};
  const nlohmann::json root = {{"version", 1}, {"stages", stages}};
  core::AtomicFile file(path);
  {
    std::ofstream out(file.temporaryPath());
    out << root.dump(1) << "\n";
    if (!out.flush())
      throw Error(ErrorKind::Io, "cannot write the stage timings to '" + path + "'");
  }
  file.commit();
}

bool StageTimings::measured(const TimingKey& key) const {
  return entries_.count(keyString(key)) > 0;
}

bool StageTimings::known(const TimingKey& key) const {
  if (measured(key)) return true;
  for (const auto& [name, e] : entries_) {
    TimingKey other;
    if (parseKey(name, other) && other.kind == key.kind && other.family == key.family &&
        other.dtype == key.dtype)
      return true;
  }
  return false;
}

double StageTimings::secondsPerUnit(const TimingKey& key) const {
  if (const auto it = entries_.find(keyString(key)); it != entries_.end())
    return it->second.seconds_per_unit;
  // The same stage of the same family at the nearest size.
  double best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& [name, e] : entries_) {
    TimingKey other;
    if (!parseKey(name, other) || other.kind != key.kind || other.family != key.family ||
        other.dtype != key.dtype)
      continue;
    const double distance =
        std::abs(std::log(static_cast<double>(std::max<int64_t>(1, other.pixels)) /
                          static_cast<double>(std::max<int64_t>(1, key.pixels))));
    if (distance < best_distance) {
      best_distance = distance;
      best = growsWithPixels(key.kind) && other.pixels > 0
                 ? e.seconds_per_unit * static_cast<double>(key.pixels) /
                       static_cast<double>(other.pixels)
                 : e.seconds_per_unit;
    }
  }
  if (best >= 0) return best;
  const double guess = builtInGuess(key.kind);
  return growsWithPixels(key.kind) && key.pixels > 0
             ? guess * static_cast<double>(key.pixels) / (512.0 * 512.0)
             : guess;
}

void StageTimings::record(const TimingKey& key, int64_t units, double seconds) {
  if (units <= 0 || !std::isfinite(seconds) || seconds < 0) return;
  const double per_unit = seconds / static_cast<double>(units);
  Entry& e = entries_[keyString(key)];
  e.seconds_per_unit = e.runs == 0 ? per_unit : 0.6 * e.seconds_per_unit + 0.4 * per_unit;
  ++e.runs;
}

}  // namespace kiln::nodes
