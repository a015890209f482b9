// Measured stage durations, so that the overall fraction and the ETA of a job come from
// how long each stage took on this machine before. Keyed by stage kind, model family,
// picture size and compute dtype; persisted as JSON between runs.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "kiln/engine.h"

namespace kiln::nodes {

struct TimingKey {
  StageKind kind = StageKind::Invalid;
  std::string family;  // "sd1", "sd2", "sdxl", "sdxl_refiner"
  int64_t pixels = 0;  // width * height of the picture
  std::string dtype;   // "fp32", "bf16"
};

class StageTimings {
 public:
  // Reads `path` if it exists. A missing file starts empty; an unreadable or malformed
  // one too, and `problem` (when given) says why.
  static StageTimings load(const std::string& path, std::string* problem = nullptr);
  // Writes atomically. Throws kiln::Error(Io).
  void save(const std::string& path) const;

  // Expected seconds for one unit of the stage: the measurement for this key; else the
  // same kind, family and dtype at the nearest size, scaled by the pixel count for stages
  // whose work grows with it; else a built-in guess.
  double secondsPerUnit(const TimingKey& key) const;
  // Folds in a measurement (a moving average that follows a machine that changes).
  void record(const TimingKey& key, int64_t units, double seconds);
  bool measured(const TimingKey& key) const;
  // Whether secondsPerUnit(key) comes from measurements (of this key, or of its kind,
  // family and dtype at another size) rather than the built-in guess.
  bool known(const TimingKey& key) const;

 private:
  struct Entry {
    double seconds_per_unit = 0;
    int64_t runs = 0;
  };
  static std::string keyString(const TimingKey& key);
  std::map<std::string, Entry> entries_;
};

}  // namespace kiln::nodes
