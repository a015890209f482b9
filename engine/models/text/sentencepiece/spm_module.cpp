// A C interface over libsentencepiece, built as a module of its own that the tokenizer
// loads with dlopen(RTLD_LOCAL | RTLD_DEEPBIND). Debian's libsentencepiece carries its own
// copy of protobuf's symbols, which clash with the libprotobuf that libtorch loads: linked
// into the same symbol scope, the process crashes before main. Kept local, each library
// binds to its own copy.
#include <sentencepiece_processor.h>

#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

void setError(char* error, int length, const std::string& message) {
  if (!error || length <= 0) return;
  std::strncpy(error, message.c_str(), static_cast<std::size_t>(length) - 1);
  error[length - 1] = '\0';
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* kiln_spm_open(const char* path, char* error,
                                                           int error_length) {
  try {
    auto* sp = new sentencepiece::SentencePieceProcessor();
    const auto status = sp->Load(path);
    if (!status.ok()) {
      setError(error, error_length, status.ToString());
      delete sp;
      return nullptr;
    }
    return sp;
  } catch (const std::exception& e) {
    setError(error, error_length, e.what());
    return nullptr;
  }
}

__attribute__((visibility("default"))) void kiln_spm_close(void* handle) {
  delete static_cast<sentencepiece::SentencePieceProcessor*>(handle);
}

// Piece count, end id and padding id (-1 where the model has none).
__attribute__((visibility("default"))) void kiln_spm_info(void* handle, int* pieces, int* eos,
                                                          int* pad) {
  const auto* sp = static_cast<sentencepiece::SentencePieceProcessor*>(handle);
  *pieces = sp->GetPieceSize();
  *eos = sp->eos_id();
  *pad = sp->pad_id();
}

// The ids of `text` into ids[0, capacity); returns how many there are (which may exceed
// capacity: call again with more room), or -1 with `error` set.
__attribute__((visibility("default"))) int kiln_spm_encode(void* handle, const char* text, int* ids,
                                                           int capacity, char* error,
                                                           int error_length) {
  try {
    std::vector<int> out;
    const auto status =
        static_cast<sentencepiece::SentencePieceProcessor*>(handle)->Encode(text, &out);
    if (!status.ok()) {
      setError(error, error_length, status.ToString());
      return -1;
    }
    for (std::size_t i = 0; i < out.size() && static_cast<int>(i) < capacity; ++i) ids[i] = out[i];
    return static_cast<int>(out.size());
  } catch (const std::exception& e) {
    setError(error, error_length, e.what());
    return -1;
  }
}

}  // extern "C"
