// What this build of Kiln is: its version, the libtorch it runs on, the GPU backends that
// libtorch was built with and where the shipped data files are. `kiln --version` and
// `kiln-cli --version` print it.
#pragma once

#include <string>
#include <vector>

namespace kiln {

struct BuildInfo {
  std::string version;        // "0.1.0"
  std::string torch_version;  // "1.13.1"
  // The GPU backends of the libtorch Kiln runs on ("CUDA 12.1", "ROCm", "MPS"); empty
  // for a CPU-only libtorch.
  std::vector<std::string> gpu_backends;
  int gpu_count = 0;  // GPUs those backends see on this machine now
  // Kiln's own devices for those backends (see EngineOptions::device); "cpu" always.
  std::vector<std::string> devices;
  // The folder the shipped data files (CLIP vocabulary, starter model) are read from;
  // empty with the reason in data_problem when they are missing.
  std::string data_dir;
  std::string data_problem;
  // The sentencepiece module the T5/UMT5 tokenizers load (video models), or why not.
  std::string sentencepiece_module;
  std::string sentencepiece_problem;
};

BuildInfo buildInfo();

// What --version prints, one fact per line:
//   kiln-cli 0.1.0
//   libtorch 1.13.1 (CPU only)
//   GPU backends: none
//   data: /usr/share/kiln
//   sentencepiece: /usr/lib/kiln/libkiln_spm.so
std::string versionText(const std::string& program);

}  // namespace kiln
