// A PNG of training loss curves (one panel per phase, log-scale loss over steps).
#pragma once

#include <string>
#include <vector>

namespace kiln::starter {

struct LossCurve {
  std::string title;
  std::vector<double> loss;  // one value per step
};

// Draws the curves (raw values faint, a moving average bold) and writes a PNG.
// Returns false when the file could not be written.
bool writeLossPlot(const std::string& path, const std::vector<LossCurve>& curves);

}  // namespace kiln::starter
