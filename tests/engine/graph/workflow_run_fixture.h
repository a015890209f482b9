// The workflow-run tests' shared fixture: an engine over the sd1 conformance model whose
// image reader and writer keep pictures in memory, the events it sends, and the graphs
// the tests start from. The tests are split by subject over test_workflow_run*.cpp.
#pragma once

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "checkpoint_variants.h"
#include "core/data_paths.h"
#include "kiln/engine.h"
#include "kiln/render.h"
#include "lora_files.h"
#include "models/text/clip_tokenizer.h"
#include "ref_tensors.h"
#include "tensor_io/materialize.h"
#include "tensor_io/safetensors.h"

namespace workflow_run_test {

using kiln::EventType;
using kiln::NodeState;

class Recorder {
 public:
  void operator()(const kiln::Event& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(e);
    changed_.notify_all();
  }
  kiln::Event waitEnd(kiln::JobId id) {
    std::unique_lock<std::mutex> lock(mutex_);
    const kiln::Event* end = nullptr;
    changed_.wait_for(lock, std::chrono::seconds(300), [&] {
      for (const auto& e : events_)
        if (e.job == id && (e.type == EventType::JobFinished || e.type == EventType::JobFailed ||
                            e.type == EventType::JobCancelled))
          end = &e;
      return end != nullptr;
    });
    return end ? *end : kiln::Event{};
  }
  // Node id -> its last state in job `id`.
  std::map<std::string, NodeState> states(kiln::JobId id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::string, NodeState> out;
    for (const auto& e : events_)
      if (e.job == id && e.type == EventType::NodeState) out[e.node] = e.node_state;
    return out;
  }
  std::vector<kiln::Event> of(kiln::JobId id, EventType type) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<kiln::Event> out;
    for (const auto& e : events_)
      if (e.job == id && e.type == type) out.push_back(e);
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<kiln::Event> events_;
};

inline std::string tinyModel() {
  return kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
}

inline kiln::Workflow textToImage(int64_t seed) {
  kiln::Workflow w;
  w.nodes = {
      {"ckpt", "LoadCheckpoint", {{"ckpt_name", tinyModel()}}, 0, 0, ""},
      {"pos", "TextEncode", {{"text", std::string("a red circle")}}, 0, 0, "Prompt"},
      {"neg", "TextEncode", {{"text", std::string("blurry")}}, 0, 0, ""},
      {"latent", "EmptyLatent", {{"width", int64_t{64}}, {"height", int64_t{64}}}, 0, 0, ""},
      {"sampler", "Sampler", {{"seed", seed}, {"steps", int64_t{3}}, {"cfg", 5.0}}, 0, 0, ""},
      {"decode", "VAEDecode", {}, 0, 0, ""},
      {"save", "SaveImage", {{"filename_prefix", std::string("t")}}, 0, 0, ""}};
  w.links = {{"ckpt", "CLIP", "pos", "clip"},
             {"ckpt", "CLIP", "neg", "clip"},
             {"ckpt", "MODEL", "sampler", "model"},
             {"pos", "CONDITIONING", "sampler", "positive"},
             {"neg", "CONDITIONING", "sampler", "negative"},
             {"latent", "LATENT", "sampler", "latent_image"},
             {"sampler", "LATENT", "decode", "samples"},
             {"ckpt", "VAE", "decode", "vae"},
             {"decode", "IMAGE", "save", "images"}};
  return w;
}

inline kiln::RenderParams sameAsRender(int64_t seed) {
  kiln::RenderParams p;
  p.model.path = tinyModel();
  p.prompt.text = "a red circle";
  p.prompt.negative = "blurry";
  p.sampling.seed = seed;
  p.sampling.steps = 3;
  p.sampling.cfg_scale = 5;
  p.size.width = 64;
  p.size.height = 64;
  return p;
}

inline double maxDiff(const kiln::Image& a, const kiln::Image& b) {
  if (a.pixels.size() != b.pixels.size()) return 1e9;
  double worst = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i)
    worst = std::max(worst, double(std::abs(a.pixels[i] - b.pixels[i])));
  return worst;
}

}  // namespace workflow_run_test

class TestWorkflowRun : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  workflow_run_test::Recorder rec_;
  std::map<std::string, kiln::Image> files_;  // what the engine "reads" and "writes"
  std::mutex files_mutex_;
  std::unique_ptr<kiln::Engine> engine_;

  kiln::JobId submit(const kiln::Workflow& w) {
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(w);
    job.output_dir = dir_.path().toStdString();
    return engine_->submit(std::move(job));
  }

 private Q_SLOTS:
  void initTestCase();
  void cleanupTestCase();
  void drawsWhatRenderDraws();
  void emptyLatentTakesTheModelsGrid();
  void saveNeverOverwritesAnotherWriter();
  void everySamplerRunsThroughTheNode_data();
  void everySamplerRunsThroughTheNode();
  void refinesWithAnSdxlRefiner();
  void embeddingsFromTheEngineFolders();
  void renderRefusesUnknownSamplers();
  void cachesByInputSignature();
  void inpaintsThroughVaeEncode();
  void jobPicturesAreSignedByTheirPixels();
  void loraNodeAppliesAndComesOff();
  void cancelInsideANode();
  void nodeCacheKeepsToItsLimit_data();
  void nodeCacheKeepsToItsLimit();
  void loadVaeDecodesLikeTheCheckpointsVae();
  void failuresNameTheirNode();
};
