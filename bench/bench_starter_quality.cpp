// The starter model's drawing rates on held-out prompts (colour, position, shape, small
// shapes, count), several seeds each, as judged by the starter-model test's detector;
// and the time per image in bf16 against fp32 measured in the same run (bf16 is the fast
// one only on CPUs with bf16 instructions). Another model
// file (an intermediate checkpoint of kiln-train-starter, say) may be named after the
// number of seeds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/error.h"
#include "kiln/render.h"
#include "starter_judge.h"

using namespace kiln;

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 3;
  if (seeds < 1 || argc > 3) {
    std::fprintf(stderr, "usage: bench_starter_quality [SEEDS [MODEL.safetensors]]\n");
    return 2;
  }
  try {
    const std::string model = argc > 2 ? std::string(argv[2]) : starterModelPath();
    std::printf("model: %s\n", model.c_str());
    std::vector<int64_t> seed_list;
    for (int s = 1; s <= seeds; ++s) seed_list.push_back(s);
    using Clock = std::chrono::steady_clock;
    // Speed: the same prompts in fp32 and bf16.
    const auto probe = starter::heldOutSingles();
    const std::vector<starter::SceneSpec> few(probe.begin(), probe.begin() + 8);
    auto t0 = Clock::now();
    testing::scoreStarterModel(model, few, {1}, ComputeDType::Float32);
    const double fp32 = std::chrono::duration<double>(Clock::now() - t0).count() / few.size();
    t0 = Clock::now();
    testing::scoreStarterModel(model, few, {1}, ComputeDType::BFloat16);
    const double bf16 = std::chrono::duration<double>(Clock::now() - t0).count() / few.size();
    std::printf("time per 64x64 image, 20 steps: fp32 %.3f s, bf16 %.3f s (bf16/fp32 %.2f)\n",
                fp32, bf16, bf16 / fp32);

    // The rates in this CPU's fast precision (bf16 where it has bf16 instructions).
    const ComputeDType dtype = fastCpuDType();
    const auto singles = testing::scoreStarterModel(model, starter::heldOutSingles(), seed_list, dtype);
    const auto counts = testing::scoreStarterModel(model, starter::heldOutCounts(), seed_list, dtype);
    std::printf("rates in %s\n", dtype == ComputeDType::BFloat16 ? "bf16" : "fp32");
    std::printf("held-out single objects (%d seeds): ", seeds);
    singles.print(stdout);
    std::printf("held-out counts (%d seeds): ", seeds);
    counts.print(stdout);
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_starter_quality: %s\n", e.what());
    return 1;
  }
  return 0;
}
