// Whole renders on the GPU through the engine, as the app runs them: the picture matches
// the CPU's, every offload mode draws the resident picture bit for bit with streams and
// pinning on and off, a hooked LoRA under group offload draws the merged picture, and
// unloading gives every device and pinned byte back, also after many cycles.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu_check.h"
#include "kiln/engine.h"
#include "lora_files.h"
#include "ref_tensors.h"

namespace {

using kiln::Engine;
using kiln::EngineOptions;
using kiln::Event;
using kiln::EventType;
using kiln::OffloadMode;
using kiln::OffloadSettings;

std::string tinyModel() {
  return kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
}

// An engine whose finished and failed jobs can be waited for.
class Recorder {
 public:
  explicit Recorder(const std::string& device) {
    EngineOptions o;
    o.device = device;
    o.sink = [this](const Event& e) {
      if (e.type != EventType::JobFinished && e.type != EventType::JobFailed &&
          e.type != EventType::JobCancelled)
        return;
      std::lock_guard lock(mutex_);
      ends_.push_back(e);
      changed_.notify_all();
    };
    engine = std::make_unique<Engine>(o);
  }

  kiln::Image render(kiln::Job job) {
    const kiln::JobId id = engine->submit(std::move(job));
    std::unique_lock lock(mutex_);
    const Event* end = nullptr;
    changed_.wait_for(lock, std::chrono::minutes(5), [&] {
      for (const Event& e : ends_)
        if (e.job == id) end = &e;
      return end != nullptr;
    });
    GPU_CHECK(end != nullptr, "the job ended within five minutes");
    GPU_CHECK(end->type == EventType::JobFinished, end->message);
    GPU_CHECK(!end->outputs.empty(), "the job drew a picture");
    return end->outputs.front();
  }

  std::unique_ptr<Engine> engine;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Event> ends_;
};

kiln::Job tinyJob(kiln::ComputeDType dtype = kiln::ComputeDType::Float32) {
  kiln::Job job;
  job.params.model.path = tinyModel();
  job.params.prompt.text = "a red circle on a blue square";
  job.params.prompt.negative = "blurry";
  job.params.sampling.seed = 42;
  job.params.sampling.steps = 4;
  job.params.sampling.sampler = "dpmpp_2m";  // a multistep solver: every step's state counts
  job.params.size.width = job.params.size.height = 64;
  job.params.model.dtype = dtype;
  return job;
}

double maxDiff(const kiln::Image& a, const kiln::Image& b) {
  GPU_CHECK(a.pixels.size() == b.pixels.size(), "the pictures have the same size");
  double worst = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::abs(a.pixels[i] - b.pixels[i])));
  return worst;
}

std::vector<std::pair<std::string, OffloadSettings>> offloadVariants() {
  std::vector<std::pair<std::string, OffloadSettings>> out;
  for (const bool streams : {false, true})
    for (const kiln::PinMode pin : {kiln::PinMode::Off, kiln::PinMode::On}) {
      const std::string how =
          std::string(streams ? ", streams" : "") + (pin == kiln::PinMode::On ? ", pinned" : "");
      for (const OffloadMode mode : {OffloadMode::Model, OffloadMode::GroupBlock,
                                     OffloadMode::GroupLeaf, OffloadMode::Balanced}) {
        if (streams && (mode == OffloadMode::Model || mode == OffloadMode::GroupLeaf)) continue;
        OffloadSettings s;
        s.mode = mode;
        s.streams = streams;
        s.pin = pin;
        s.pin_reserve_bytes = 0;
        out.emplace_back(std::string(kiln::offloadModeName(mode)) + how, s);
      }
    }
  return out;
}

}  // namespace

GPU_TEST(renderOnTheGpuMatchesTheCpu) {
  Recorder gpu("cuda:0"), cpu("cpu");
  const double d = maxDiff(gpu.render(tinyJob()), cpu.render(tinyJob()));
  GPU_CHECK(d <= 2.0 / 255.0, "the GPU's picture differs from the CPU's by " + std::to_string(d));
}

GPU_TEST(everyOffloadModeDrawsTheResidentPicture) {
  for (const kiln::ComputeDType dtype :
       {kiln::ComputeDType::Float32, kiln::ComputeDType::BFloat16}) {
    Recorder gpu("cuda:0");
    const kiln::Image resident = gpu.render(tinyJob(dtype));
    for (const auto& [name, settings] : offloadVariants()) {
      gpu.engine->setOffloadSettings(settings);
      const double d = maxDiff(gpu.render(tinyJob(dtype)), resident);
      GPU_CHECK(d == 0.0, name + " differs from resident by " + std::to_string(d));
    }
  }
}

GPU_TEST(hookedLoraUnderGroupOffloadDrawsTheMergedPicture) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kiln-gpu-lora";
  std::filesystem::create_directories(dir);
  const std::string lora = (dir / "style.safetensors").string();
  at::manual_seed(5);
  const std::string m = "lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q";
  kiln::testing::writeTensors(lora, {{m + ".lora_down.weight", at::randn({4, 32})},
                                     {m + ".lora_up.weight", at::randn({32, 4})},
                                     {m + ".alpha", at::full({}, 4.0)}});
  kiln::Job job = tinyJob(kiln::ComputeDType::BFloat16);
  job.params.model.loras = {kiln::LoraSpec(lora)};
  job.params.model.lora_mode = kiln::LoraMode::Merge;
  Recorder gpu("cuda:0");
  // cuBLAS keeps its workspaces for the life of the process: the baseline is taken after
  // a render and an unload.
  (void)gpu.render(tinyJob(kiln::ComputeDType::BFloat16));
  gpu.engine->unloadModels();
  const kiln::MemoryStats base = gpu.engine->memoryStats();
  const kiln::Image merged = gpu.render(job);
  GPU_CHECK(maxDiff(merged, gpu.render(tinyJob(kiln::ComputeDType::BFloat16))) > 1e-3,
            "the LoRA changes the picture");
  OffloadSettings s;
  s.mode = OffloadMode::GroupBlock;
  s.streams = true;
  s.pin = kiln::PinMode::On;
  s.pin_reserve_bytes = 0;
  gpu.engine->setOffloadSettings(s);
  job.params.model.lora_mode = kiln::LoraMode::Hook;
  const double d = maxDiff(gpu.render(job), merged);
  GPU_CHECK(d <= 2.0 / 255.0, "hooked under group offload differs by " + std::to_string(d));
  gpu.engine->unloadModels();
  const kiln::MemoryStats after = gpu.engine->memoryStats();
  GPU_CHECK(after.device_allocated_bytes <= base.device_allocated_bytes,
            std::to_string(after.device_allocated_bytes - base.device_allocated_bytes) +
                " device bytes left after unloading");
  GPU_CHECK(after.pinned_bytes == 0, std::to_string(after.pinned_bytes) + " pinned bytes left");
  std::filesystem::remove_all(dir);
}

GPU_TEST(fiftyLoadsAndSettingsChangesLeakNothing) {
  Recorder gpu("cuda:0");
  (void)gpu.render(tinyJob());
  gpu.engine->unloadModels();
  const kiln::MemoryStats base = gpu.engine->memoryStats();
  const auto variants = offloadVariants();
  for (int i = 0; i < 50; ++i) {
    gpu.engine->setOffloadSettings(variants[static_cast<std::size_t>(i) % variants.size()].second);
    (void)gpu.render(tinyJob());
    gpu.engine->unloadModels();
  }
  const kiln::MemoryStats end = gpu.engine->memoryStats();
  GPU_CHECK(end.device_allocated_bytes <= base.device_allocated_bytes,
            std::to_string(end.device_allocated_bytes - base.device_allocated_bytes) +
                " device bytes more after 50 cycles");
  GPU_CHECK(end.pinned_bytes == 0, std::to_string(end.pinned_bytes) + " pinned bytes left");
  GPU_CHECK(end.device_reserved_bytes >= end.device_allocated_bytes,
            "reserved memory is never less than allocated");
}
