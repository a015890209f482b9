// A T5 tokenizer shipped as HuggingFace's tokenizer.json (a Unigram model with its
// normalizer's precompiled character map) turned into the sentencepiece model it was
// made from, so one tokenizer reads both: the pieces and scores, <unk> as the unknown
// piece, the special tokens (<pad>, </s>, <extra_id_N>) as control pieces, and the
// normalizer (the precompiled map, a leading space, whitespace runs collapsed).
#pragma once

#include <string>

namespace kiln::models {

// The serialized sentencepiece ModelProto for `tokenizer_json` (the file's path). Throws
// kiln::Error: FileNotFound, CorruptFile (not JSON, or no vocabulary), UnsupportedModel (a
// model other than Unigram).
std::string sentencepieceFromTokenizerJson(const std::string& tokenizer_json);

}  // namespace kiln::models
