// The T5 / UMT5 tokenizer: a sentencepiece model (spiece.model, or HuggingFace's
// tokenizer.json turned back into one) read from the model's folder through
// libsentencepiece, with T5's conventions (the end token appended, padding
// after it, truncation that keeps the end token) and Wan's prompt clean-up (whitespace
// runs collapsed, ends trimmed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::models {

class T5Tokenizer {
 public:
  // Throws kiln::Error: FileNotFound, CorruptFile (not a sentencepiece model),
  // UnsupportedModel (Kiln's sentencepiece module missing).
  static T5Tokenizer open(const std::string& model_path);
  ~T5Tokenizer();
  T5Tokenizer(T5Tokenizer&&) noexcept;
  T5Tokenizer& operator=(T5Tokenizer&&) noexcept;

  // `length` ids: the cleaned text's pieces (at most length - 1), the end token, then
  // padding. `tokens` (when given) receives how many ids are not padding.
  std::vector<int64_t> encode(const std::string& text, int64_t length,
                              int64_t* tokens = nullptr) const;
  int64_t vocabSize() const;
  int64_t eosId() const;
  int64_t padId() const;
  const std::string& path() const noexcept { return path_; }

  // Whitespace runs to one space, ends trimmed (as Wan's prompt_clean does).
  static std::string clean(const std::string& text);

 private:
  T5Tokenizer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

// Where a text encoder's tokenizer lives: for a folder, tokenizer/spiece.model,
// spiece.model, tokenizer.model or a tokenizer.json in it (or in its parent, for a
// text_encoder/ folder); for a file, "<stem>.spiece.model", "<stem>.tokenizer.json",
// spiece.model, tokenizer.model or tokenizer.json beside it, or in a tokenizer/ folder
// beside it. Empty when there is none.
std::string findT5TokenizerModel(const std::string& text_encoder_path);

// Loads Kiln's sentencepiece module (once per process) and returns the file it came
// from; throws kiln::Error(FileNotFound) saying why it could not be loaded.
std::string sentencepieceModulePath();

}  // namespace kiln::models
