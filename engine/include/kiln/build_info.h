// What this build of Kiln is: its version, the libtorch it runs on, the GPU backends that
// libtorch was built with and where the shipped data files are. `kiln --version` and
// `kiln-cli --version` print it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

// A GPU this build can compute on.
struct GpuDeviceInfo {
  std::string device;  // Kiln's name for it: "cuda:0" (ROCm GPUs too)
  std::string name;    // "NVIDIA GeForce RTX 4090", "AMD Radeon PRO W7900"
  std::string arch;    // "sm_89", "gfx1100"
  int64_t memory_bytes = 0;
  bool rocm = false;
  bool bf16 = false;  // computes bfloat16 natively
};

struct BuildInfo {
  std::string version;        // "0.1.0"
  std::string torch_version;  // "1.13.1"
  // The GPU backends of the libtorch Kiln runs on ("CUDA 12.1", "ROCm", "MPS"); empty
  // for a CPU-only libtorch.
  std::vector<std::string> gpu_backends;
  int gpu_count = 0;  // GPUs those backends see on this machine now
  // Kiln's own devices for those backends (see EngineOptions::device); "cpu" always.
  std::vector<std::string> devices;
  // The GPUs among them, in the order their device numbers count.
  std::vector<GpuDeviceInfo> gpus;
  // Whether the CPU has bf16 instructions, so that bf16 is its fast compute precision
  // (see fastCpuDType); without them bf16 is emulated and fp32 is the fast one.
  bool cpu_bf16 = false;
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
//   CPU: no bf16 instructions (fp32 is the fast precision)
//   data: /usr/share/kiln
//   sentencepiece: /usr/lib/kiln/libkiln_spm.so
std::string versionText(const std::string& program);

}  // namespace kiln
