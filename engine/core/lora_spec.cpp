#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "kiln/error.h"
#include "kiln/lora.h"

namespace kiln {
namespace {

bool isNumber(const std::string& text, double* value = nullptr) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return false;
  if (value) *value = v;
  return true;
}

// "1" or "1,40%=0.3,80%=0"
bool isSchedule(const std::string& text) {
  std::size_t start = 0;
  for (bool first = true;; first = false) {
    const std::size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (first) {
      if (!isNumber(part)) return false;
    } else {
      const std::size_t eq = part.find('=');
      if (eq == std::string::npos || eq == 0 || part[eq - 1] != '%' ||
          !isNumber(part.substr(0, eq - 1)) || !isNumber(part.substr(eq + 1)))
        return false;
    }
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

double finite(double v, const std::string& whole) {
  if (!std::isfinite(v))
    throw Error(ErrorKind::InvalidArgument,
                "LoRA strength in '" + whole +
                    "' is not a finite number (use FILE[:STRENGTH[:TEXT_STRENGTH]])");
  return v;
}

// "40%=0.3,80%=0", checked; `whole` names it in errors.
std::vector<LoraKeyframe> keyframesOf(const std::string& tail, const std::string& whole) {
  std::vector<LoraKeyframe> keyframes;
  if (tail.empty()) return keyframes;
  if (!isSchedule("0," + tail))
    throw Error(ErrorKind::InvalidArgument,
                "LoRA strength schedule '" + tail + "' is not of the form 40%=0.3,80%=0");
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = tail.find(',', start);
    const std::string part =
        tail.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = part.find('=');
    LoraKeyframe k;
    k.at = finite(std::strtod(part.substr(0, eq - 1).c_str(), nullptr), whole) / 100.0;
    k.strength = finite(std::strtod(part.substr(eq + 1).c_str(), nullptr), whole);
    if (k.at < 0 || k.at > 1 || (!keyframes.empty() && k.at <= keyframes.back().at))
      throw Error(
          ErrorKind::InvalidArgument,
          "LoRA '" + whole + "': keyframes must lie between 0% and 100%, in increasing order");
    keyframes.push_back(k);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return keyframes;
}

// The shortest text that reads back as `v` exactly.
std::string exactNumber(double v) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(v);
}

}  // namespace

std::vector<LoraKeyframe> parseLoraKeyframes(const std::string& text) {
  return keyframesOf(text, text);
}

std::string formatLoraKeyframes(const std::vector<LoraKeyframe>& keyframes) {
  std::string text;
  for (const LoraKeyframe& k : keyframes)
    text += (text.empty() ? "" : ",") + exactNumber(k.at * 100.0) + "%=" + exactNumber(k.strength);
  return text;
}

const char* loraModeName(LoraMode mode) noexcept {
  switch (mode) {
    case LoraMode::Auto:
      return "auto";
    case LoraMode::Merge:
      return "merge";
    case LoraMode::Hook:
      return "hook";
    case LoraMode::Invalid:
      break;
  }
  return "invalid";
}

LoraMode parseLoraMode(const std::string& text) noexcept {
  for (LoraMode m : {LoraMode::Auto, LoraMode::Merge, LoraMode::Hook})
    if (text == loraModeName(m)) return m;
  return LoraMode::Invalid;
}

double LoraSpec::unetStrengthAt(double progress) const {
  double s = unet_strength;
  for (const auto& k : keyframes)
    if (progress + 1e-9 >= k.at) s = k.strength;
  return s;
}

LoraSpec parseLoraSpec(const std::string& text) {
  // Strengths are the trailing fields that read as strengths, so paths may hold colons.
  std::string path = text;
  std::vector<std::string> fields;
  for (int i = 0; i < 2; ++i) {
    const std::size_t colon = path.rfind(':');
    if (colon == std::string::npos) break;
    const std::string tail = path.substr(colon + 1);
    if (!isSchedule(tail)) break;
    fields.insert(fields.begin(), tail);
    path = path.substr(0, colon);
  }
  if (path.empty()) throw Error(ErrorKind::InvalidArgument, "LoRA '" + text + "' names no file");
  LoraSpec spec;
  spec.path = path;
  if (fields.size() > 1 && fields[1].find(',') != std::string::npos)
    throw Error(ErrorKind::InvalidArgument,
                "LoRA '" + text + "': only the denoiser's strength can change over the steps");
  if (!fields.empty()) {
    const std::size_t comma = fields[0].find(',');
    spec.unet_strength = spec.text_strength =
        finite(std::strtod(fields[0].substr(0, comma).c_str(), nullptr), text);
    if (comma != std::string::npos) spec.keyframes = keyframesOf(fields[0].substr(comma + 1), text);
  }
  if (fields.size() > 1) spec.text_strength = finite(std::strtod(fields[1].c_str(), nullptr), text);
  return spec;
}

std::string LoraReport::describe() const {
  std::string s = "applied " + std::to_string(applied) + " of " + std::to_string(modules) +
                  " modules of " + path;
  s += " (" + (format.empty() ? std::string() : format + ", ") +
       (mode == LoraMode::Hook ? "hooked" : "merged") + ")";
  if (!unmatched.empty()) {
    s += "; " + std::to_string(unmatched.size()) + " matched nothing:";
    for (std::size_t i = 0; i < unmatched.size() && i < 5; ++i)
      s += (i ? ", " : " ") + unmatched[i];
    if (unmatched.size() > 5) s += ", ...";
  }
  if (!unrecognised.empty())
    s += "; " + std::to_string(unrecognised.size()) +
         " tensors in no LoRA layout (first: " + unrecognised.front() + ")";
  return s;
}

}  // namespace kiln
