#include "kiln/build_info.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

#include <filesystem>

#include "core/cpu_features.h"
#include "core/data_paths.h"
#include "kiln/error.h"
#include "memory/gpu_device.h"
#include "models/text/t5_tokenizer.h"

namespace kiln {
namespace {

// The CUDA runtime version libtorch was built with, or "" when it has no CUDA. A
// CPU-only libtorch answers with the default hooks, which throw.
std::string cudaVersion() {
  try {
    const long v = at::detail::getCUDAHooks().versionCUDART();
    if (v <= 0) return {};
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

BuildInfo buildInfo() {
  BuildInfo info;
  info.version = KILN_VERSION;
  info.torch_version = TORCH_VERSION;
  const auto& cuda = at::detail::getCUDAHooks();
  if (cuda.hasROCM()) {
    info.gpu_backends.push_back("ROCm");
  } else if (const std::string v = cudaVersion(); !v.empty()) {
    info.gpu_backends.push_back("CUDA " + v);
  }
  if (at::hasMPS()) info.gpu_backends.push_back("MPS");
  if (!info.gpu_backends.empty()) info.gpu_count = static_cast<int>(cuda.getNumGPUs());
  // The device layer (memory/) implements the CPU, the simulated device and, where this
  // build found a GPU libtorch, each GPU the driver shows ("cuda:0  NVIDIA ... (...)").
  info.devices = {"cpu", "sim:SIZE"};
  try {
    info.gpus = memory::listGpus();
    for (const GpuDeviceInfo& gpu : info.gpus) info.devices.push_back(memory::describeGpu(gpu));
  } catch (const std::exception& e) {
    info.devices.push_back(std::string("cuda: unavailable (") + e.what() + ")");
  }
  info.cpu_bf16 = core::cpuHasNativeBf16();
  try {
    info.data_dir = std::filesystem::path(core::findDataFile("bpe_simple_vocab_16e6.txt.gz"))
                        .parent_path()
                        .string();
  } catch (const Error& e) {
    info.data_problem = e.what();
  }
  try {
    info.sentencepiece_module = models::sentencepieceModulePath();
  } catch (const Error& e) {
    info.sentencepiece_problem = e.what();
  }
  return info;
}

std::string versionText(const std::string& program) {
  const BuildInfo info = buildInfo();
  std::string out = program + " " + info.version + "\n";
  out += "libtorch " + info.torch_version + (info.gpu_backends.empty() ? " (CPU only)" : "") + "\n";
  out += "GPU backends: ";
  if (info.gpu_backends.empty()) {
    out += "none";
  } else {
    for (std::size_t i = 0; i < info.gpu_backends.size(); ++i)
      out += (i ? ", " : "") + info.gpu_backends[i];
    out += " (" + std::to_string(info.gpu_count) + " GPU" + (info.gpu_count == 1 ? "" : "s") +
           " found)";
  }
  out += info.cpu_bf16 ? "\nCPU: bf16 instructions (bf16 is the fast precision)"
                       : "\nCPU: no bf16 instructions (fp32 is the fast precision)";
  out += "\ndevices: ";
  for (std::size_t i = 0; i < info.devices.size(); ++i) out += (i ? ", " : "") + info.devices[i];
  out += "\ndata: " + (info.data_dir.empty()
                           ? std::string("missing (reinstall Kiln or set KILN_DATA_DIR)")
                           : info.data_dir);
  out += "\nsentencepiece: " + (info.sentencepiece_module.empty()
                                    ? "missing (" + info.sentencepiece_problem + ")"
                                    : info.sentencepiece_module);
  return out + "\n";
}

}  // namespace kiln
