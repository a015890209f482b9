// Prompt emphasis syntax as A1111 reads it: (text) multiplies the attention to text by 1.1,
// [text] by 1/1.1, (text:1.3) by 1.3; brackets nest and multiply; \( \) \[ \] \\ are the
// characters themselves; an unclosed bracket applies to the rest of the prompt; the word
// BREAK (upper case) starts a new 75-token window. No libtorch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::models {

struct WeightedText {
  std::string text;
  double weight = 1.0;
  bool is_break = false;  // a BREAK: text is empty
};

// The prompt as runs of text with their weights; neighbouring runs of the same weight are
// merged. An empty prompt gives one empty run of weight 1.
std::vector<WeightedText> parsePromptWeights(std::string_view prompt);

}  // namespace kiln::models
