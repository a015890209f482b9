#include "kiln/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kiln {

std::optional<int64_t> parseBytes(std::string_view text) {
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  s = s.substr(start);
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.'))
    return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  std::string unit(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(0, 1);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else {
    static const char kPrefixes[] = "KMGT";
    const std::size_t p = std::string_view(kPrefixes).find(unit[0]);
    if (p == std::string_view::npos) return std::nullopt;
    const std::string rest = unit.substr(1);
    const bool decimal = rest == "B";
    if (!(rest.empty() || rest == "IB" || decimal)) return std::nullopt;
    scale = std::pow(decimal ? 1000.0 : 1024.0, static_cast<double>(p + 1));
  }
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes < 0 || bytes > 4.6e18) return std::nullopt;
  return static_cast<int64_t>(std::llround(bytes));
}

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string formatBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  const bool negative = bytes < 0;
  double v = std::abs(static_cast<double>(bytes));
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%s%lld B", negative ? "-" : "", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%s%.*f %s", negative ? "-" : "", v < 10 ? 2 : (v < 100 ? 1 : 0),
                  v, kUnits[u]);
  return buf;
}

std::string formatProgressAmount(int64_t done, int64_t total, const std::string& unit) {
  if (unit != "bytes")
    return std::to_string(done) + "/" + std::to_string(total) + (unit.empty() ? "" : " " + unit);
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  double scale = 1;
  int u = 0;
  while (static_cast<double>(total) / scale >= 1000.0 && u < 4) {
    scale *= 1000.0;
    ++u;
  }
  const double t = static_cast<double>(total) / scale;
  const int decimals = u == 0 ? 0 : (t < 10 ? 1 : 0);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f/%.*f %s", decimals, static_cast<double>(done) / scale,
                decimals, t, kUnits[u]);
  return buf;
}

}  // namespace kiln
