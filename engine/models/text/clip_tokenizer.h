// The CLIP byte-level BPE tokenizer (OpenAI's simple_tokenizer, as HuggingFace's
// CLIPTokenizer runs it without ftfy): turns a prompt into the token ids CLIP text encoders
// take. Std only, so the graph and the CLI can use it without torch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln::models {

// Immutable after construction, so one instance can serve several threads.
//
// Text handling follows HuggingFace's BasicTokenizer path: control characters dropped,
// whitespace collapsed, CJK ideographs split apart, lowercase, then CLIP's word regex.
// Known differences from HuggingFace, all outside what prompts normally contain: no NFC
// normalisation (decomposed accents stay separate marks), and unassigned code points are
// kept instead of dropped. Invalid UTF-8 bytes are dropped.
class ClipTokenizer {
 public:
  static constexpr int64_t kBos = 49406;  // <|startoftext|>
  static constexpr int64_t kEos = 49407;  // <|endoftext|>

  // Reads OpenAI's bpe_simple_vocab_16e6.txt.gz (first line is a header; merges are lines
  // 1 .. 49152-256-2). Throws kiln::Error (FileNotFound, CorruptFile) naming the file.
  static ClipTokenizer fromVocabFile(const std::string& gz_path);

  // Token ids for the text, without BOS/EOS and untruncated.
  std::vector<int64_t> encode(std::string_view text) const;

  // BOS + at most max_length-2 tokens + EOS, then pad_id up to max_length (SD1 pads with
  // 49407, SDXL's second tokenizer with 0). Throws kiln::Error (InvalidArgument) when
  // max_length < 2.
  std::vector<int64_t> encodePadded(std::string_view text, int64_t pad_id,
                                    int max_length = 77) const;

 private:
  ClipTokenizer() = default;

  // Appends the ids of one pre-tokenized word (UTF-8) to `ids`.
  void appendWordIds(std::string_view word, std::vector<int64_t>& ids) const;
  // Appends the ids of text that holds no literal special token.
  void appendPieceIds(std::string_view piece, std::vector<int64_t>& ids) const;

  // Rank of each merge, keyed by (left id << 32 | right id). The merged symbol's id is
  // 512 + rank: the vocabulary lists the 256 byte symbols, the same with '</w>', then
  // the merges in rank order.
  std::unordered_map<uint64_t, int32_t> merge_ranks_;
};

}  // namespace kiln::models
