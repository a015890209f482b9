// libFuzzer target for the prompt-weight parser (A1111's emphasis syntax), which reads
// every prompt an artist types or a shared workflow carries. It must take any text without
// an exception; its runs keep the prompt's characters in order (the syntax removed, never
// text added), BREAK runs are empty, and every weight is a finite number.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "models/text/prompt_weights.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view prompt(reinterpret_cast<const char*>(data), size);
  const auto runs = kiln::models::parsePromptWeights(prompt);
  require(!runs.empty());
  std::size_t at = 0;  // where the next run's characters are looked for in the prompt
  for (const auto& run : runs) {
    require(std::isfinite(run.weight));
    if (run.is_break) {
      require(run.text.empty());
      continue;
    }
    for (const char c : run.text) {
      at = prompt.find(c, at);
      require(at != std::string_view::npos);
      ++at;
    }
  }
  return 0;
}
