// The video job tests' helpers: a tiny clip's render settings, picture comparisons, one
// job run on an engine that writes videos, the text-to-video workflow, and an image
// model's picture as a render job or a workflow.
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/engine.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "kiln/video_io.h"
#include "kiln/workflow.h"

namespace kiln::testing {

inline kiln::RenderParams tinyVideo(const std::string& model, int frames) {
  kiln::RenderParams p;
  p.model.path = model;
  p.prompt.text = "a red cat runs across a field";
  p.prompt.negative = "blurry";
  p.video.frames = frames;
  p.size.width = 64;
  p.size.height = 48;
  p.sampling.steps = 3;
  p.sampling.cfg_scale = 5.0;
  p.sampling.seed = 7;
  p.sampling.sampler = "uni_pc";
  p.video.fps = 8;
  p.model.dtype = kiln::ComputeDType::Float32;  // matchesThePipeline compares with fp32
  p.model.threads = 2;
  return p;
}

inline double meanAbsDiff(const kiln::Image& a, const kiln::Image& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) sum += std::abs(a.pixels[i] - b.pixels[i]);
  return sum / static_cast<double>(a.pixels.size());
}

inline bool samePixels(const kiln::Image& a, const kiln::Image& b) {
  return a.pixels == b.pixels;
}

// Runs one job on an engine that writes videos and images; returns its events.
struct EngineRun {
  std::vector<kiln::Event> events;
  kiln::Event end;
};

inline EngineRun runOnEngine(
    kiln::Job job, const std::function<void(kiln::Engine&, const kiln::Event&)>& on_event = {},
    const std::string& device = "cpu") {
  std::mutex mutex;
  std::condition_variable done;
  EngineRun run;
  bool over = false;
  kiln::Engine* engine_ptr = nullptr;
  kiln::EngineOptions options;
  options.device = device;
  options.write_video = [](const std::string& path, const std::vector<kiln::Image>& frames,
                           const kiln::VideoWriteOptions& o) { kiln::writeVideo(path, frames, o); };
  options.write_image = [](const std::string&, const kiln::Image&) {
    throw kiln::Error(kiln::ErrorKind::Io, "no image writer in this test");
  };
  options.sink = [&](const kiln::Event& e) {
    if (on_event && engine_ptr) on_event(*engine_ptr, e);
    std::lock_guard<std::mutex> lock(mutex);
    run.events.push_back(e);
    if (e.type == kiln::EventType::JobFinished || e.type == kiln::EventType::JobFailed ||
        e.type == kiln::EventType::JobCancelled) {
      run.end = e;
      over = true;
      done.notify_all();
    }
  };
  kiln::Engine engine(std::move(options));
  engine_ptr = &engine;
  engine.submit(std::move(job));
  std::unique_lock<std::mutex> lock(mutex);
  done.wait_for(lock, std::chrono::seconds(300), [&] { return over; });
  return run;
}

// Text to video (or stills) as a workflow: `loader` (LoadVideoModel or LoadCheckpoint) of
// `model`, two prompts, `latent`, a Sampler (seed 7, 3 UniPC steps, CFG 5), VAEDecode and
// `output` (SaveVideo or PreviewImage).
inline kiln::Workflow textToVideo(const std::string& loader, const std::string& model,
                                  kiln::WorkflowNode latent, kiln::WorkflowNode output) {
  kiln::Workflow w;
  const std::string param = loader == "LoadVideoModel" ? "model_name" : "ckpt_name";
  latent.id = "latent";
  output.id = "out";
  w.nodes = {
      {"model", loader, {{param, model}}, 0, 0, ""},
      {"pos", "TextEncode", {{"text", std::string("a red cat runs across a field")}}, 0, 0, ""},
      {"neg", "TextEncode", {{"text", std::string("blurry")}}, 0, 0, ""},
      latent,
      {"sampler",
       "Sampler",
       {{"seed", int64_t{7}},
        {"steps", int64_t{3}},
        {"cfg", 5.0},
        {"sampler_name", std::string("uni_pc")}},
       0,
       0,
       ""},
      {"decode", "VAEDecode", {}, 0, 0, ""},
      output};
  w.links = {{"model", "CLIP", "pos", "clip"},
             {"model", "CLIP", "neg", "clip"},
             {"model", "MODEL", "sampler", "model"},
             {"pos", "CONDITIONING", "sampler", "positive"},
             {"neg", "CONDITIONING", "sampler", "negative"},
             {"latent", "LATENT", "sampler", "latent_image"},
             {"sampler", "LATENT", "decode", "samples"},
             {"model", "VAE", "decode", "vae"},
             {"decode", "IMAGE", "out", "images"}};
  return w;
}

inline std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

inline std::string sd1Tiny() {
  return std::string(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors";
}
inline std::string sdxlTiny() {
  return std::string(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sdxl/sdxl_tiny_ldm.safetensors";
}

// A picture of `model` as a render job or as the app's workflow.
inline kiln::Job pictureJob(const std::string& model, bool workflow) {
  const int64_t size = 64;
  kiln::Job job;
  if (!workflow) {
    job.params.model.path = model;
    job.params.prompt.text = "a red circle";
    job.params.prompt.negative = "blurry";
    job.params.sampling.steps = 2;
    job.params.size.width = job.params.size.height = static_cast<int>(size);
    return job;
  }
  kiln::Workflow w;
  w.nodes = {{"ckpt", "LoadCheckpoint", {{"ckpt_name", model}}, 0, 0, ""},
             {"pos", "TextEncode", {{"text", std::string("a red circle")}}, 0, 0, ""},
             {"neg", "TextEncode", {{"text", std::string("blurry")}}, 0, 0, ""},
             {"latent", "EmptyLatent", {{"width", size}, {"height", size}}, 0, 0, ""},
             {"sampler", "Sampler", {{"seed", int64_t{3}}, {"steps", int64_t{2}}}, 0, 0, ""},
             {"decode", "VAEDecode", {}, 0, 0, ""},
             {"out", "PreviewImage", {}, 0, 0, ""}};
  w.links = {{"ckpt", "CLIP", "pos", "clip"},
             {"ckpt", "CLIP", "neg", "clip"},
             {"ckpt", "MODEL", "sampler", "model"},
             {"pos", "CONDITIONING", "sampler", "positive"},
             {"neg", "CONDITIONING", "sampler", "negative"},
             {"latent", "LATENT", "sampler", "latent_image"},
             {"sampler", "LATENT", "decode", "samples"},
             {"ckpt", "VAE", "decode", "vae"},
             {"decode", "IMAGE", "out", "images"}};
  job.workflow = std::make_shared<const kiln::Workflow>(std::move(w));
  return job;
}

}  // namespace kiln::testing
