// Workflow jobs on the engine with the sd1 conformance model: a text-to-image graph draws
// what kiln::render draws, results are cached by input signature across jobs (counted per
// node), image-to-image and inpainting run through VAEEncode with a mask (from a file or
// the job's own picture), LoRA nodes
// change the picture and leave the model as it was, and failures name their node.
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

namespace {

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

std::string tinyModel() {
  return kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
}

kiln::Workflow textToImage(int64_t seed) {
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

kiln::RenderParams sameAsRender(int64_t seed) {
  kiln::RenderParams p;
  p.model_path = tinyModel();
  p.prompt = "a red circle";
  p.negative_prompt = "blurry";
  p.seed = seed;
  p.steps = 3;
  p.cfg_scale = 5;
  p.width = 64;
  p.height = 64;
  return p;
}

double maxDiff(const kiln::Image& a, const kiln::Image& b) {
  if (a.pixels.size() != b.pixels.size()) return 1e9;
  double worst = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i)
    worst = std::max(worst, double(std::abs(a.pixels[i] - b.pixels[i])));
  return worst;
}

}  // namespace

class TestWorkflowRun : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  Recorder rec_;
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
  void initTestCase() {
    kiln::EngineOptions o;
    o.sink = [this](const kiln::Event& e) { rec_(e); };
    // Files as bytes the tests can see: a path that exists is enough for the atomic rename.
    o.write_image = [this](const std::string& path, const kiln::Image& image) {
      std::ofstream(path) << "image";
      std::lock_guard<std::mutex> lock(files_mutex_);
      files_[path] = image;
    };
    o.read_image = [this](const std::string& path) {
      std::lock_guard<std::mutex> lock(files_mutex_);
      const auto it = files_.find(path);
      if (it == files_.end())
        throw kiln::Error(kiln::ErrorKind::FileNotFound, "no file '" + path + "'");
      return it->second;
    };
    engine_ = std::make_unique<kiln::Engine>(o);
  }
  void cleanupTestCase() { engine_.reset(); }

  // The graph draws what the fixed pipeline draws, saves it with the workflow inside and
  // plans one stage per running node.
  void drawsWhatRenderDraws() {
    const kiln::JobId id = submit(textToImage(1));
    const kiln::Event end = rec_.waitEnd(id);
    QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
    QCOMPARE(end.outputs.size(), std::size_t{1});
    QCOMPARE(end.output_paths.size(), std::size_t{1});
    QVERIFY(QString::fromStdString(end.output_paths[0]).endsWith("/t-00001.png"));
    const kiln::Image reference = kiln::render(sameAsRender(1)).image;
    const double diff = maxDiff(end.outputs[0], reference);
    QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    QVERIFY(QFileInfo::exists(QString::fromStdString(end.output_paths[0])));
    const kiln::Image& saved = end.outputs[0];  // as written, with its text chunks
    QCOMPARE(kiln::parseWorkflow(saved.text.at("kiln_workflow")).nodes.size(), std::size_t{7});
    QVERIFY2(saved.text.at("parameters")
                     .find("Steps: 3, Sampler: Euler, CFG scale: 5, Seed: 1, Size: 64x64") !=
                 std::string::npos,
             saved.text.at("parameters").c_str());
    const auto planned = rec_.of(id, EventType::StagePlanned);
    QCOMPARE(planned.size(), std::size_t{1});
    std::vector<std::string> names;
    for (const auto& s : planned[0].stages) names.push_back(s.name);
    QCOMPARE(names, (std::vector<std::string>{"Loading model", "Encoding prompt (Prompt)",
                                              "Encoding prompt (TextEncode neg)", "Denoising",
                                              "Decoding", "Saving"}));
    for (const auto& [node, state] : rec_.states(id))
      QVERIFY2(state == NodeState::Done, node.c_str());
  }

  // EmptyLatent takes the grid of the model that samples it. The starter model's VAE
  // downscales by 4: 64x64 draws 64x64, as kiln::render does, and 70x66 snaps to its grid
  // (68x64) with a notice. A video latent and a latent of another channel count are
  // refused by an image model with the reason.
  void emptyLatentTakesTheModelsGrid() {
    kiln::Workflow w = textToImage(5);
    w.node("ckpt")->params["ckpt_name"] = std::string();  // the starter model
    kiln::JobId id = submit(w);
    kiln::Event end = rec_.waitEnd(id);
    QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
    QCOMPARE(end.outputs.at(0).width, 64);
    QCOMPARE(end.outputs.at(0).height, 64);
    kiln::RenderParams p = sameAsRender(5);
    p.model_path = kiln::starterModelPath();
    const kiln::Image reference = kiln::render(p).image;
    QCOMPARE(maxDiff(end.outputs[0], reference), 0.0);
    QCOMPARE(end.outputs[0].text.at("parameters"), reference.text.at("parameters"));

    w.node("latent")->params["width"] = int64_t{70};
    w.node("latent")->params["height"] = int64_t{66};
    id = submit(w);
    end = rec_.waitEnd(id);
    QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
    QCOMPARE(end.outputs.at(0).width, 68);
    QCOMPARE(end.outputs.at(0).height, 64);
    const auto logs = rec_.of(id, EventType::Log);
    QVERIFY(std::any_of(logs.begin(), logs.end(), [](const kiln::Event& e) {
      return e.message == "size 70x66 is not a multiple of 4; rendering 68x64 instead";
    }));

    kiln::Workflow video = textToImage(5);
    video.node("latent")->type = "EmptyVideoLatent";
    video.node("latent")->params = {
        {"width", int64_t{64}}, {"height", int64_t{64}}, {"frames", int64_t{5}}};
    end = rec_.waitEnd(submit(video));
    QCOMPARE(end.type, EventType::JobFailed);
    QVERIFY2(end.message.find("a video latent needs a video model") != std::string::npos,
             end.message.c_str());

    // The 4-channel latent decoded by a VAE of 8 latent channels is refused by the node.
    const std::string wide = dir_.filePath("wide-vae.safetensors").toStdString();
    {
      const auto file = kiln::tensor_io::SafetensorsFile::open(tinyModel());
      kiln::testing::NamedTensors tensors;
      const std::string prefix = "first_stage_model.";
      for (const auto& info : file->tensors()) {
        if (info.name.rfind(prefix, 0) != 0) continue;
        const std::string name = info.name.substr(prefix.size());
        at::Tensor t = kiln::tensor_io::viewStored({file, &info}).to(at::kFloat);
        if (name == "post_quant_conv.weight") t = at::cat({t, t}, 1);  // [z, 8, 1, 1]
        if (name == "quant_conv.weight" || name == "quant_conv.bias") t = at::cat({t, t}, 0);
        tensors.push_back({name, t});
      }
      kiln::testing::writeTensors(wide, tensors);
    }
    kiln::Workflow mixed = textToImage(5);
    mixed.nodes.push_back({"vae", "LoadVAE", {{"vae_name", wide}}, 0, 0, ""});
    for (auto& l : mixed.links)
      if (l.to_node == "decode" && l.to_input == "vae") l = {"vae", "VAE", "decode", "vae"};
    end = rec_.waitEnd(submit(mixed));
    QCOMPARE(end.type, EventType::JobFailed);
    QVERIFY2(end.message.find("channels but this VAE decodes") != std::string::npos,
             end.message.c_str());
  }

  // Two Kilns saving into one folder at once: a name another one took while this one was
  // writing is not overwritten; the picture goes under the next free name.
  void saveNeverOverwritesAnotherWriter() {
    QTemporaryDir out;
    Recorder rec;
    int writes = 0;
    kiln::EngineOptions o;
    o.sink = [&rec](const kiln::Event& e) { rec(e); };
    o.write_image = [&](const std::string& path, const kiln::Image&) {
      if (writes++ == 0)
        std::ofstream(out.filePath("race-00001.png").toStdString()) << "theirs";  // the other Kiln
      std::ofstream(path) << "ours";
    };
    kiln::Engine engine(o);
    kiln::Workflow w = textToImage(3);
    w.node("save")->params["filename_prefix"] = std::string("race");
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(w);
    job.output_dir = out.path().toStdString();
    const kiln::Event end = rec.waitEnd(engine.submit(std::move(job)));
    QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
    QCOMPARE(end.output_paths.size(), std::size_t{1});
    QVERIFY(QString::fromStdString(end.output_paths[0]).endsWith("/race-00002.png"));
    std::ifstream theirs(out.filePath("race-00001.png").toStdString());
    std::string text;
    theirs >> text;
    QCOMPARE(text, std::string("theirs"));
    QCOMPARE(QDir(out.path()).entryList(QDir::Files | QDir::Hidden).size(),
             2);  // no temporary file left
  }

  // Every sampler and schedule runs through the Sampler node, names itself in the
  // picture's parameters as A1111 would, and draws what the render API draws with the same
  // settings (the same noise, in the same order, for the ones that add noise).
  void everySamplerRunsThroughTheNode_data() {
    QTest::addColumn<QString>("sampler");
    QTest::addColumn<QString>("scheduler");
    QTest::addColumn<QString>("label");
    QTest::newRow("euler_ancestral") << "euler_ancestral"
                                     << "normal"
                                     << "Euler a";
    QTest::newRow("heun karras") << "heun"
                                 << "karras"
                                 << "Heun Karras";
    QTest::newRow("dpm_2 exponential") << "dpm_2"
                                       << "exponential"
                                       << "DPM2 Exponential";
    QTest::newRow("dpmpp_2m karras") << "dpmpp_2m"
                                     << "karras"
                                     << "DPM++ 2M Karras";
    QTest::newRow("dpmpp_2m_sde simple") << "dpmpp_2m_sde"
                                         << "simple"
                                         << "DPM++ 2M SDE";
    QTest::newRow("dpmpp_sde sgm_uniform") << "dpmpp_sde"
                                           << "sgm_uniform"
                                           << "DPM++ SDE";
    QTest::newRow("ddim ddim_uniform") << "ddim"
                                       << "ddim_uniform"
                                       << "DDIM";
    QTest::newRow("lcm") << "lcm"
                         << "normal"
                         << "LCM";
    QTest::newRow("uni_pc") << "uni_pc"
                            << "normal"
                            << "UniPC";
    QTest::newRow("uni_pc_bh2 diffusers") << "uni_pc_bh2"
                                          << "diffusers"
                                          << "UniPC (bh2)";
  }
  void everySamplerRunsThroughTheNode() {
    QFETCH(QString, sampler);
    QFETCH(QString, scheduler);
    QFETCH(QString, label);
    kiln::Workflow w = textToImage(11);
    w.node("sampler")->params["sampler_name"] = sampler.toStdString();
    w.node("sampler")->params["scheduler"] = scheduler.toStdString();
    const kiln::JobId id = submit(w);
    const kiln::Event end = rec_.waitEnd(id);
    QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
    const std::string& parameters = end.outputs.at(0).text.at("parameters");
    QVERIFY2(
        parameters.find("Sampler: " + label.toStdString() + ", CFG scale") != std::string::npos,
        parameters.c_str());
    kiln::RenderParams p = sameAsRender(11);
    p.sampler = sampler.toStdString();
    p.scheduler = scheduler.toStdString();
    const kiln::Image reference = kiln::render(p).image;
    const double diff = maxDiff(end.outputs[0], reference);
    QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    // Another sampler draws another picture from the same seed.
    QVERIFY(maxDiff(end.outputs[0], kiln::render(sameAsRender(11)).image) > 1e-3);
  }

  // SDXL base then refiner: the refiner's Sampler takes the base Sampler's latent and
  // repaints part of it (denoise), with each prompt's aesthetic score.
  void refinesWithAnSdxlRefiner() {
    const QString refiner = dir_.filePath("tiny_refiner.safetensors");
    kiln::testing::writeSdxlRefiner(refiner);
    const std::string base =
        kiln::testing::conformancePath("sd-tiny-1234/sdxl/sdxl_tiny_ldm.safetensors");
    const auto workflow = [&](double negative_score, const std::string& refined_latent) {
      kiln::Workflow w;
      w.nodes = {
          {"ckpt", "LoadCheckpoint", {{"ckpt_name", base}}, 0, 0, ""},
          {"pos", "TextEncode", {{"text", std::string("a red circle")}}, 0, 0, ""},
          {"neg", "TextEncode", {{"text", std::string("blurry")}}, 0, 0, ""},
          {"latent", "EmptyLatent", {{"width", int64_t{64}}, {"height", int64_t{64}}}, 0, 0, ""},
          {"sampler",
           "Sampler",
           {{"seed", int64_t{3}}, {"steps", int64_t{4}}, {"cfg", 5.0}},
           0,
           0,
           ""},
          {"refiner", "LoadCheckpoint", {{"ckpt_name", refiner.toStdString()}}, 0, 0, ""},
          {"rpos",
           "TextEncode",
           {{"text", std::string("a red circle")}, {"aesthetic_score", 6.0}},
           0,
           0,
           ""},
          {"rneg",
           "TextEncode",
           {{"text", std::string("blurry")}, {"aesthetic_score", negative_score}},
           0,
           0,
           ""},
          {"rsampler",
           "Sampler",
           {{"seed", int64_t{3}}, {"steps", int64_t{4}}, {"cfg", 5.0}, {"denoise", 0.5}},
           0,
           0,
           ""},
          {"decode", "VAEDecode", {}, 0, 0, ""},
          {"base_decode", "VAEDecode", {}, 0, 0, ""},
          {"save", "SaveImage", {{"filename_prefix", std::string("refined")}}, 0, 0, ""},
          {"save_base", "SaveImage", {{"filename_prefix", std::string("base")}}, 0, 0, ""}};
      w.links = {{"ckpt", "CLIP", "pos", "clip"},
                 {"ckpt", "CLIP", "neg", "clip"},
                 {"ckpt", "MODEL", "sampler", "model"},
                 {"pos", "CONDITIONING", "sampler", "positive"},
                 {"neg", "CONDITIONING", "sampler", "negative"},
                 {"latent", "LATENT", "sampler", "latent_image"},
                 {"refiner", "CLIP", "rpos", "clip"},
                 {"refiner", "CLIP", "rneg", "clip"},
                 {"refiner", "MODEL", "rsampler", "model"},
                 {"rpos", "CONDITIONING", "rsampler", "positive"},
                 {"rneg", "CONDITIONING", "rsampler", "negative"},
                 {refined_latent, "LATENT", "rsampler", "latent_image"},
                 {"rsampler", "LATENT", "decode", "samples"},
                 {"refiner", "VAE", "decode", "vae"},
                 {"decode", "IMAGE", "save", "images"},
                 {"sampler", "LATENT", "base_decode", "samples"},
                 {"ckpt", "VAE", "base_decode", "vae"},
                 {"base_decode", "IMAGE", "save_base", "images"}};
      const kiln::JobId id = submit(w);
      const kiln::Event end = rec_.waitEnd(id);
      if (end.type != EventType::JobFinished) throw std::runtime_error(end.message);
      if (end.outputs.size() != 2) throw std::runtime_error("expected two pictures");
      // The refined picture names the refiner.
      const bool first_refined =
          end.outputs[0].text.at("parameters").find("tiny_refiner") != std::string::npos;
      return first_refined ? std::make_pair(end.outputs[0], end.outputs[1])
                           : std::make_pair(end.outputs[1], end.outputs[0]);
    };
    try {
      const auto [refined, base_picture] = workflow(2.5, "sampler");
      QVERIFY2(refined.text.at("parameters").find("Denoising strength: 0.5") != std::string::npos,
               refined.text.at("parameters").c_str());
      QVERIFY2(refined.text.at("parameters").find("Model: tiny_refiner") != std::string::npos,
               refined.text.at("parameters").c_str());
      const double refined_from_base = maxDiff(refined, base_picture);
      QVERIFY(refined_from_base > 1e-3);  // the refiner changed it
      // The negative's score reaches the model (a small effect in the tiny model, whose
      // size-id weights are small; without it the pictures would be bit-identical).
      const double score_effect = maxDiff(workflow(6.0, "sampler").first, refined);
      QVERIFY2(score_effect > 1e-5, qPrintable(QString::number(score_effect)));
      // From an empty latent the refiner draws from noise alone, further from the base's.
      const double drawn_from_base = maxDiff(workflow(2.5, "latent").first, base_picture);
      QVERIFY2(refined_from_base < drawn_from_base,
               qPrintable(QString("%1 vs %2").arg(refined_from_base).arg(drawn_from_base)));
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

  // The engine's embeddings folders reach TextEncode; an encoding cached before an
  // embedding file appeared is not reused once it has.
  void embeddingsFromTheEngineFolders() {
    QTemporaryDir folder;
    Recorder rec;
    kiln::EngineOptions o;
    o.sink = [&rec](const kiln::Event& e) { rec(e); };
    o.write_image = [](const std::string& path, const kiln::Image&) {
      std::ofstream(path) << "image";
    };
    o.embedding_dirs = {folder.path().toStdString()};
    kiln::Engine engine(o);
    kiln::Workflow w = textToImage(2);
    w.node("pos")->params["text"] = std::string("a redstar");
    const auto run = [&] {
      kiln::Job job;
      job.workflow = std::make_shared<const kiln::Workflow>(w);
      job.output_dir = dir_.path().toStdString();
      const kiln::JobId id = engine.submit(std::move(job));
      const kiln::Event end = rec.waitEnd(id);
      if (end.type != EventType::JobFinished) throw std::runtime_error(end.message);
      return std::make_pair(id, end.outputs.at(0));
    };
    kiln::RenderParams p = sameAsRender(2);
    try {
      const auto [first_id, plain] = run();
      p.prompt = "a redstar";
      QVERIFY(maxDiff(plain, kiln::render(p).image) < 1e-4);  // no such embedding yet: a word
      // "redstar" as the token vectors of "red star".
      const auto file = kiln::tensor_io::SafetensorsFile::open(tinyModel());
      const at::Tensor table =
          kiln::tensor_io::viewStored(
              {file,
               file->find(
                   "cond_stage_model.transformer.text_model.embeddings.token_embedding.weight")})
              .to(at::kFloat);
      const auto tokenizer = kiln::models::ClipTokenizer::fromVocabFile(
          kiln::core::findDataFile("bpe_simple_vocab_16e6.txt.gz"));
      const at::Tensor rows = table
                                  .index_select(0, at::tensor(tokenizer.encode("red star"),
                                                              at::TensorOptions().dtype(at::kLong)))
                                  .contiguous();
      std::vector<uint8_t> bytes(rows.nbytes());
      std::memcpy(bytes.data(), rows.data_ptr(), rows.nbytes());
      kiln::tensor_io::writeSafetensors(
          folder.filePath("redstar.safetensors").toStdString(),
          {{"emb_params", kiln::tensor_io::DType::F32, {2, rows.size(1)}, bytes}});
      const auto [second_id, embedded] = run();
      QCOMPARE(rec.states(second_id).at("pos"), NodeState::Done);  // encoded again, not cached
      p.prompt = "a red star";
      const double diff = maxDiff(embedded, kiln::render(p).image);
      QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
      const auto [third_id, again] = run();
      QCOMPARE(rec.states(third_id).at("pos"), NodeState::Cached);  // nothing changed since
      QVERIFY(maxDiff(again, embedded) == 0);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

  // An unknown sampler in the render API is refused before anything loads.
  void renderRefusesUnknownSamplers() {
    kiln::RenderParams p = sameAsRender(1);
    p.sampler = "dpmpp_3m";
    try {
      (void)kiln::render(p);
      QFAIL("rendered");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::InvalidArgument);
      QVERIFY2(std::string(e.what()).find("unknown sampler 'dpmpp_3m'") != std::string::npos,
               e.what());
    }
  }

  // Changing only the seed re-runs the sampler, the decode and the save; the same
  // workflow again re-runs only the save; clearing the cache re-runs everything.
  void cachesByInputSignature() {
    const auto runs = [&](kiln::JobId id) {
      std::set<std::string> ran;
      for (const auto& e : rec_.of(id, EventType::NodeState))
        if (e.node_state == NodeState::Running) ran.insert(e.node);
      return ran;
    };
    const kiln::JobId first = submit(textToImage(7));
    QCOMPARE(rec_.waitEnd(first).type, EventType::JobFinished);
    const kiln::JobId second = submit(textToImage(8));
    const kiln::Event end = rec_.waitEnd(second);
    QCOMPARE(end.type, EventType::JobFinished);
    QCOMPARE(runs(second), (std::set<std::string>{"sampler", "decode", "save"}));
    const auto states = rec_.states(second);
    for (const char* node : {"ckpt", "pos", "neg", "latent"})
      QCOMPARE(states.at(node), NodeState::Cached);
    QVERIFY(maxDiff(end.outputs[0], kiln::render(sameAsRender(8)).image) < 1e-4);
    QCOMPARE(rec_.of(second, EventType::StagePlanned).at(0).stages.size(), std::size_t{3});

    const kiln::JobId again = submit(textToImage(8));
    QCOMPARE(rec_.waitEnd(again).type, EventType::JobFinished);
    QCOMPARE(runs(again), (std::set<std::string>{"save"}));
    const kiln::MemoryStats m = engine_->memoryStats();
    QVERIFY(m.node_cache_bytes > 0);
    QVERIFY(m.node_cache_entries >= 6);

    engine_->clearNodeCache();
    QCOMPARE(engine_->memoryStats().node_cache_bytes, int64_t{0});
    const kiln::JobId cleared = submit(textToImage(8));
    QCOMPARE(rec_.waitEnd(cleared).type, EventType::JobFinished);
    QCOMPARE(runs(cleared).size(), std::size_t{7});

    // A model handle stands only while the model is loaded.
    engine_->unloadModels();
    const kiln::JobId unloaded = submit(textToImage(8));
    QCOMPARE(rec_.waitEnd(unloaded).type, EventType::JobFinished);
    QVERIFY(runs(unloaded).count("ckpt"));
  }

  // Image-to-image with a mask from the picture's transparency: the opaque half comes
  // back exactly, the transparent half is repainted.
  void inpaintsThroughVaeEncode() {
    const kiln::Image base = kiln::render(sameAsRender(3)).image;
    kiln::Image rgba = base;
    rgba.channels = 4;
    rgba.pixels.clear();
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x) {
        for (int ch = 0; ch < 3; ++ch)
          rgba.pixels.push_back(base.pixels[static_cast<std::size_t>((y * 64 + x) * 3 + ch)]);
        rgba.pixels.push_back(x < 32 ? 0.0f : 1.0f);
      }
    {
      std::lock_guard<std::mutex> lock(files_mutex_);
      files_["/pictures/holed.png"] = rgba;
    }
    kiln::Workflow w = textToImage(11);
    w.nodes.push_back(
        {"load", "LoadImage", {{"image", std::string("/pictures/holed.png")}}, 0, 0, ""});
    w.nodes.push_back({"encode", "VAEEncode", {}, 0, 0, ""});
    w.nodes.push_back({"show", "PreviewImage", {}, 0, 0, ""});
    w.links[5] = {"encode", "LATENT", "sampler", "latent_image"};
    w.links.push_back({"load", "IMAGE", "encode", "pixels"});
    w.links.push_back({"load", "MASK", "encode", "mask"});
    w.links.push_back({"ckpt", "VAE", "encode", "vae"});
    w.links.push_back({"decode", "IMAGE", "show", "images"});
    w.nodes.erase(w.nodes.begin() + 6);  // no SaveImage: the preview is the output
    w.links.erase(w.links.begin() + 8);
    const kiln::JobId id = submit(w);
    const kiln::Event end = rec_.waitEnd(id);
    QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
    QCOMPARE(end.outputs.size(), std::size_t{1});
    QVERIFY(end.output_paths.empty());
    QVERIFY(!rec_.states(id).count("latent"));  // not planned: nothing reads it
    const kiln::Image& out = end.outputs[0];
    double kept = 0, repainted = 0;
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x)
        for (int ch = 0; ch < 3; ++ch) {
          const auto i = static_cast<std::size_t>((y * 64 + x) * 3 + ch);
          const double d = std::abs(out.pixels[i] - base.pixels[i]);
          if (x < 32)
            repainted = std::max(repainted, d);
          else
            kept = std::max(kept, d);
        }
    QVERIFY2(kept < 1e-6, qPrintable(QString::number(kept)));
    QVERIFY2(repainted > 0.05, qPrintable(QString::number(repainted)));
  }

  // A job's own picture and mask (JobImage, JobMask: what kiln::render's init image and
  // mask become) are signed into the node cache by their pixels: another picture in the
  // next job is encoded afresh, the same one again is taken from the cache; the workflow
  // draws what kiln::render draws from the same picture.
  void jobPicturesAreSignedByTheirPixels() {
    kiln::Workflow w = textToImage(5);
    w.nodes.push_back({"image", "JobImage", {}, 0, 0, ""});
    w.nodes.push_back({"mask", "JobMask", {}, 0, 0, ""});
    w.nodes.push_back({"encode", "VAEEncode", {{"mask_feather", int64_t{4}}}, 0, 0, ""});
    w.nodes.push_back({"show", "PreviewImage", {}, 0, 0, ""});
    w.node("sampler")->params["denoise"] = 0.6;
    w.links[5] = {"encode", "LATENT", "sampler", "latent_image"};
    w.links.push_back({"image", "IMAGE", "encode", "pixels"});
    w.links.push_back({"mask", "MASK", "encode", "mask"});
    w.links.push_back({"ckpt", "VAE", "encode", "vae"});
    w.links.push_back({"decode", "IMAGE", "show", "images"});
    w.nodes.erase(w.nodes.begin() + 6);  // the preview is the output
    w.links.erase(w.links.begin() + 8);
    const auto picture = [](float red) {
      kiln::Image image;
      image.width = image.height = 64;
      image.channels = 3;
      for (int i = 0; i < 64 * 64; ++i)
        image.pixels.insert(image.pixels.end(), {red, 0.3f, static_cast<float>(i % 64) / 64});
      return image;
    };
    kiln::Image mask;
    mask.width = mask.height = 64;
    mask.channels = 1;
    for (int i = 0; i < 64 * 64; ++i) mask.pixels.push_back(i % 64 < 32 ? 1.0f : 0.0f);
    const auto run = [&](const kiln::Image& image) {
      kiln::Job job;
      job.workflow = std::make_shared<const kiln::Workflow>(w);
      job.params.init_image = image;
      job.params.mask = mask;
      const kiln::JobId id = engine_->submit(std::move(job));
      const kiln::Event end = rec_.waitEnd(id);
      return std::make_pair(end, rec_.states(id));
    };
    const auto [red, red_states] = run(picture(0.9f));
    QVERIFY2(red.type == EventType::JobFinished, red.message.c_str());
    QCOMPARE(red_states.at("encode"), NodeState::Done);
    const auto [green, green_states] = run(picture(0.1f));
    QVERIFY2(green.type == EventType::JobFinished, green.message.c_str());
    QCOMPARE(green_states.at("image"), NodeState::Done);  // not the red picture's result
    QCOMPARE(green_states.at("encode"), NodeState::Done);
    QVERIFY(maxDiff(red.outputs.at(0), green.outputs.at(0)) > 0.1);
    const auto [again, again_states] = run(picture(0.9f));
    QCOMPARE(again_states.at("encode"), NodeState::Cached);
    QCOMPARE(maxDiff(again.outputs.at(0), red.outputs.at(0)), 0.0);
    // kiln::render with the same picture, mask and settings draws the same.
    kiln::RenderParams p = sameAsRender(5);
    p.init_image = picture(0.9f);
    p.mask = mask;
    p.mask_feather = 4;
    p.denoise = 0.6;
    const kiln::RenderResult r = kiln::render(p);
    QCOMPARE(maxDiff(r.image, red.outputs.at(0)), 0.0);
    QCOMPARE(r.image.text.at("parameters"), red.outputs.at(0).text.at("parameters"));
    QVERIFY(r.image.text.at("parameters").find("Mask blur: 4") != std::string::npos);
  }

  // A LoRA node changes the picture; the same graph without it draws the original again.
  void loraNodeAppliesAndComesOff() {
    const std::string lora = dir_.filePath("style.safetensors").toStdString();
    at::manual_seed(5);
    const std::string m = "lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q";
    kiln::testing::writeTensors(lora, {{m + ".lora_down.weight", at::randn({4, 32})},
                                       {m + ".lora_up.weight", at::randn({32, 4})},
                                       {m + ".alpha", at::full({}, 4.0)}});
    kiln::Workflow w = textToImage(4);
    w.nodes.push_back(
        {"lora", "LoadLoRA", {{"lora_name", lora}, {"strength_model", 1.0}}, 0, 0, ""});
    w.links[2] = {"lora", "MODEL", "sampler", "model"};
    w.links.push_back({"ckpt", "MODEL", "lora", "model"});
    w.links.push_back({"ckpt", "CLIP", "lora", "clip"});
    const kiln::JobId styled = submit(w);
    const kiln::Event a = rec_.waitEnd(styled);
    QVERIFY2(a.type == EventType::JobFinished, a.message.c_str());
    bool reported = false;
    for (const auto& n : a.notices)
      reported = reported || n.find("applied 1 of 1 modules") != std::string::npos;
    QVERIFY(reported);
    const kiln::Image plain = kiln::render(sameAsRender(4)).image;
    QVERIFY(maxDiff(a.outputs[0], plain) > 1e-3);
    const kiln::JobId back = submit(textToImage(4));
    const kiln::Event b = rec_.waitEnd(back);
    QCOMPARE(b.type, EventType::JobFinished);
    QVERIFY2(maxDiff(b.outputs[0], plain) < 1e-4,
             qPrintable(QString::number(maxDiff(b.outputs[0], plain))));
  }

  // Cancelling mid-sampling ends the job at once; the interrupted sampler left no result
  // behind, so the next run samples again.
  void cancelInsideANode() {
    kiln::Workflow w = textToImage(21);
    w.node("sampler")->params["steps"] = int64_t{400};
    const kiln::JobId id = submit(w);
    for (int i = 0; i < 3000 && rec_.of(id, EventType::Progress).size() < 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    QVERIFY(engine_->cancel(id));
    const kiln::Event end = rec_.waitEnd(id);
    QCOMPARE(end.type, EventType::JobCancelled);
    QCOMPARE(rec_.states(id).at("sampler"), NodeState::Failed);
    QVERIFY(!rec_.states(id).count("save") || rec_.states(id).at("save") == NodeState::Queued);
    w.node("sampler")->params["steps"] = int64_t{2};
    const kiln::JobId next = submit(w);
    QCOMPARE(rec_.waitEnd(next).type, EventType::JobFinished);
    QCOMPARE(rec_.states(next).at("sampler"), NodeState::Done);
    QCOMPARE(rec_.states(next).at("pos"), NodeState::Cached);
  }

  // The node cache keeps to its byte limit, given directly or as what the host budget
  // leaves beside the cached weights: with room for less than one conditioning, the
  // prompts are encoded again while the small latent is still kept.
  void nodeCacheKeepsToItsLimit_data() {
    QTest::addColumn<bool>("through_host_budget");
    QTest::newRow("node cache limit") << false;
    QTest::newRow("host budget") << true;
  }
  void nodeCacheKeepsToItsLimit() {
    QFETCH(bool, through_host_budget);
    // The tiny model's conditioning is 77 x 32 floats (9.6 KiB), its 64x64 latent 1 KiB.
    constexpr int64_t kRoom = 4 * 1024;
    Recorder rec;
    kiln::EngineOptions o;
    o.sink = [&rec](const kiln::Event& e) { rec(e); };
    o.write_image = [](const std::string& path, const kiln::Image&) {
      std::ofstream(path) << "image";
    };
    if (through_host_budget)
      o.host_budget_bytes =
          engine_->memoryStats().cached_model_bytes + kRoom;  // the same model's weights
    else
      o.node_cache_bytes = kRoom;
    QVERIFY(!through_host_budget || o.host_budget_bytes > kRoom);
    kiln::Engine engine(o);
    const auto run = [&](int64_t seed) {
      kiln::Job job;
      job.workflow = std::make_shared<const kiln::Workflow>(textToImage(seed));
      job.output_dir = dir_.filePath("limited").toStdString();
      const kiln::JobId id = engine.submit(std::move(job));
      const kiln::Event end = rec.waitEnd(id);  // first: the states are complete once it came
      return std::make_pair(end, rec.states(id));
    };
    // (A budget that shrinks when the weights load evicts the oldest results first, so
    // the steady state shows from the third run on.)
    QCOMPARE(run(1).first.type, EventType::JobFinished);
    QCOMPARE(run(2).first.type, EventType::JobFinished);
    const auto [end, states] = run(3);
    QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
    QCOMPARE(states.at("pos"), NodeState::Done);
    QCOMPARE(states.at("latent"), NodeState::Cached);
    QVERIFY(engine.memoryStats().node_cache_bytes <= kRoom);
    QVERIFY(engine.memoryStats().node_cache_bytes > 0);
  }

  // LoadVAE: the checkpoint's VAE saved as a file of its own (original keys without the
  // prefix) and the diffusers VAE beside the conformance checkpoint decode what the
  // checkpoint's VAE decodes; image-to-image through the file's VAE matches too; a file
  // with no VAE is refused by the node.
  void loadVaeDecodesLikeTheCheckpointsVae() {
    const std::string vae_path = dir_.filePath("vae.safetensors").toStdString();
    {
      const auto file = kiln::tensor_io::SafetensorsFile::open(tinyModel());
      kiln::testing::NamedTensors tensors;
      const std::string prefix = "first_stage_model.";
      for (const auto& info : file->tensors())
        if (info.name.rfind(prefix, 0) == 0)
          tensors.push_back({info.name.substr(prefix.size()),
                             kiln::tensor_io::viewStored({file, &info}).to(at::kFloat)});
      QVERIFY(tensors.size() > 50);
      kiln::testing::writeTensors(vae_path, tensors);
      // The same VAE with its output shifted: proof that the file's weights do the decode.
      for (auto& [name, t] : tensors)
        if (name == "decoder.conv_out.bias") t = t + 0.2;
      kiln::testing::writeTensors(dir_.filePath("shifted-vae.safetensors").toStdString(), tensors);
    }
    const kiln::Image reference = [&] {
      const kiln::JobId id = submit(textToImage(13));
      const kiln::Event end = rec_.waitEnd(id);
      return end.outputs.at(0);
    }();
    const std::string diffusers =
        kiln::testing::conformancePath("sd-tiny-1234/sd1/vae/diffusion_pytorch_model.safetensors");
    for (const std::string& file : {vae_path, diffusers}) {
      kiln::Workflow w = textToImage(13);
      w.nodes.push_back({"vae", "LoadVAE", {{"vae_name", file}}, 0, 0, ""});
      w.links[7] = {"vae", "VAE", "decode", "vae"};
      const kiln::JobId id = submit(w);
      const kiln::Event end = rec_.waitEnd(id);
      QVERIFY2(end.type == EventType::JobFinished, (file + ": " + end.message).c_str());
      QCOMPARE(rec_.states(id).at("sampler"), NodeState::Cached);  // only the decode differs
      const double diff = maxDiff(end.outputs.at(0), reference);
      QVERIFY2(diff < 1e-5,
               qPrintable(QString("%1: %2").arg(QString::fromStdString(file)).arg(diff)));
    }

    {
      kiln::Workflow w = textToImage(13);
      w.nodes.push_back({"vae",
                         "LoadVAE",
                         {{"vae_name", dir_.filePath("shifted-vae.safetensors").toStdString()}},
                         0,
                         0,
                         ""});
      w.links[7] = {"vae", "VAE", "decode", "vae"};
      const kiln::Event end = rec_.waitEnd(submit(w));
      QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
      double mean = 0;
      for (std::size_t i = 0; i < reference.pixels.size(); ++i)
        mean += end.outputs.at(0).pixels[i] - reference.pixels[i];
      mean /= static_cast<double>(reference.pixels.size());
      QVERIFY2(mean > 0.05,
               qPrintable(QString::number(mean)));  // +0.2 on [-1, 1] is +0.1, less clipping
    }

    // Image-to-image, encoded and decoded with the file's VAE, against the checkpoint's.
    {
      std::lock_guard<std::mutex> lock(files_mutex_);
      files_["/pictures/start.png"] = reference;
    }
    const auto imageToImage = [&](bool own_vae) {
      kiln::Workflow w = textToImage(14);
      w.nodes.push_back(
          {"load", "LoadImage", {{"image", std::string("/pictures/start.png")}}, 0, 0, ""});
      w.nodes.push_back({"encode", "VAEEncode", {}, 0, 0, ""});
      w.node("sampler")->params["denoise"] = 0.5;
      w.node("sampler")->params["steps"] = int64_t{4};
      w.links[5] = {"encode", "LATENT", "sampler", "latent_image"};
      w.links.push_back({"load", "IMAGE", "encode", "pixels"});
      if (own_vae) {
        w.nodes.push_back({"vae", "LoadVAE", {{"vae_name", vae_path}}, 0, 0, ""});
        w.links.push_back({"vae", "VAE", "encode", "vae"});
        w.links[7] = {"vae", "VAE", "decode", "vae"};
      } else {
        w.links.push_back({"ckpt", "VAE", "encode", "vae"});
      }
      const kiln::JobId id = submit(w);
      const kiln::Event end = rec_.waitEnd(id);
      return end.type == EventType::JobFinished ? end.outputs.at(0) : kiln::Image{};
    };
    const kiln::Image a = imageToImage(false), b = imageToImage(true);
    QVERIFY(!a.pixels.empty());
    QVERIFY2(maxDiff(a, b) < 1e-4, qPrintable(QString::number(maxDiff(a, b))));

    kiln::Workflow bad = textToImage(13);
    const std::string not_a_vae = dir_.filePath("not-a-vae.safetensors").toStdString();
    kiln::testing::writeTensors(not_a_vae, {{"lora_unet_x.lora_down.weight", at::zeros({2, 2})}});
    bad.nodes.push_back({"vae", "LoadVAE", {{"vae_name", not_a_vae}}, 0, 0, ""});
    bad.links[7] = {"vae", "VAE", "decode", "vae"};
    const kiln::JobId id = submit(bad);
    const kiln::Event end = rec_.waitEnd(id);
    QCOMPARE(end.type, EventType::JobFailed);
    QCOMPARE(end.error, kiln::ErrorKind::UnsupportedModel);
    QCOMPARE(rec_.states(id).at("vae"), NodeState::Failed);
  }

  // A node that fails says so with its id; an invalid graph is refused at submit with
  // every problem.
  void failuresNameTheirNode() {
    kiln::Workflow w = textToImage(1);
    w.nodes.push_back(
        {"lora", "LoadLoRA", {{"lora_name", std::string("/no/such/lora.safetensors")}}, 0, 0, ""});
    w.links[2] = {"lora", "MODEL", "sampler", "model"};
    w.links.push_back({"ckpt", "MODEL", "lora", "model"});
    w.links.push_back({"ckpt", "CLIP", "lora", "clip"});
    const kiln::JobId id = submit(w);
    const kiln::Event end = rec_.waitEnd(id);
    QCOMPARE(end.type, EventType::JobFailed);
    QCOMPARE(end.error, kiln::ErrorKind::FileNotFound);
    QCOMPARE(rec_.states(id).at("lora"), NodeState::Failed);
    bool named = false;
    for (const auto& e : rec_.of(id, EventType::NodeState))
      named = named || (e.node == "lora" &&
                        e.message.find("/no/such/lora.safetensors") != std::string::npos);
    QVERIFY(named);

    // fp16 on this CPU engine: the checkpoint node fails, saying to choose bf16 or fp32.
    kiln::Workflow half = textToImage(1);
    half.node("ckpt")->params["dtype"] = std::string("fp16");
    const kiln::JobId half_id = submit(half);
    const kiln::Event half_end = rec_.waitEnd(half_id);
    QCOMPARE(half_end.type, EventType::JobFailed);
    QCOMPARE(rec_.states(half_id).at("ckpt"), NodeState::Failed);
    QVERIFY2(half_end.message.find("fp16 compute needs a GPU") != std::string::npos,
             half_end.message.c_str());

    kiln::Workflow bad = textToImage(1);
    bad.node("sampler")->params["steps"] = int64_t{0};
    bad.links.pop_back();
    bad.nodes.push_back({"x", "Upscale", {}, 0, 0, ""});
    try {
      submit(bad);
      QFAIL("submitted");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::InvalidWorkflow);
      const std::string what = e.what();
      QVERIFY2(what.find("node sampler: Sampler: 'steps' is 0") != std::string::npos, e.what());
      QVERIFY2(what.find("node x: unknown node type 'Upscale'") != std::string::npos, e.what());
      QVERIFY2(what.find("node save: SaveImage: input 'images' (IMAGE) is not linked") !=
                   std::string::npos,
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestWorkflowRun)
#include "test_workflow_run.moc"
