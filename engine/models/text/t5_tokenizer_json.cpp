#include "models/text/t5_tokenizer_json.h"

#include <cstdint>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/json_file.h"
#include "kiln/error.h"

namespace kiln::models {
namespace {

using nlohmann::json;

// Protocol buffer wire format, the few kinds a ModelProto needs.
void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void tag(std::string& out, int field, int wire) {
  varint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire));
}
void bytesField(std::string& out, int field, const std::string& value) {
  tag(out, field, 2);
  varint(out, value.size());
  out += value;
}
void intField(std::string& out, int field, int64_t value) {
  tag(out, field, 0);
  varint(out, static_cast<uint64_t>(value));  // negative: ten bytes, as int32 fields take them
}
void floatField(std::string& out, int field, float value) {
  tag(out, field, 5);
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
}

std::string base64Decode(const std::string& in) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (const char c : in) {
    if (c == '=' || c == '\n' || c == '\r') continue;
    const auto pos = kAlphabet.find(c);
    if (pos == std::string::npos)
      throw Error(ErrorKind::CorruptFile, "the precompiled character map is not base64");
    buffer = buffer << 6 | static_cast<uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

// The first "precompiled_charsmap" anywhere in `j`.
const json* findCharsmap(const json& j) {
  if (j.is_object()) {
    if (const auto it = j.find("precompiled_charsmap"); it != j.end() && it->is_string())
      return &*it;
    for (const auto& [key, value] : j.items())
      if (const json* found = findCharsmap(value)) return found;
  } else if (j.is_array()) {
    for (const auto& value : j)
      if (const json* found = findCharsmap(value)) return found;
  }
  return nullptr;
}

// Whether the pre-tokenizer puts a space before the text (Metaspace's add_prefix_space,
// or its prepend_scheme other than "never"); true when it does not say.
bool addsPrefixSpace(const json& j) {
  if (j.is_object()) {
    if (j.value("type", "") == "Metaspace") {
      if (const auto it = j.find("prepend_scheme"); it != j.end() && it->is_string())
        return it->get<std::string>() != "never";
      return j.value("add_prefix_space", true);
    }
    for (const auto& [key, value] : j.items())
      if (value.is_object() || value.is_array()) return addsPrefixSpace(value);
  } else if (j.is_array()) {
    for (const auto& value : j)
      if (!addsPrefixSpace(value)) return false;
  }
  return true;
}

}  // namespace

std::string sentencepieceFromTokenizerJson(const std::string& tokenizer_json) {
  const json doc = core::readJsonObject(tokenizer_json);
  const auto fail = [&](const std::string& why) {
    throw Error(ErrorKind::CorruptFile, "'" + tokenizer_json + "' " + why);
  };
  const auto model = doc.find("model");
  if (model == doc.end() || !model->is_object()) fail("has no tokenizer model");
  if (model->value("type", "") != "Unigram")
    throw Error(ErrorKind::UnsupportedModel, "'" + tokenizer_json + "' holds a " +
                                                 model->value("type", "untyped") +
                                                 " tokenizer; T5 tokenizers are Unigram models");
  const auto vocab = model->find("vocab");
  if (vocab == model->end() || !vocab->is_array() || vocab->empty()) fail("has no vocabulary");
  const int64_t unk = model->value("unk_id", int64_t{-1});
  std::set<std::string> special;
  if (const auto added = doc.find("added_tokens"); added != doc.end() && added->is_array())
    for (const auto& t : *added)
      if (t.is_object() && t.value("special", false) && t.contains("content") &&
          t["content"].is_string())
        special.insert(t["content"].get<std::string>());

  std::string proto;
  int64_t id = 0;
  for (const auto& entry : *vocab) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
      fail("has a vocabulary entry that is not [piece, score]");
    const std::string piece = entry[0].get<std::string>();
    // NORMAL 1, UNKNOWN 2, CONTROL 3
    const int type = id == unk ? 2 : special.count(piece) ? 3 : 1;
    std::string p;
    bytesField(p, 1, piece);
    floatField(p, 2, entry[1].get<float>());
    if (type != 1) intField(p, 3, type);
    bytesField(proto, 1, p);
    ++id;
  }
  if (unk < 0 || unk >= id) fail("names no unknown piece (unk_id)");

  std::string trainer;
  intField(trainer, 3, 1);   // model_type: UNIGRAM
  intField(trainer, 4, id);  // vocab_size
  intField(trainer, 40, unk);
  const auto idOf = [&](const char* piece) -> int64_t {
    int64_t i = 0;
    for (const auto& entry : *vocab) {
      if (entry[0].get<std::string>() == piece) return i;
      ++i;
    }
    return -1;
  };
  intField(trainer, 41, idOf("<s>"));
  intField(trainer, 42, idOf("</s>"));
  intField(trainer, 43, idOf("<pad>"));
  bytesField(proto, 2, trainer);

  std::string normalizer;
  const json* charsmap = doc.contains("normalizer") ? findCharsmap(doc["normalizer"]) : nullptr;
  bytesField(normalizer, 1, charsmap ? "nmt_nfkc" : "identity");
  if (charsmap) bytesField(normalizer, 2, base64Decode(charsmap->get<std::string>()));
  intField(normalizer, 3,
           doc.contains("pre_tokenizer") ? addsPrefixSpace(doc["pre_tokenizer"]) : true);
  intField(normalizer, 4, 1);  // remove_extra_whitespaces
  intField(normalizer, 5, 1);  // escape_whitespaces
  bytesField(proto, 3, normalizer);
  return proto;
}

}  // namespace kiln::models
