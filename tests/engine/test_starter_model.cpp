// The starter model Kiln ships: it loads through ordinary SD 1.x detection, and it draws
// what held-out prompts (caption combinations it never saw in training) ask for, as
// judged by a detector that is itself checked on drawn ground truth first.
#include <QTemporaryDir>
#include <QtTest>

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "kiln/engine.h"
#include "kiln/render.h"
#include "models/sd/sd_checkpoint.h"
#include "scenes.h"
#include "starter_judge.h"
#include "starter_vae_judge.h"
#include "template_workflow.h"
#include "weights/params.h"

using namespace kiln;

namespace {

// Floors a little below what the shipped model reaches on these prompts (seed 1 for the
// single objects, as here; tools/starter/README.md): in bf16 colour 97.8% (93.0% on the
// count prompts), position 100%, shape 92.0%, small shapes 86.7%, count 94.7% (seeds
// 1-3); in fp32 colour 97.1%, position 100%, shape 92.0%, small shapes 91.1%.
constexpr double kColourFloor = 0.90;
constexpr double kPositionFloor = 0.94;
constexpr double kShapeFloor = 0.85;
constexpr double kSmallShapeFloor = 0.76;
constexpr double kCountFloor = 0.85;
// The shipped VAE's reconstructions of the held-out prompts as drawn (fp32): shape 93.4%,
// small shapes 81.5%, the ceiling on the model's shapes (a VAE trained 1,100 steps instead
// of 3,000 reached only 75.7% and 52.6%; see tools/starter/README.md).
constexpr double kVaeShapeFloor = 0.90;
constexpr double kVaeSmallShapeFloor = 0.76;

std::vector<starter::SceneSpec> heldOutPrompts() {
  auto specs = starter::heldOutSingles();
  const auto counts = starter::heldOutCounts();
  specs.insert(specs.end(), counts.begin(), counts.end());
  return specs;
}

// The generate panel's path: the app's default template workflow, with the prompt and
// seed filled in, run as a job on an engine (the model stays cached between jobs).
class TemplateRenderer {
 public:
  explicit TemplateRenderer(std::string output_dir) : output_dir_(std::move(output_dir)) {
    EngineOptions o;
    o.sink = [this](const Event& e) {
      if (e.type != EventType::JobFinished && e.type != EventType::JobFailed &&
          e.type != EventType::JobCancelled)
        return;
      std::lock_guard<std::mutex> lock(mutex_);
      end_ = e;
      ended_ = true;
      changed_.notify_all();
    };
    // The pictures are judged from the job's results; the files only need to exist.
    o.write_image = [](const std::string& path, const Image&) {
      if (std::FILE* f = std::fopen(path.c_str(), "w")) std::fclose(f);
    };
    engine_ = std::make_unique<Engine>(o);
  }

  Image render(const std::string& model, const std::string& prompt, int64_t seed) {
    Workflow w = app::defaultTemplate();
    w.node("model")->params["ckpt_name"] = model;
    w.node("prompt")->params["text"] = prompt;
    w.node("sampler")->params["seed"] = seed;
    Job job;
    job.workflow =
        std::make_shared<const Workflow>(app::prepareRun(w, engine_->nodeSchemas(), 0, "starter"));
    job.output_dir = output_dir_;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ended_ = false;
    }
    engine_->submit(std::move(job));
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return ended_; });
    if (end_.type != EventType::JobFinished)
      throw std::runtime_error("the template failed: " + end_.message);
    return end_.outputs.at(0);
  }

 private:
  std::string output_dir_;
  std::unique_ptr<Engine> engine_;
  std::mutex mutex_;
  std::condition_variable changed_;
  Event end_;
  bool ended_ = false;
};

}  // namespace

class StarterModelTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void heldOutCombinationsAreNeverDrawnForTraining() {
    QVERIFY2(starter::heldOutSingles().size() >= 60, "too few held-out single-object prompts");
    QVERIFY(starter::heldOutCounts().size() >= 8);
    starter::SceneSampler sampler(99, 64);
    for (int i = 0; i < 20000; ++i) {
      const starter::Scene s = sampler.sampleTraining();
      QVERIFY2(!starter::isHeldOut(s.spec), sampler.caption(s.spec).c_str());
      QCOMPARE(static_cast<int>(s.objects.size()), s.spec.count);
    }
  }

  // The detector must read pictures drawn from the specs themselves without error,
  // or its verdicts on the model's pictures mean nothing.
  void judgeReadsDrawnGroundTruth() {
    starter::SceneSampler sampler(5, 64);
    testing::StarterRates rates;
    for (const auto& spec : heldOutPrompts()) {
      const starter::Scene scene = sampler.place(spec);
      Image img;
      img.width = img.height = 64;
      img.channels = 3;
      img.pixels = starter::renderScene(scene, 64);
      const testing::Judgement j = testing::judge(img, spec);
      testing::tally(rates, spec, j);
      if (!(j.colour_ok && j.position_ok && j.shape_ok && j.count_ok))
        std::fprintf(stderr, "judge misread '%s' as %s\n", starter::canonicalPrompt(spec).c_str(),
                     j.describe().c_str());
    }
    rates.print(stderr);
    QCOMPARE(rates.colour, rates.images);
    QCOMPARE(rates.position, rates.singles);
    QCOMPARE(rates.count, rates.counts);
    QVERIFY(rates.shapeRate() >= 0.98);
  }

  void shipsAsOneDetectableFile() {
    const std::string path = starterModelPath();
    QVERIFY(std::filesystem::file_size(path) <= 20u * 1000 * 1000);
    const models::Checkpoint ck = models::openCheckpoint(path);
    QCOMPARE(ck.spec.family, models::ModelFamily::SD1);
    QCOMPARE(ck.spec.native_width, 64);
    QCOMPARE(ck.spec.native_height, 64);
    QCOMPARE(ck.spec.vae.downscale(), int64_t{4});
    // No sidecar: everything comes from the file.
    QCOMPARE(ck.notes.back(), std::string("default sd1 configuration"));
  }

  // The shipped VAE alone, on the held-out prompts as drawn: the ceiling on what the
  // model can draw (a small star the VAE turns into a dot, no UNet can bring back).
  void vaeReproducesHeldOutShapes() {
    const models::Checkpoint ck = models::openCheckpoint(starterModelPath());
    models::AutoencoderKL vae(ck.spec.vae, ck.spec.vae_prefix);
    weights::LoadOptions load;
    load.owned_prefixes = {ck.spec.vae_prefix};
    weights::loadParams(vae.params(), ck.index, load, "VAE");
    const testing::StarterRates rates =
        testing::judgeVaeReconstructions(vae, ck.spec.native_width, at::kFloat);
    rates.print(stderr);
    QVERIFY(rates.singles >= 3 * 60);
    QVERIFY(rates.colourRate() >= 0.98);
    QVERIFY(rates.positionRate() >= 0.98);
    QVERIFY(rates.countRate() >= 0.98);
    QVERIFY(rates.shapeRate() >= kVaeShapeFloor);
    QVERIFY(rates.smallShapeRate() >= kVaeSmallShapeFloor);
  }

  void defaultRenderUsesTheStarterModelAtItsNativeSize() {
    RenderParams p = defaultRenderParams();
    QVERIFY(p.model.path.empty());
    p.sampling.steps = 4;
    const RenderResult r = render(p);
    QCOMPARE(r.image.width, 64);
    QCOMPARE(r.image.height, 64);
    QCOMPARE(r.model_family, std::string("sd1"));
    QVERIFY(r.image.text.at("parameters").find("Model: kiln-starter") != std::string::npos);
  }

  // Every held-out prompt rendered through kiln::render (kiln-cli render's path) is judged,
  // and rendered again through the app's default template workflow (the Generate button's
  // path), which must draw the same picture, so the rates hold on both paths.
  void drawsWhatHeldOutPromptsAskFor() {
    const auto singles = starter::heldOutSingles();
    const auto counts = starter::heldOutCounts();
    const std::string model = starterModelPath();
    QTemporaryDir out;
    TemplateRenderer workflow(out.path().toStdString());
    int shown = 0, differing = 0, compared = 0;
    const auto report = [&](const starter::SceneSpec& spec, int64_t seed, const Image& image,
                            const testing::Judgement& j) {
      const bool ok = j.colour_ok && j.position_ok && j.shape_ok && j.count_ok;
      if (!ok && shown++ < 25)
        std::fprintf(stderr, "seed %lld '%s': drew %s\n", static_cast<long long>(seed),
                     starter::canonicalPrompt(spec).c_str(), j.describe().c_str());
      const Image drawn = workflow.render(model, starter::canonicalPrompt(spec), seed);
      ++compared;
      if (drawn.width != image.width || drawn.height != image.height ||
          drawn.pixels != image.pixels ||
          drawn.text.at("parameters") != image.text.at("parameters")) {
        if (differing++ < 5)
          std::fprintf(stderr,
                       "seed %lld '%s': the template workflow drew another picture (%dx%d)\n",
                       static_cast<long long>(seed), starter::canonicalPrompt(spec).c_str(),
                       drawn.width, drawn.height);
      }
    };
    // In this CPU's fast precision: bf16 where it has bf16 instructions, else fp32.
    const ComputeDType dtype = fastCpuDType();
    testing::StarterRates rates = testing::scoreStarterModel(model, singles, {1}, dtype, report);
    const testing::StarterRates count_rates =
        testing::scoreStarterModel(model, counts, {1, 2, 3}, dtype, report);
    rates.images += count_rates.images;
    rates.colour += count_rates.colour;
    rates.counts = count_rates.counts;
    rates.count = count_rates.count;
    rates.print(stderr);
    QCOMPARE(compared, rates.images);
    QCOMPARE(differing, 0);
    QVERIFY(rates.singles >= 60);
    QVERIFY(rates.colourRate() >= kColourFloor);
    QVERIFY(rates.positionRate() >= kPositionFloor);
    QVERIFY(rates.shapeRate() >= kShapeFloor);
    QVERIFY(rates.smallShapeRate() >= kSmallShapeFloor);
    QVERIFY(rates.countRate() >= kCountFloor);
  }
};

QTEST_GUILESS_MAIN(StarterModelTest)
#include "test_starter_model.moc"
