#include <cmath>
#include <cstdlib>

#include "kiln/error.h"
#include "kiln/lora.h"

namespace kiln {
namespace {

double parseStrength(const std::string& text, const std::string& whole) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw Error(ErrorKind::InvalidArgument,
                "LoRA strength '" + text + "' in '" + whole + "' is not a number (use FILE[:STRENGTH[:TEXT_STRENGTH]])");
  return v;
}

}  // namespace

LoraSpec parseLoraSpec(const std::string& text) {
  // Strengths are the trailing fields that parse as numbers, so paths may hold colons.
  LoraSpec spec;
  std::string path = text;
  std::vector<std::string> numbers;
  for (int i = 0; i < 2; ++i) {
    const std::size_t colon = path.rfind(':');
    if (colon == std::string::npos) break;
    const std::string tail = path.substr(colon + 1);
    char* end = nullptr;
    (void)std::strtod(tail.c_str(), &end);
    if (tail.empty() || end != tail.c_str() + tail.size()) break;
    numbers.insert(numbers.begin(), tail);
    path = path.substr(0, colon);
  }
  if (path.empty()) throw Error(ErrorKind::InvalidArgument, "LoRA '" + text + "' names no file");
  spec.path = path;
  if (!numbers.empty()) spec.unet_strength = spec.text_strength = parseStrength(numbers[0], text);
  if (numbers.size() > 1) spec.text_strength = parseStrength(numbers[1], text);
  return spec;
}

std::string LoraReport::describe() const {
  std::string s = "applied " + std::to_string(applied) + " of " + std::to_string(modules) + " modules of " + path;
  if (!format.empty()) s += " (" + format + ")";
  if (!unmatched.empty()) {
    s += "; " + std::to_string(unmatched.size()) + " matched nothing:";
    for (std::size_t i = 0; i < unmatched.size() && i < 5; ++i) s += (i ? ", " : " ") + unmatched[i];
    if (unmatched.size() > 5) s += ", ...";
  }
  if (!unrecognised.empty())
    s += "; " + std::to_string(unrecognised.size()) + " tensors in no LoRA layout (first: " + unrecognised.front() + ")";
  return s;
}

}  // namespace kiln
