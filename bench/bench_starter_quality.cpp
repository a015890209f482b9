// The starter model's drawing rates on held-out prompts (colour, position, shape, small
// shapes, count), several seeds each, as judged by the starter-model test's detector;
// and the time per image in bf16 against fp32 measured in the same run (bf16 is the fast
// one only on CPUs with bf16 instructions). Another model file (an intermediate
// checkpoint of kiln-train-starter, say) may be named after the number of seeds.
//
// Options for studying where shapes are lost:
//   --cfg X, --steps N, --sampler NAME, --scheduler NAME   other sampling settings than
//       the default workflow's (CFG 5, 20 Euler steps, normal schedule)
//   --from-drawn D   start each render from the picture the scene generator draws for the
//       prompt, noised to denoise D (image-to-image): at a small D this is the ceiling the
//       VAE sets (it encodes and decodes the true picture); at larger D, how much of a
//       true shape the UNet keeps or restores
//   --no-speed       skip the fp32 / bf16 timing
//   --show N         print the first N pictures judged wrong, with what the judge saw
//   --dtype fp32|bf16  the precision of the rates (default: this CPU's fast one, which is
//       what test_starter_model uses; a CPU without bf16 instructions runs it in fp32)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kiln/error.h"
#include "kiln/render.h"
#include "scenes.h"
#include "starter_judge.h"

using namespace kiln;

namespace {

int usage() {
  std::fprintf(
      stderr,
      "usage: bench_starter_quality [SEEDS [MODEL.safetensors]] [--cfg X] [--steps N]\n"
      "       [--sampler NAME] [--scheduler NAME] [--from-drawn DENOISE] [--no-speed] [--show N]\n"
      "       [--dtype fp32|bf16]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 3;
  std::string model;
  RenderParams settings = defaultRenderParams();
  double from_drawn = 0;
  bool speed = true;
  int show = 0;
  int positional = 0;
  // This CPU's fast precision (bf16 where it has bf16 instructions) unless --dtype says.
  ComputeDType dtype = fastCpuDType();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--cfg" && has_value) {
      settings.sampling.cfg_scale = std::atof(argv[++i]);
    } else if (a == "--steps" && has_value) {
      settings.sampling.steps = std::atoi(argv[++i]);
    } else if (a == "--sampler" && has_value) {
      settings.sampling.sampler = argv[++i];
    } else if (a == "--scheduler" && has_value) {
      settings.sampling.scheduler = argv[++i];
    } else if (a == "--from-drawn" && has_value) {
      from_drawn = std::atof(argv[++i]);
      if (!(from_drawn > 0 && from_drawn <= 1)) return usage();
    } else if (a == "--show" && has_value) {
      show = std::atoi(argv[++i]);
    } else if (a == "--dtype" && has_value) {
      const std::string d = argv[++i];
      if (d != "fp32" && d != "bf16") return usage();
      dtype = d == "fp32" ? ComputeDType::Float32 : ComputeDType::BFloat16;
    } else if (a == "--no-speed") {
      speed = false;
    } else if (a.rfind("--", 0) == 0 || positional >= 2) {
      return usage();
    } else if (positional++ == 0) {
      seeds = std::atoi(a.c_str());
    } else {
      model = a;
    }
  }
  if (seeds < 1) return usage();
  try {
    if (model.empty()) model = starterModelPath();
    std::printf("model: %s\n", model.c_str());
    std::printf("sampling: %s / %s, %d steps, CFG %.2f", settings.sampling.sampler.c_str(),
                settings.sampling.scheduler.c_str(), settings.sampling.steps,
                settings.sampling.cfg_scale);
    if (from_drawn > 0) std::printf(", from the drawn picture at denoise %.3f", from_drawn);
    std::printf("\n");
    std::vector<int64_t> seed_list;
    for (int s = 1; s <= seeds; ++s) seed_list.push_back(s);
    using Clock = std::chrono::steady_clock;
    if (speed) {
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
    }

    // Image-to-image from the scene generator's own picture of the prompt.
    std::function<void(const starter::SceneSpec&, int64_t, RenderParams&)> prepare;
    if (from_drawn > 0)
      prepare = [from_drawn](const starter::SceneSpec& spec, int64_t seed, RenderParams& p) {
        starter::SceneSampler sampler(static_cast<uint64_t>(seed), 64);
        const starter::Scene scene = sampler.place(spec);
        p.init.image = Image{};
        p.init.image.width = p.init.image.height = 64;
        p.init.image.channels = 3;
        p.init.image.pixels = starter::renderScene(scene, 64);
        p.init.denoise = from_drawn;
      };

    int shown = 0;
    const auto report = [&](const starter::SceneSpec& spec, int64_t seed, const Image&,
                            const testing::Judgement& j) {
      if (!(j.colour_ok && j.position_ok && j.shape_ok && j.count_ok) && shown++ < show)
        std::printf("seed %lld '%s': drew %s\n", static_cast<long long>(seed),
                    starter::canonicalPrompt(spec).c_str(), j.describe().c_str());
    };

    const auto singles = testing::scoreStarterModel(model, starter::heldOutSingles(), seed_list,
                                                    dtype, report, settings, prepare);
    const auto counts = testing::scoreStarterModel(model, starter::heldOutCounts(), seed_list,
                                                   dtype, report, settings, prepare);
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
