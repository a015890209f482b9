// Tiled VAE decode and encode on the conformance VAEs: agreement with the full pass,
// blending without seams, the working-memory estimates against the counting allocator,
// the peak memory of a large tiled decode, and the retry in tiles after running out of
// memory.
#include <QtTest>

#include <ATen/Parallel.h>

#include <map>
#include <memory>

#include "core/out_of_memory.h"
#include "memory/device.h"
#include "models/vae/vae_tiling.h"
#include "nodes/progress_tracker.h"
#include "nodes/vae_stage.h"
#include "pipelines/common/vae_plan.h"
#include "pipelines/sd/sd_pipeline.h"
#include "ref_tensors.h"

using kiln::testing::maxAbs;
using kiln::testing::maxAbsDiff;
using kiln::tiling::Tiles;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

std::string modelPath(const std::string& family) {
  return kiln::testing::conformancePath("sd-tiny-1234/" + family + "/" + family +
                                        "_tiny_ldm.safetensors");
}

at::Tensor randomLatent(int64_t h, int64_t w, int64_t seed) {
  return kiln::pipelines::seededNoise(seed, {1, 4, h, w});
}

double meanAbsDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().mean().item<double>();
}

// The largest jump between neighbouring columns or rows of the error field (tiled minus
// full, averaged over channels and the other axis): a seam is a step in it.
double seamJump(const at::Tensor& tiled, const at::Tensor& full) {
  const at::Tensor err = (tiled - full).mean(1);  // [B, H, W]
  const std::vector<int64_t> over_rows{0, 1}, over_cols{0, 2};
  const at::Tensor dx =
      (err.narrow(2, 1, err.size(2) - 1) - err.narrow(2, 0, err.size(2) - 1)).abs();
  const at::Tensor dy =
      (err.narrow(1, 1, err.size(1) - 1) - err.narrow(1, 0, err.size(1) - 1)).abs();
  const double cols = dx.mean(over_rows).max().item<double>();
  const double rows = dy.mean(over_cols).max().item<double>();
  return std::max(cols, rows);
}

// Peak bytes the counting allocator saw while `fn` ran.
template <typename Fn>
int64_t measurePeak(Fn&& fn) {
  kiln::memory::SimulatedDevice dev(int64_t{64} << 30);
  {
    kiln::memory::DeviceScope scope(dev);
    fn();
  }
  return dev.memory().peak_allocated_bytes;
}

}  // namespace

class TestVaeTiling : public QObject {
  Q_OBJECT

  std::map<std::string, std::unique_ptr<kiln::pipelines::SdPipeline>> pipelines_;

  const kiln::pipelines::SdPipeline& pipeline(const std::string& family,
                                              at::ScalarType dtype = at::kFloat) {
    auto& slot = pipelines_[family + at::toString(dtype)];
    if (!slot)
      slot = std::make_unique<kiln::pipelines::SdPipeline>(
          kiln::models::openCheckpoint(modelPath(family)), dtype);
    return *slot;
  }

  static void families() {
    QTest::addColumn<QString>("family");
    QTest::newRow("sd1") << QString("sd1");
    QTest::newRow("sdxl") << QString("sdxl");
  }

 private Q_SLOTS:
  void initTestCase() {
    at::set_num_threads(2);
    at::manual_seed(0);
  }

  void tileStartsCoverEvenly() {
    using kiln::tiling::tileStarts;
    QCOMPARE(tileStarts(40, 64, 8), std::vector<int64_t>{0});
    QCOMPARE(tileStarts(64, 64, 8), std::vector<int64_t>{0});
    for (const auto& [length, tile, overlap] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {65, 64, 8}, {100, 32, 4}, {256, 64, 8}, {97, 16, 8}, {300, 64, 0}}) {
      const auto starts = tileStarts(length, tile, overlap);
      QVERIFY(starts.size() >= 2);
      QCOMPARE(starts.front(), int64_t{0});
      QCOMPARE(starts.back() + tile, length);  // the last tile ends at the edge
      for (std::size_t i = 1; i < starts.size(); ++i) {
        QVERIFY(starts[i] > starts[i - 1]);
        QVERIFY2(starts[i - 1] + tile - starts[i] >= overlap,
                 "neighbours overlap at least as asked");
      }
    }
    QVERIFY_THROWS_EXCEPTION(kiln::Error, tileStarts(100, 16, 9));  // more than half a tile
    QVERIFY_THROWS_EXCEPTION(kiln::Error, tileStarts(100, 0, 0));
  }

  // Both ways of blending tiles give weights that sum to one wherever tiles meet, so a
  // constant picture stays constant: the normalised ramps of the image VAE's tiles (any
  // spacing) and the edge ramps of the video VAE's evenly overlapping tiles.
  void blendWeightsSumToOne() {
    for (const auto& [length, tile, overlap] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {100, 32, 4}, {97, 16, 8}, {65, 64, 8}, {40, 64, 8}}) {
      const auto starts = kiln::tiling::tileStarts(length, tile, overlap);
      const auto weights = kiln::tiling::blendWeights(length, starts, tile);
      at::Tensor sum = at::zeros({length});
      for (std::size_t i = 0; i < starts.size(); ++i)
        sum.narrow(0, starts[i], std::min(tile, length)).add_(weights[i]);
      QVERIFY2(maxAbsDiff(sum, at::ones({length})) < 1e-6, qPrintable(QString::number(length)));
    }
    // Tiles of 12 cells, each overlapping the next by 3.
    const int64_t tile = 12, overlap = 3, step = tile - overlap;
    at::Tensor sum = at::zeros({step * 3 + overlap});
    for (int64_t i = 0; i < 3; ++i)
      sum.narrow(0, i * step, tile).add_(kiln::tiling::edgeRamp(tile, overlap, i > 0, i < 2));
    QVERIFY(maxAbsDiff(sum, at::ones_like(sum)) < 1e-6);
    QCOMPARE(kiln::tiling::tileCount(20, 40, {16, 4}), int64_t{6});  // 2 x 3
    QCOMPARE(kiln::tiling::tilePasses(3), int64_t{6});
    QCOMPARE(kiln::tiling::tilePasses(1), int64_t{1});
  }

  // One tile covering the latent is the full decode, bit for bit.
  void singleTileIsTheFullDecode() {
    at::NoGradGuard no_grad;
    const auto& vae = pipeline("sd1").vae();
    const at::Tensor z = randomLatent(16, 24, 3);
    const at::Tensor full = vae.decode(z).to(at::kFloat);
    QVERIFY(at::equal(kiln::models::decodeTiled(vae, z, {32, 8}), full));
  }

  // Measured on the random conformance VAEs (512x512, 256-pixel tiles, 64-pixel overlap):
  // sd1 mean 0.041, max 0.85 against outputs spanning +-4.7. Random weights and a white-
  // noise latent are a hard case (every GroupNorm and the mid-block attention see a
  // different picture per tile); trained VAEs on real latents do better.
  void tiledDecodeMatchesFull_data() { families(); }
  void tiledDecodeMatchesFull() {
    QFETCH(QString, family);
    at::NoGradGuard no_grad;
    const auto& vae = pipeline(family.toStdString()).vae();
    const at::Tensor z = randomLatent(64, 64, 7);
    const at::Tensor full = vae.decode(z).to(at::kFloat);
    int64_t calls = 0, last_total = 0;
    const at::Tensor tiled =
        kiln::models::decodeTiled(vae, z, {32, 8}, [&](int64_t done, int64_t total) {
          ++calls;
          QCOMPARE(done, calls);
          last_total = total;
        });
    QCOMPARE(last_total, int64_t{2 * 9});  // 3x3 tiles, two passes
    QCOMPARE(calls, last_total);
    QCOMPARE(tiled.sizes(), full.sizes());
    const double mean = meanAbsDiff(tiled, full), max = maxAbsDiff(tiled, full);
    qInfo("%s tiled vs full decode: mean %.4f, max %.4f (outputs span %.2f)", qPrintable(family),
          mean, max, maxAbs(full));
    QVERIFY2(mean < 0.06, qPrintable(QString("mean abs difference %1").arg(mean)));
    QVERIFY2(max < 1.3, qPrintable(QString("max abs difference %1").arg(max)));
  }

  // A hard cut between abutting tiles (no overlap) steps in the error field; the blended
  // overlaps do not.
  void blendedTilesShowNoSeam() {
    at::NoGradGuard no_grad;
    const auto& vae = pipeline("sd1").vae();
    const at::Tensor z = randomLatent(48, 48, 11);
    const at::Tensor full = vae.decode(z).to(at::kFloat);
    const double blended = seamJump(kiln::models::decodeTiled(vae, z, {24, 8}), full);
    const double cut = seamJump(kiln::models::decodeTiled(vae, z, {24, 0}), full);
    qInfo("largest step in the error field: blended %.4f, hard cut %.4f", blended, cut);
    QVERIFY2(blended < 0.5 * cut,
             qPrintable(QString("blended %1 vs cut %2").arg(blended).arg(cut)));
  }

  void tiledEncodeMatchesFull_data() { families(); }
  void tiledEncodeMatchesFull() {
    QFETCH(QString, family);
    at::NoGradGuard no_grad;
    const auto& vae = pipeline(family.toStdString()).vae();
    const at::Tensor image = vae.decode(randomLatent(64, 64, 5)).to(at::kFloat).clamp(-1, 1);
    const at::Tensor full = vae.encodeMoments(image).to(at::kFloat);
    const at::Tensor tiled = kiln::models::encodeMomentsTiled(vae, image, {32, 8});
    QCOMPARE(tiled.sizes(), full.sizes());
    const double mean = meanAbsDiff(tiled, full), max = maxAbsDiff(tiled, full);
    qInfo("%s tiled vs full encode: mean %.4f, max %.4f (moments span %.2f)", qPrintable(family),
          mean, max, maxAbs(full));
    QVERIFY2(mean < 0.05, qPrintable(QString("mean abs difference %1").arg(mean)));
    QVERIFY2(max < 1.0, qPrintable(QString("max abs difference %1").arg(max)));
  }

  // The estimates the plan rests on bound what the counting allocator measures, without
  // overshooting it by much.
  void estimatesBoundMeasuredPeaks_data() {
    QTest::addColumn<bool>("bf16");
    QTest::addColumn<int>("latent");
    for (const bool bf16 : {false, true})
      for (const int latent : {32, 64})
        QTest::newRow((std::string(bf16 ? "bf16/" : "fp32/") + std::to_string(latent)).c_str())
            << bf16 << latent;
  }
  void estimatesBoundMeasuredPeaks() {
    QFETCH(bool, bf16);
    QFETCH(int, latent);
    at::NoGradGuard no_grad;
    const at::ScalarType dtype = bf16 ? at::kBFloat16 : at::kFloat;
    const auto& p = pipeline("sd1", dtype);
    const auto& config = p.vae().config();
    const at::Tensor z = randomLatent(latent, latent, 3).to(dtype);
    const at::Tensor image = at::rand({1, 3, latent * 8, latent * 8}) * 2 - 1;
    const Tiles tiles{latent / 2, 4};
    struct Case {
      const char* what;
      int64_t measured, estimated;
    };
    const std::vector<Case> cases{
        {"decode", measurePeak([&] { (void)p.vae().decode(z).to(at::kFloat); }),
         kiln::models::decodeWorkingBytes(config, latent, latent, dtype)},
        {"encode", measurePeak([&] { (void)p.vae().encodeMoments(image); }),
         kiln::models::encodeWorkingBytes(config, latent * 8, latent * 8, dtype)},
        {"tiled decode", measurePeak([&] { (void)kiln::models::decodeTiled(p.vae(), z, tiles); }),
         kiln::models::tiledDecodeWorkingBytes(config, latent, latent, tiles, dtype)},
        {"tiled encode",
         measurePeak([&] { (void)kiln::models::encodeMomentsTiled(p.vae(), image, tiles); }),
         kiln::models::tiledEncodeWorkingBytes(config, latent * 8, latent * 8, tiles, dtype)},
    };
    for (const Case& c : cases) {
      const double ratio = static_cast<double>(c.estimated) / static_cast<double>(c.measured);
      qInfo("%s: measured %lld, estimated %lld bytes (x%.2f)", c.what,
            static_cast<long long>(c.measured), static_cast<long long>(c.estimated), ratio);
      QVERIFY2(ratio >= 1.0 && ratio <= 1.5,
               qPrintable(QString("%1: estimate x%2 of the peak").arg(c.what).arg(ratio)));
    }
  }

  // The text encoders' and the sampler's estimates (what a job makes room for before it
  // encodes and samples) bound what the counting allocator measures, without overshooting
  // it by much (beyond the 1 MiB per model the estimates allow for small tensors, which is
  // most of what the tiny text encoders hold).
  void samplingEstimatesBoundMeasuredPeaks_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<bool>("bf16");
    QTest::addColumn<int>("latent");
    for (const char* family : {"sd1", "sdxl"})
      for (const bool bf16 : {false, true})
        for (const int latent : {32, 64})
          QTest::newRow(
              (std::string(family) + (bf16 ? "/bf16/" : "/fp32/") + std::to_string(latent)).c_str())
              << QString(family) << bf16 << latent;
  }
  void samplingEstimatesBoundMeasuredPeaks() {
    QFETCH(QString, family);
    QFETCH(bool, bf16);
    QFETCH(int, latent);
    at::NoGradGuard no_grad;
    const auto& p = pipeline(family.toStdString(), bf16 ? at::kBFloat16 : at::kFloat);
    const kiln::pipelines::Conditioning cond =
        p.encodePrompts("a red circle on a blue square", "blurry");
    const at::Tensor noise = at::randn({1, p.spec().unet.in_channels, latent, latent});
    kiln::pipelines::SamplerSettings settings;
    settings.sampler = kiln::sampling::SamplerKind::DpmPP2M;  // keeps a history
    const int64_t encode =
        measurePeak([&] { (void)p.encodeWeighted("a red circle on a blue square"); });
    const int64_t sample = measurePeak([&] {
      (void)p.sample(cond, noise, 3, 5.0,
                     kiln::pipelines::SizeConditioning::forImage(latent * 8, latent * 8), {},
                     nullptr, settings);
    });
    const int64_t encode_estimate = p.encodingWorkingBytes(1);
    const int64_t sample_estimate = p.samplingWorkingBytes(latent, latent, cond.context.size(1));
    for (const auto& [what, measured, estimated] :
         {std::tuple{"encode", encode, encode_estimate},
          std::tuple{"sample", sample, sample_estimate}}) {
      const double ratio = static_cast<double>(estimated) / static_cast<double>(measured);
      qInfo("%s: measured %lld, estimated %lld bytes (x%.2f)", what,
            static_cast<long long>(measured), static_cast<long long>(estimated), ratio);
      QVERIFY2(ratio >= 1.0 && estimated <= 2 * measured + 2 * kMiB,
               qPrintable(QString("%1: estimate x%2 of the peak").arg(what).arg(ratio)));
    }
  }

  // 2048x2048 in 512-pixel tiles holds a small fraction of what the full decode holds.
  void largeTiledDecodePeak() {
    at::NoGradGuard no_grad;
    const auto& vae = pipeline("sd1").vae();
    const at::Tensor z = randomLatent(256, 256, 1);
    const int64_t full = measurePeak([&] { (void)vae.decode(z).to(at::kFloat); });
    const int64_t tiled = measurePeak([&] { (void)kiln::models::decodeTiled(vae, z, {64, 8}); });
    qInfo("2048x2048 decode peak: full %lld MiB, 512-pixel tiles %lld MiB",
          static_cast<long long>(full / kMiB), static_cast<long long>(tiled / kMiB));
    QVERIFY2(full > 3000 * kMiB, "the full decode's peak is what the architecture implies");
    QVERIFY2(tiled < full / 8,
             qPrintable(QString("tiled peak %1 bytes, full %2").arg(tiled).arg(full)));
    QVERIFY2(tiled < 400 * kMiB, qPrintable(QString("tiled peak %1 bytes").arg(tiled)));
  }

  // Auto plans from the estimate: full where it fits, tiles where it does not.
  void autoPlansFromAvailableMemory() {
    const auto& config = pipeline("sd1").vae().config();
    using kiln::pipelines::VaeWork;
    const kiln::tiling::TileSettings automatic{kiln::VaeTiling::Auto, 0, 64};
    const int64_t full = kiln::models::decodeWorkingBytes(config, 128, 128, at::kFloat);
    const auto roomy = kiln::pipelines::planVae(VaeWork::Decode, automatic, config, 1024, 1024,
                                                at::kFloat, 2 * full);
    QVERIFY(!roomy.tiled);
    QCOMPARE(roomy.estimated_bytes, full);
    const auto tight = kiln::pipelines::planVae(VaeWork::Decode, automatic, config, 1024, 1024,
                                                at::kFloat, full / 2);
    QVERIFY(tight.tiled);
    QVERIFY(tight.estimated_bytes <= full / 2 / 10 * 9);
    QVERIFY(tight.tile_pixels < 1024 && tight.tile_pixels >= 128);
    QVERIFY(tight.describe().find("tiled decode") != std::string::npos);
    // A larger tile would not have fitted.
    const kiln::tiling::TileSettings larger{kiln::VaeTiling::Always, tight.tile_pixels * 2, 64};
    if (tight.tile_pixels * 2 < 1024)
      QVERIFY(kiln::pipelines::planVae(VaeWork::Decode, larger, config, 1024, 1024, at::kFloat, -1)
                  .estimated_bytes > full / 2 / 10 * 9);
    const kiln::tiling::TileSettings never{kiln::VaeTiling::Never, 0, 64};
    QVERIFY(
        !kiln::pipelines::planVae(VaeWork::Decode, never, config, 1024, 1024, at::kFloat, 1).tiled);
    const kiln::tiling::TileSettings always{kiln::VaeTiling::Always, 0, 64};
    const auto forced =
        kiln::pipelines::planVae(VaeWork::Encode, always, config, 1024, 1024, at::kFloat, -1);
    QVERIFY(forced.tiled);
    QCOMPARE(forced.tile_pixels, int64_t{512});
    QCOMPARE(forced.tile_count, int64_t{9});  // 512-pixel tiles overlapping by 64 over 1024 pixels
    QVERIFY_THROWS_EXCEPTION(kiln::Error,
                             kiln::tiling::validateTiling({kiln::VaeTiling::Always, 256, 200}));
    QVERIFY_THROWS_EXCEPTION(kiln::Error,
                             kiln::tiling::validateTiling({kiln::VaeTiling::Always, 32, 0}));
  }

  // A full decode planned with memory that is not there runs out, frees what it held, and
  // is retried in tiles, saying so in the log and in the stage's label; the result is the
  // tiled decode's.
  void outOfMemoryRetriesTiled() {
    at::NoGradGuard no_grad;
    const auto& p = pipeline("sd1");
    const at::Tensor latent = randomLatent(64, 64, 9) * p.spec().vae.scaling_factor;
    const int64_t full = kiln::models::decodeWorkingBytes(p.vae().config(), 64, 64, at::kFloat);
    kiln::memory::SimulatedDevice device(full / 3);
    std::vector<kiln::Event> events;
    kiln::nodes::RunEnvironment env;
    env.emit = [&](kiln::Event e) { events.push_back(std::move(e)); };
    kiln::nodes::ProgressTracker tracker(env, {kiln::StageKind::Invalid, "sd1", 512 * 512, "fp32"});
    const int stage = tracker.add(kiln::StageKind::Decode, "Decoding", "tile passes", 1, 0, 1);
    tracker.plan();
    tracker.start(stage);
    at::Tensor image;
    {
      kiln::memory::DeviceScope scope(device);
      image = kiln::nodes::runVaeStage(
          kiln::pipelines::VaeWork::Decode, p.codec(), latent,
          {tracker, stage, env, device, {kiln::VaeTiling::Auto, 0, 64}, [] {
             return int64_t{64} << 30;
           }});  // believes there is plenty
    }
    tracker.finish(stage);
    bool logged = false, relabelled = false;
    for (const auto& e : events) {
      if (e.type == kiln::EventType::Log &&
          e.message.find("the full decode ran out of memory") != std::string::npos)
        logged = true;
      if (e.type == kiln::EventType::StageUpdated && !e.stages.empty() &&
          e.stages[0].name.find("after running out of memory") != std::string::npos)
        relabelled = e.total > 1;
    }
    QVERIFY(logged);
    QVERIFY(relabelled);
    QCOMPARE(tracker.stage(stage).total, int64_t{2 * 9});  // 256-pixel tiles over 512 pixels
    const at::Tensor expected = p.decode(latent, std::make_unique<Tiles>(Tiles{32, 8}).get());
    QVERIFY(at::equal(image.to(at::kFloat), expected));
    // Nothing of the failed attempt stays behind on the device.
    image = at::Tensor();
    QCOMPARE(device.memory().allocated_bytes, int64_t{0});
    QVERIFY(device.memory().peak_allocated_bytes <= full / 3);
  }

  // With tiling off, running out of memory is an error.
  void neverTilingFailsOutOfMemory() {
    at::NoGradGuard no_grad;
    const auto& p = pipeline("sd1");
    const at::Tensor latent = randomLatent(32, 32, 9);
    kiln::memory::SimulatedDevice device(8 * kMiB);
    kiln::nodes::RunEnvironment env;
    env.emit = [](kiln::Event) {};
    kiln::nodes::ProgressTracker tracker(env, {kiln::StageKind::Invalid, "sd1", 256 * 256, "fp32"});
    const int stage = tracker.add(kiln::StageKind::Decode, "Decoding", "tile passes", 1, 0, 1);
    tracker.start(stage);
    kiln::memory::DeviceScope scope(device);
    bool out_of_memory = false;
    try {
      (void)kiln::nodes::runVaeStage(
          kiln::pipelines::VaeWork::Decode, p.codec(), latent,
          {tracker, stage, env, device, {kiln::VaeTiling::Never, 0, 64}, {}});
    } catch (...) {
      out_of_memory = kiln::core::isOutOfMemory(std::current_exception());
    }
    QVERIFY(out_of_memory);
  }
};

QTEST_GUILESS_MAIN(TestVaeTiling)
#include "test_vae_tiling.moc"
