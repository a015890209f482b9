// LoRA cost: UNet step time with 0, 1 and 3 LoRAs merged and hooked, relative to no LoRA
// in the same run, and the time to switch between two stacks of three in each mode.
// The LoRAs are written here: rank 8 on every attention and feed-forward weight of the
// UNet and the text encoders' attention, like common style LoRAs.
//
// Usage: bench_lora [--model PATH] [--steps N] [--size WxH] [--dtype fp32|bf16]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_common.h"
#include "kiln/error.h"
#include "lora/lora_patcher.h"
#include "pipelines/sd/sd_lora_targets.h"
#include "tensor_io/safetensors.h"

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool patchable(const std::string& name) {
  for (const char* part : {".to_q.", ".to_k.", ".to_v.", ".to_out.0.", ".ff.net.0.proj.",
                           ".ff.net.2.", ".q_proj.", ".k_proj.", ".v_proj.", ".out_proj."})
    if (name.find(part) != std::string::npos) return name.ends_with(".weight");
  return false;
}

// A kohya file with a rank-8 pair for every patchable 2-D weight.
void writeStyleLora(const std::string& path, const kiln::pipelines::SdPipeline& pipe,
                    uint64_t seed) {
  at::manual_seed(seed);
  std::vector<at::Tensor> keep;
  std::vector<kiln::tensor_io::TensorToWrite> out;
  const auto add = [&](const std::string& name, const at::Tensor& t) {
    const at::Tensor c = t.to(at::kHalf).contiguous();
    keep.push_back(c);
    out.push_back(
        {name,
         kiln::tensor_io::DType::F16,
         c.sizes().vec(),
         {static_cast<const uint8_t*>(c.data_ptr()), static_cast<std::size_t>(c.nbytes())}});
  };
  const auto& spec = pipe.spec();
  const auto visit = [&](const kiln::weights::ParamList& params, const std::string& prefix,
                         const std::string& tag) {
    for (const auto& slot : params.slots()) {
      if (!patchable(slot.name) || slot.tensor->dim() != 2 || !slot.name.starts_with(prefix))
        continue;
      std::string module = slot.name.substr(prefix.size(), slot.name.size() - prefix.size() - 7);
      std::replace(module.begin(), module.end(), '.', '_');
      const int64_t rank =
          std::min<int64_t>(8, std::min(slot.tensor->size(0), slot.tensor->size(1)));
      add(tag + module + ".lora_down.weight", at::randn({rank, slot.tensor->size(1)}) * 0.05);
      add(tag + module + ".lora_up.weight", at::randn({slot.tensor->size(0), rank}) * 0.05);
      add(tag + module + ".alpha", at::full({}, static_cast<double>(rank)));
    }
  };
  visit(pipe.unet().params(), spec.unet_prefix, "lora_unet_");
  if (!spec.text_encoders.empty() &&
      spec.text_encoders[0].config.layout == kiln::models::ClipLayout::HuggingFace)
    visit(pipe.textEncoder(0).params(), spec.text_encoders[0].prefix, "lora_te_text_model_");
  kiln::tensor_io::writeSafetensors(path, out);
}

}  // namespace

int main(int argc, char** argv) {
  const kiln::bench::UNetBenchArgs args = kiln::bench::parseUNetBenchArgs(argc, argv);
  try {
    kiln::bench::UNetBench bench(args);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kiln-bench-lora";
    std::filesystem::create_directories(dir);
    std::vector<kiln::LoraSpec> files;
    for (int i = 0; i < 6; ++i) {
      const std::string path = (dir / ("style" + std::to_string(i) + ".safetensors")).string();
      writeStyleLora(path, bench.pipe, static_cast<uint64_t>(i + 1));
      files.push_back({path, 0.8, 0.8, {}});
    }
    const std::vector<kiln::LoraSpec> one{files[0]}, three{files[0], files[1], files[2]},
        other{files[3], files[4], files[5]};
    kiln::lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(bench.pipe));
    struct Row {
      const char* name;
      const std::vector<kiln::LoraSpec>* stack;
      kiln::LoraMode mode;
    };
    const std::vector<kiln::LoraSpec> none;
    const std::vector<Row> rows{{"no LoRA", &none, kiln::LoraMode::Merge},
                                {"1 LoRA merged", &one, kiln::LoraMode::Merge},
                                {"3 LoRAs merged", &three, kiln::LoraMode::Merge},
                                {"1 LoRA hooked", &one, kiln::LoraMode::Hook},
                                {"3 LoRAs hooked", &three, kiln::LoraMode::Hook}};
    std::printf(
        "UNet of %s, %dx%d, %s, %d steps; LoRAs of rank 8 on every attention and feed-forward "
        "weight\n",
        args.model.c_str(), args.width, args.height, args.dtype == at::kBFloat16 ? "bf16" : "fp32",
        args.steps);
    constexpr int kRounds = 4;
    const int per_round = std::max(1, args.steps / kRounds);
    std::vector<std::vector<double>> ms(rows.size());
    for (int round = 0; round < kRounds; ++round)
      for (std::size_t r = 0; r < rows.size(); ++r) {
        patcher.apply(*rows[r].stack, rows[r].mode);
        (void)bench.pipe.unet().forward(bench.in);  // warm-up
        for (int i = 0; i < per_round; ++i) {
          const auto t0 = Clock::now();
          (void)bench.pipe.unet().forward(bench.in);
          ms[r].push_back(msSince(t0));
        }
      }
    const double base = kiln::bench::median(ms[0]);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double step = kiln::bench::median(ms[r]);
      std::printf("  %-16s %8.1f ms/step  x%.2f of no LoRA\n", rows[r].name, step, step / base);
    }
    for (const kiln::LoraMode mode : {kiln::LoraMode::Merge, kiln::LoraMode::Hook}) {
      std::vector<double> switches;
      patcher.apply(three, mode);
      for (int i = 0; i < 6; ++i) {
        const auto t0 = Clock::now();
        patcher.apply(i % 2 ? three : other, mode);
        switches.push_back(msSince(t0));
      }
      std::printf("  switch between two stacks of 3, %s: %.1f ms (one UNet step: %.1f ms)\n",
                  kiln::loraModeName(mode), kiln::bench::median(switches), base);
    }
    patcher.restore();
    std::filesystem::remove_all(dir);
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "bench_lora: %s\n", e.what());
    return 1;
  }
  return 0;
}
