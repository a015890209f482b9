// The GPU tests' harness. GPU machines often have a compiler, CMake and a GPU libtorch but
// no Qt, so these tests use this instead of Qt Test: GPU_TEST(name) { ... } registers a
// case, GPU_CHECK(condition, message) fails it, GPU_SKIP(why) skips it. The executable
// prints a line per case and a summary, and exits 77 (skipped) without a GPU.
#pragma once

#include <string>
#include <vector>

namespace kiln::gpu_check {

struct Case {
  const char* name;
  void (*run)();
};
std::vector<Case>& cases();

struct Register {
  Register(const char* name, void (*run)()) { cases().push_back({name, run}); }
};

struct Skipped {
  std::string why;
};

[[noreturn]] void fail(const std::string& what, const char* file, int line);
// Skips the case on a GPU without native bf16 (before Ampere, CDNA1, RDNA2).
void requireBf16();

}  // namespace kiln::gpu_check

#define GPU_TEST(name)                                                     \
  static void name();                                                      \
  static const ::kiln::gpu_check::Register name##_registered(#name, name); \
  static void name()

#define GPU_CHECK(condition, message)                                                          \
  do {                                                                                         \
    if (!(condition))                                                                          \
      ::kiln::gpu_check::fail(std::string(#condition) + ": " + (message), __FILE__, __LINE__); \
  } while (false)

#define GPU_SKIP(why)                \
  throw ::kiln::gpu_check::Skipped { \
    why                              \
  }
