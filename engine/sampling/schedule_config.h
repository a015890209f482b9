// A discrete noise schedule's settings as a checkpoint or its configuration states them.
// Free of torch (checkpoint detection reads these without building a schedule).
#pragma once

#include <cstdint>
#include <string>

namespace kiln::sampling {

enum class TimestepSpacing { Invalid = 0, Linspace, Leading, Trailing };

struct ScheduleConfig {
  double beta_start = 0.00085;
  double beta_end = 0.012;
  int64_t train_steps = 1000;
  TimestepSpacing spacing = TimestepSpacing::Leading;
  int64_t steps_offset = 1;
  // Rescale the betas to zero terminal SNR (Lin et al. 2024): alphabar's square root is
  // shifted and scaled so the first stays and the last is 0, which is then set to
  // 4.8973451890853435e-08 as ComfyUI does (sigma_max about 4518, not infinite).
  bool zero_terminal_snr = false;
};

// What the model's output is: the noise (epsilon) or v = alpha * noise - sigma * x0
// (Salimans & Ho 2022; SD 2.x 768 models).
enum class Prediction { Epsilon, V };

TimestepSpacing parseSpacing(const std::string& name);

}  // namespace kiln::sampling
