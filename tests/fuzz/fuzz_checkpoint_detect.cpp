// libFuzzer target for opening an SD-family checkpoint (models/sd/sd_checkpoint.h): the
// family and configuration detected from tensor names and shapes, the sidecar
// configuration beside a single file (<stem>.json, ldm_config.json), ModelSpec metadata,
// and a diffusers folder's config files. Everything a downloaded model brings with it.
//
// The input describes a folder, section by section:
//   open PATH                 what to open, relative to the folder ("." for the folder)
//   == REL/PATH.safetensors   a safetensors file, its header in the text form of
//   ...                         tensor_lines.h (the data is zeros)
//   == REL/PATH               any other file, written as the lines that follow
// The folder is written under a private temporary directory and opened. Only kiln::Error
// may reject it; a crash, a sanitizer report, another exception, or an accepted model
// whose configuration would make the networks divide by zero or index past a table is a
// finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/error.h"
#include "models/sd/sd_checkpoint.h"
#include "tensor_io/safetensors.h"
#include "tensor_lines.h"

namespace {

namespace fs = std::filesystem;
using kiln::models::Checkpoint;

constexpr uint64_t kMaxDataBytes = 8ull << 20;  // per input, all files together

void require(bool condition) {
  if (!condition) std::abort();
}

// The folder each input is written to, in memory where the system offers it; removed
// when the fuzzer exits.
struct Scratch {
  fs::path dir;
  Scratch() {
    std::error_code ec;
    const fs::path base =
        fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    dir = base / ("kiln-fuzz-checkpoint-" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const fs::path& scratch() {
  static const Scratch s;
  return s.dir;
}

// A relative path of plain names (no "..", no absolute path, at most three deep), so
// that nothing is written outside the scratch folder.
bool safeRelative(const std::string& rel) {
  if (rel.empty() || rel.size() > 120 || rel.front() == '/') return false;
  if (rel.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") !=
      std::string::npos)
    return false;
  int depth = 0;
  for (const auto& part : fs::path(rel)) {
    if (part == ".." || part == "." || part.empty()) return false;
    ++depth;
  }
  return depth <= 3;
}

struct Section {
  std::string path;
  std::string body;
};

// Writes the described folder; false when the input describes nothing that can be written.
bool writeFolder(std::string_view text, const fs::path& root, std::string& open) {
  std::vector<Section> sections;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.starts_with("open ") && sections.empty()) {
      open = std::string(line.substr(5));
    } else if (line.starts_with("== ")) {
      sections.push_back({std::string(line.substr(3)), {}});
    } else if (!sections.empty()) {
      sections.back().body.append(line).push_back('\n');
    }
  }
  if (open != "." && !safeRelative(open)) return false;
  uint64_t budget = kMaxDataBytes;
  for (const Section& s : sections) {
    if (!safeRelative(s.path)) continue;
    const fs::path file = root / s.path;
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec || fs::is_directory(file, ec)) continue;
    if (s.path.ends_with(".safetensors")) {
      const auto lines = kiln::fuzz::parseTensorLines(s.body, budget);
      if (!lines) return false;
      budget -= lines->data_bytes;
      const std::vector<uint8_t> zeros(lines->data_bytes, 0);
      std::vector<kiln::tensor_io::TensorToWrite> tensors;
      for (const auto& t : lines->tensors)
        tensors.push_back({t.name, t.dtype, t.shape, {zeros.data() + t.begin, t.byteSize()}});
      try {
        kiln::tensor_io::writeSafetensors(file.string(), tensors, lines->metadata);
      } catch (const kiln::Error&) {
        return false;  // not describable as a file (a metadata key the format cannot hold)
      }
    } else {
      std::ofstream(file, std::ios::binary) << s.body;
    }
  }
  return true;
}

// What the networks built from an accepted configuration rely on.
void checkSpec(const Checkpoint& ck) {
  const auto& spec = ck.spec;
  require(spec.family != kiln::models::ModelFamily::Invalid);
  require(!spec.text_encoders.empty());
  const auto& u = spec.unet;
  require(u.in_channels > 0 && u.out_channels > 0 && u.model_channels > 0 && u.context_dim > 0);
  require(u.levels() > 0 && static_cast<int64_t>(u.channel_mult.size()) == u.levels());
  for (int64_t level = 0; level < u.levels(); ++level) {
    const int64_t channels = u.model_channels * u.channel_mult[static_cast<std::size_t>(level)];
    const int64_t heads = u.headsFor(level, channels);
    require(heads > 0 && channels % heads == 0);
  }
  require(spec.vae.base_channels > 0 && spec.vae.z_channels > 0 && !spec.vae.channel_mult.empty());
  require(spec.vae.scaling_factor > 0);
  for (const auto& te : spec.text_encoders) {
    require(te.config.heads > 0 && te.config.hidden % te.config.heads == 0);
    require(te.config.layers > 0 && te.config.vocab > 0 && te.config.max_positions > 0);
  }
  require(spec.schedule.train_steps > 0);
  require(spec.schedule.beta_start > 0 && spec.schedule.beta_end > spec.schedule.beta_start &&
          spec.schedule.beta_end < 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path& root = scratch();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) fs::remove_all(entry.path(), ec);
  std::string open;
  if (!writeFolder(std::string_view(reinterpret_cast<const char*>(data), size), root, open))
    return 0;
  // KILN_FUZZ_VERBOSE=1 says what became of each input (to see that the seeds open).
  static const bool verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  try {
    const Checkpoint ck = kiln::models::openCheckpoint((open == "." ? root : root / open).string());
    checkSpec(ck);
    if (verbose) std::cerr << "opened: " << kiln::models::familyName(ck.spec.family) << "\n";
  } catch (const kiln::Error& e) {
    // Rejected with a typed error naming the file: the expected outcome for a bad model.
    if (verbose) std::cerr << "rejected: " << e.what() << "\n";
  }
  return 0;
}
