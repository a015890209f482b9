#include "models/text/prompt_weights.h"

#include <cctype>
#include <cstdlib>

namespace kiln::models {

namespace {

// A ":" followed by a number and ")" (spaces allowed around the number): its length and
// the number, or 0 when `s` does not start with one.
std::size_t weightClose(std::string_view s, double& weight) {
  std::size_t i = 1;  // past ':'
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  const std::size_t start = i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == start || (i == start + 1 && (s[start] == '+' || s[start] == '-'))) return 0;
  const std::string number(s.substr(start, i - start));
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  if (i >= s.size() || s[i] != ')') return 0;
  char* end = nullptr;
  weight = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return 0;  // "1.2.3" is not a number
  return i + 1;
}

// Appends plain text, splitting it at the word BREAK (A1111's \s*\bBREAK\b\s*).
void appendText(std::vector<WeightedText>& out, std::string_view text) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::size_t from = 0;
  for (std::size_t at = text.find("BREAK"); at != std::string_view::npos;
       at = text.find("BREAK", at + 1)) {
    const bool starts = at == 0 || !word(text[at - 1]);
    const bool ends = at + 5 >= text.size() || !word(text[at + 5]);
    if (!starts || !ends) continue;
    std::size_t left = at, right = at + 5;
    while (left > from && std::isspace(static_cast<unsigned char>(text[left - 1]))) --left;
    while (right < text.size() && std::isspace(static_cast<unsigned char>(text[right]))) ++right;
    out.push_back({std::string(text.substr(from, left - from)), 1.0, false});
    out.push_back({std::string(), -1.0, true});
    from = right;
    at = right - 1;
  }
  out.push_back({std::string(text.substr(from)), 1.0, false});
}

}  // namespace

std::vector<WeightedText> parsePromptWeights(std::string_view prompt) {
  std::vector<WeightedText> res;
  std::vector<std::size_t> round, square;
  const auto multiply = [&res](std::size_t from, double by) {
    for (std::size_t p = from; p < res.size(); ++p)
      if (!res[p].is_break) res[p].weight *= by;
  };
  constexpr double kRound = 1.1, kSquare = 1 / 1.1;
  std::size_t i = 0;
  while (i < prompt.size()) {
    const char c = prompt[i];
    if (c == '\\') {
      // \( \) \[ \] \\ are the characters; a lone backslash is itself.
      if (i + 1 < prompt.size() &&
          std::string_view("()[]\\").find(prompt[i + 1]) != std::string_view::npos) {
        res.push_back({std::string(1, prompt[i + 1]), 1.0, false});
        i += 2;
      } else {
        res.push_back({"\\", 1.0, false});
        i += 1;
      }
    } else if (c == '(') {
      round.push_back(res.size());
      ++i;
    } else if (c == '[') {
      square.push_back(res.size());
      ++i;
    } else if (c == ':') {
      double weight = 1;
      const std::size_t n = weightClose(prompt.substr(i), weight);
      if (n > 0 && !round.empty()) {
        multiply(round.back(), weight);
        round.pop_back();
        i += n;
      } else {
        // A colon that closes nothing is text (with the number and bracket if it had them).
        const std::size_t len = n > 0 ? n : 1;
        appendText(res, prompt.substr(i, len));
        i += len;
      }
    } else if (c == ')' && !round.empty()) {
      multiply(round.back(), kRound);
      round.pop_back();
      ++i;
    } else if (c == ']' && !square.empty()) {
      multiply(square.back(), kSquare);
      square.pop_back();
      ++i;
    } else if (c == ')' || c == ']') {
      appendText(res, prompt.substr(i, 1));
      ++i;
    } else {
      std::size_t end = i;
      while (end < prompt.size() &&
             std::string_view("\\()[]:").find(prompt[end]) == std::string_view::npos)
        ++end;
      appendText(res, prompt.substr(i, end - i));
      i = end;
    }
  }
  for (std::size_t p : round) multiply(p, kRound);
  for (std::size_t p : square) multiply(p, kSquare);
  if (res.empty()) res.push_back({std::string(), 1.0, false});
  // Merge neighbours of the same weight (never across a BREAK).
  std::vector<WeightedText> merged;
  for (auto& r : res) {
    if (!merged.empty() && !r.is_break && !merged.back().is_break &&
        merged.back().weight == r.weight)
      merged.back().text += r.text;
    else
      merged.push_back(std::move(r));
  }
  return merged;
}

}  // namespace kiln::models
