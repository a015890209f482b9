#include "gpu_check.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "memory/gpu_backend.h"

namespace kiln::gpu_check {

std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}

void fail(const std::string& what, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what);
}

void requireBf16() {
  const memory::GpuBackend* backend = memory::gpuBackend();
  if (!backend || !backend->properties(0).bf16)
    GPU_SKIP("the GPU computes no bf16 (" +
             (backend ? backend->properties(0).arch : std::string("no backend")) + ")");
}

}  // namespace kiln::gpu_check

// Runs every case, or those named on the command line.
int main(int argc, char** argv) {
  using kiln::gpu_check::cases;
  if (!at::hasCUDA()) {
    std::printf("SKIP: no GPU (libtorch has no CUDA/HIP support or no device is present)\n");
    return 77;
  }
  at::globalContext().setAllowTF32CuBLAS(false);  // fp32 means fp32 in these comparisons
  at::globalContext().setAllowTF32CuDNN(false);
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& c : cases()) {
    bool wanted = argc < 2;
    for (int i = 1; i < argc; ++i) wanted = wanted || std::strcmp(argv[i], c.name) == 0;
    if (!wanted) continue;
    const auto start = std::chrono::steady_clock::now();
    try {
      c.run();
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("PASS   %s (%.1f s)\n", c.name, s);
      ++passed;
    } catch (const kiln::gpu_check::Skipped& e) {
      std::printf("SKIP   %s: %s\n", c.name, e.why.c_str());
      ++skipped;
    } catch (const std::exception& e) {
      std::printf("FAIL   %s: %s\n", c.name, e.what());
      ++failed;
    }
    std::fflush(stdout);
  }
  std::printf("gpu: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed > 0 ? 1 : 0;
}
