#include "models/text/t5_tokenizer.h"

#include <cctype>
#include <filesystem>

#include "core/data_paths.h"
#include "kiln/error.h"
#include "models/text/t5_tokenizer_json.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>

namespace kiln::models {

namespace fs = std::filesystem;

namespace {

// The sentencepiece module (see sentencepiece/spm_module.cpp), loaded once.
struct SpmModule {
  std::string path;  // where it was loaded from
  void* (*open)(const char*, char*, int) = nullptr;
  void (*close)(void*) = nullptr;
  void (*info)(void*, int*, int*, int*) = nullptr;
  int (*encode)(void*, const char*, int*, int, char*, int) = nullptr;
  std::string error;  // why it could not be loaded
};

// Beside the executable's install tree, then where the build put it.
std::vector<std::string> moduleCandidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("KILN_SPM_MODULE"); env && *env) out.push_back(env);
  if (const fs::path root = core::executableInstallRoot(); !root.empty())
    out.push_back((root / "lib" / "kiln" / "libkiln_spm.so").string());
  out.push_back(KILN_SPM_INSTALL_MODULE);
  out.push_back(KILN_SPM_BUILD_MODULE);
  return out;
}

const SpmModule& spmModule() {
  static const SpmModule module = [] {
    SpmModule m;
#ifdef KILN_SANITIZE
    // AddressSanitizer refuses RTLD_DEEPBIND, and without it the module's protobuf binds to
    // libtorch's and fails its version check, so the sanitizer build goes without.
    m.error =
        "Kiln's sentencepiece module cannot be loaded in the sanitizer build "
        "(it needs RTLD_DEEPBIND, which AddressSanitizer refuses)";
    return m;
#endif
    for (const auto& path : moduleCandidates()) {
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) continue;
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!lib) {
        const char* why = dlerror();
        m.error = "cannot load '" + path + "': " + (why ? why : "unknown error");
        continue;
      }
      m.open = reinterpret_cast<decltype(m.open)>(dlsym(lib, "kiln_spm_open"));
      m.close = reinterpret_cast<decltype(m.close)>(dlsym(lib, "kiln_spm_close"));
      m.info = reinterpret_cast<decltype(m.info)>(dlsym(lib, "kiln_spm_info"));
      m.encode = reinterpret_cast<decltype(m.encode)>(dlsym(lib, "kiln_spm_encode"));
      m.path = path;
      if (m.open && m.close && m.info && m.encode) return m;  // stays loaded for the process
      m = SpmModule{};
      m.error = "'" + path + "' is not Kiln's sentencepiece module";
    }
    if (m.error.empty()) m.error = "Kiln's sentencepiece module (libkiln_spm.so) is not installed";
    return m;
  }();
  return module;
}

}  // namespace

std::string sentencepieceModulePath() {
  const SpmModule& m = spmModule();
  if (!m.open) throw Error(ErrorKind::FileNotFound, m.error);
  return m.path;
}

struct T5Tokenizer::Impl {
  void* handle = nullptr;
  int64_t eos = 1, pad = 0, vocab = 0;
  ~Impl() {
    if (handle) spmModule().close(handle);
  }
};

T5Tokenizer::~T5Tokenizer() = default;
T5Tokenizer::T5Tokenizer(T5Tokenizer&&) noexcept = default;
T5Tokenizer& T5Tokenizer::operator=(T5Tokenizer&&) noexcept = default;

T5Tokenizer T5Tokenizer::open(const std::string& model_path) {
  std::error_code ec;
  if (!fs::is_regular_file(model_path, ec))
    throw Error(ErrorKind::FileNotFound, "tokenizer model '" + model_path + "' does not exist");
  const SpmModule& spm = spmModule();
  if (!spm.open)
    throw Error(ErrorKind::UnsupportedModel,
                "cannot read the tokenizer '" + model_path + "': " + spm.error);
  T5Tokenizer t;
  t.path_ = model_path;
  t.impl_ = std::make_unique<Impl>();
  char error[512] = {};
  if (fs::path(model_path).extension() == ".json") {
    // HuggingFace's tokenizer.json: the sentencepiece model it came from, through a
    // private file that is gone once the model is read.
    const std::string proto = sentencepieceFromTokenizerJson(model_path);
    static std::atomic<int> serial{0};
    const fs::path tmp =
        fs::temp_directory_path(ec) / ("kiln-t5-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(serial.fetch_add(1)) + ".model");
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(proto.data(), static_cast<std::streamsize>(proto.size()));
      if (!out)
        throw Error(ErrorKind::Io, "cannot write the converted tokenizer to " + tmp.string());
    }
    t.impl_->handle = spm.open(tmp.string().c_str(), error, sizeof error);
    fs::remove(tmp, ec);
  } else {
    t.impl_->handle = spm.open(model_path.c_str(), error, sizeof error);
  }
  if (!t.impl_->handle)
    throw Error(ErrorKind::CorruptFile,
                "'" + model_path + "' is not a sentencepiece model: " + error);
  int pieces = 0, eos = -1, pad = -1;
  spm.info(t.impl_->handle, &pieces, &eos, &pad);
  // T5's own conventions where the model leaves them out: pad 0, end 1
  t.impl_->vocab = pieces;
  t.impl_->eos = eos >= 0 ? eos : 1;
  t.impl_->pad = pad >= 0 ? pad : 0;
  if (t.impl_->vocab <= std::max(t.impl_->eos, t.impl_->pad))
    throw Error(ErrorKind::CorruptFile,
                "'" + model_path + "' has too few pieces for a T5 tokenizer");
  return t;
}

std::string T5Tokenizer::clean(const std::string& text) {
  std::string out;
  bool space = false;
  for (const char ch : text) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += ch;
  }
  return out;
}

std::vector<int64_t> T5Tokenizer::encode(const std::string& text, int64_t length,
                                         int64_t* tokens) const {
  if (length < 1)
    throw Error(ErrorKind::InvalidArgument,
                "a tokenized prompt needs room for at least the end token");
  const std::string cleaned = clean(text);
  std::vector<int> pieces(cleaned.size() + 1);
  char error[512] = {};
  int n = spmModule().encode(impl_->handle, cleaned.c_str(), pieces.data(),
                             static_cast<int>(pieces.size()), error, sizeof error);
  if (n > static_cast<int>(pieces.size())) {
    pieces.resize(static_cast<std::size_t>(n));
    n = spmModule().encode(impl_->handle, cleaned.c_str(), pieces.data(), n, error, sizeof error);
  }
  if (n < 0)
    throw Error(ErrorKind::InvalidArgument, std::string("cannot tokenize the prompt: ") + error);
  std::vector<int64_t> ids;
  for (int i = 0; i < n && static_cast<int64_t>(ids.size()) + 1 < length; ++i)
    ids.push_back(pieces[static_cast<std::size_t>(i)]);
  ids.push_back(impl_->eos);
  if (tokens) *tokens = static_cast<int64_t>(ids.size());
  ids.resize(static_cast<std::size_t>(length), impl_->pad);
  return ids;
}

int64_t T5Tokenizer::vocabSize() const {
  return impl_->vocab;
}
int64_t T5Tokenizer::eosId() const {
  return impl_->eos;
}
int64_t T5Tokenizer::padId() const {
  return impl_->pad;
}

std::string findT5TokenizerModel(const std::string& text_encoder_path) {
  const fs::path p(text_encoder_path);
  std::error_code ec;
  std::vector<fs::path> candidates;
  const auto add_dir = [&](const fs::path& d) {
    for (const char* n :
         {"tokenizer/spiece.model", "spiece.model", "tokenizer.model", "tokenizer/tokenizer.model",
          "tokenizer/tokenizer.json", "tokenizer.json"})
      candidates.push_back(d / n);
  };
  if (fs::is_directory(p, ec)) {
    add_dir(p);
    add_dir(p.filename().empty() ? p.parent_path().parent_path() : p.parent_path());
  } else {
    candidates.push_back(p.parent_path() / (p.stem().string() + ".spiece.model"));
    candidates.push_back(p.parent_path() / (p.stem().string() + ".tokenizer.json"));
    add_dir(p.parent_path());
  }
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return c.string();
  return {};
}

}  // namespace kiln::models
