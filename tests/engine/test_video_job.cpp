// Video jobs with the tiny Wan 2.1 model: the render API (frames, sizes snapped with a
// notice, stills, determinism, both model layouts), the engine's save stage writing real
// video files through FFmpeg, cancelling while encoding, and the refusals.
#include <QTemporaryDir>
#include <QtTest>

#include <ATen/ATen.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "checkpoint_variants.h"
#include "kiln/engine.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "kiln/render_workflow.h"
#include "kiln/video_io.h"
#include "kiln/workflow.h"
#include "lora_files.h"
#include "memory/device.h"
#include "nodes/model_loading.h"
#include "pipelines/registry.h"
#include "pipelines/wan/wan_pipeline.h"
#include "sanitizer_skips.h"
#include "sim_engine.h"
#include "tensor_io/materialize.h"
#include "tensor_io/safetensors.h"
#include "video_jobs.h"
#include "wan_tiny.h"

namespace fs = std::filesystem;
using kiln::testing::SimEngine;
using namespace kiln::testing;  // the video jobs helpers

class TestVideoJob : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  kiln::testing::WanTinyModel model_;

  // everyPathMakesRoomForItsWork's body, where exceptions become failures.
  void makesRoom() {
    QFETCH(bool, video);
    QFETCH(bool, workflow);
    // The video rows start with the larger SDXL model (the video model's text encoder
    // needs more room than the SD 1.x model's weights).
    const std::string first_model = video ? sdxlTiny() : sd1Tiny();
    kiln::Job second;
    int64_t room =
        0;  // what the second job needs beyond its weights, where more than its first model's
    if (!video) {
      second = pictureJob(sdxlTiny(), workflow);
    } else {
      if (!workflow) {
        second.params = tinyVideo(model_.folder, 5);  // in fp32
      } else {
        kiln::Workflow w =
            textToVideo("LoadVideoModel", model_.folder,
                        {"",
                         "EmptyVideoLatent",
                         {{"width", int64_t{64}}, {"height", int64_t{48}}, {"frames", int64_t{5}}},
                         0,
                         0,
                         ""},
                        {"", "PreviewImage", {}, 0, 0, ""});
        w.nodes.front().params["dtype"] = std::string("fp32");
        second.workflow = std::make_shared<const kiln::Workflow>(std::move(w));
      }
      const kiln::pipelines::WanPipeline pipe(kiln::pipelines::resolveWanModel(model_.folder),
                                              at::kFloat, at::kFloat);
      room = std::max({pipe.encodingWorkingBytes(), pipe.samplingWorkingBytes(5, 48, 64),
                       pipe.decodingWorkingBytes(48, 64, {})});
    }
    // The weights of both, measured on a roomy device.
    int64_t first_bytes = 0, both_bytes = 0;
    {
      SimEngine roomy("sim:1GiB");
      QCOMPARE(roomy.run(pictureJob(first_model, workflow)).type, kiln::EventType::JobFinished);
      first_bytes = roomy.engine().memoryStats().cached_model_device_bytes;
      const kiln::Event end = roomy.run(second);
      QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
      both_bytes = roomy.engine().memoryStats().cached_model_device_bytes;
      QVERIFY(!roomy.logged("to make room"));
    }
    QVERIFY(first_bytes > 0 && both_bytes > first_bytes);
    // Room for both models' weights, or for the second's weights and work, and 256 KiB:
    // not for the first model's weights and the second's work.
    const int64_t second_bytes = both_bytes - first_bytes;
    SimEngine tight("sim:" +
                    std::to_string(std::max(both_bytes, second_bytes + room) + 256 * 1024));
    const kiln::Event first = tight.run(pictureJob(first_model, workflow));
    QVERIFY2(first.type == kiln::EventType::JobFinished, first.message.c_str());
    const kiln::Event end = tight.run(second);
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    QVERIFY(tight.logged("moved " + std::filesystem::path(first_model).stem().string()));
    QVERIFY(!tight.logged("asked to make room for 0 bytes"));
    QVERIFY(!tight.logged("could not estimate"));
    QCOMPARE(tight.engine().memoryStats().cached_models, 2);  // moved, not dropped
  }

 private Q_SLOTS:
  void initTestCase() {
    KILN_SKIP_WITHOUT_SENTENCEPIECE();  // every case renders with the UMT5 tokenizer
    model_ = kiln::testing::writeWanTinyModel(dir_.path().toStdString());
    QVERIFY(kiln::pipelines::isWanModel(model_.folder));
    QVERIFY(kiln::pipelines::isWanModel(model_.transformer));
    QVERIFY(!kiln::pipelines::isWanModel(model_.vae));
    QVERIFY(!kiln::pipelines::isWanModel(
        kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors")));
  }

  void rendersFramesFromAFolder() {
    std::vector<kiln::RenderProgress> progress;
    const auto r = kiln::render(tinyVideo(model_.folder, 5),
                                [&](const kiln::RenderProgress& p) { progress.push_back(p); });
    QCOMPARE(r.model_family, std::string("wan21"));
    QCOMPARE(r.frames.size(), std::size_t{5});
    QCOMPARE(r.fps, 8.0);
    for (const auto& f : r.frames) {
      QCOMPARE(f.width, 64);
      QCOMPARE(f.height, 48);
      QCOMPARE(f.channels, 3);
    }
    QVERIFY(samePixels(r.image, r.frames.front()));
    const std::string params = r.image.text.at("parameters");
    QVERIFY2(params.find("Frames: 5") != std::string::npos &&
                 params.find("Sampler: UniPC") != std::string::npos &&
                 params.find("Shift: 3") != std::string::npos,  // the folder's scheduler says 3
             params.c_str());
    // every stage reported, decoding in latent frames (1 + 4 frames = 2 latent frames)
    const auto reached = [&](const std::string& stage, int64_t done, int64_t total) {
      return std::any_of(progress.begin(), progress.end(), [&](const kiln::RenderProgress& p) {
        return p.stage == stage && p.done == done && p.total == total;
      });
    };
    QVERIFY(reached("Encoding prompt", 2, 2));
    QVERIFY(reached("Denoising", 3, 3));
    QVERIFY(reached("Decoding", 2, 2));
    // frames move: the last frame is not the first
    QVERIFY(meanAbsDiff(r.frames.front(), r.frames.back()) > 1e-4);
    // the same seed gives the same video, another seed another
    const auto again = kiln::render(tinyVideo(model_.folder, 5));
    QVERIFY(samePixels(again.frames.back(), r.frames.back()));
    auto other = tinyVideo(model_.folder, 5);
    other.sampling.seed = 8;
    QVERIFY(!samePixels(kiln::render(other).frames.back(), r.frames.back()));
  }

  // The job's frames are the pipeline's, run by hand.
  // Every path makes room for the work it is about to do, not only for the weights: on a
  // simulated device that holds both models' weights with almost nothing to spare, the
  // second model's job succeeds by moving the first model off the device, as a render
  // job, as a workflow and as a video job (each used to run out of memory in a workflow
  // or video job, which made room for 0 bytes of work).
  void everyPathMakesRoomForItsWork_data() {
    QTest::addColumn<bool>("video");
    QTest::addColumn<bool>("workflow");
    QTest::newRow("render job") << false << false;
    QTest::newRow("workflow") << false << true;
    QTest::newRow("video job") << true << false;
    QTest::newRow("video workflow") << true << true;
  }
  void everyPathMakesRoomForItsWork() {
    try {
      makesRoom();
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }
  // The video model's estimates (what a job makes room for before each stage) bound what
  // the counting allocator measures, without overshooting it by much (beyond the 1 MiB the
  // estimates allow for small tensors): at most twice, the decode's at most four times (it
  // is the tile planner's, which counts every frame of a chunk at the full resolution's
  // largest block).
  void estimatesBoundMeasuredPeaks() {
    at::NoGradGuard no_grad;
    const kiln::pipelines::WanPipeline pipe(kiln::pipelines::resolveWanModel(model_.folder),
                                            at::kBFloat16, at::kBFloat16);
    const auto measurePeak = [](const std::function<void()>& fn) {
      kiln::memory::SimulatedDevice dev(int64_t{8} << 30);
      {
        kiln::memory::DeviceScope scope(dev);
        fn();
      }
      return dev.memory().peak_allocated_bytes;
    };
    const at::Tensor pos = pipe.encodePrompt("a red cat runs across a field"),
                     neg = pipe.encodePrompt("blurry");
    kiln::pipelines::WanSampleSettings s;
    s.steps = 2;
    s.guidance = 5.0;
    const int64_t frames = 9, height = 96, width = 128;
    const at::Tensor latent = pipe.sample(pos, neg, frames, height, width, 7, s);
    const int64_t mib = int64_t{1} << 20;
    for (const auto& [what, measured, estimated, most] :
         {std::tuple{"encode", measurePeak([&] { (void)pipe.encodePrompt("a red cat"); }),
                     pipe.encodingWorkingBytes(), 2},
          std::tuple{"sample",
                     measurePeak([&] { (void)pipe.sample(pos, neg, frames, height, width, 7, s); }),
                     pipe.samplingWorkingBytes(frames, height, width), 2},
          std::tuple{"decode",
                     measurePeak([&] { (void)pipe.decode(latent, 1, [](const at::Tensor&) {}); }),
                     pipe.decodingWorkingBytes(height, width, {}), 4}}) {
      const double ratio = static_cast<double>(estimated) / static_cast<double>(measured);
      qInfo("%s: measured %lld, estimated %lld bytes (x%.2f)", what,
            static_cast<long long>(measured), static_cast<long long>(estimated), ratio);
      QVERIFY2(ratio >= 1.0 && estimated <= most * measured + mib,
               qPrintable(QString("%1: estimate x%2 of the peak").arg(what).arg(ratio)));
    }
  }

  void matchesThePipeline() {
    const auto r = kiln::render(tinyVideo(model_.folder, 5));
    const kiln::pipelines::WanPipeline pipe(kiln::pipelines::resolveWanModel(model_.folder),
                                            at::kFloat, at::kFloat);
    kiln::pipelines::WanSampleSettings s;
    s.steps = 3;
    s.guidance = 5.0;
    s.shift = 3.0;
    const at::Tensor latent = pipe.sample(pipe.encodePrompt("a red cat runs across a field"),
                                          pipe.encodePrompt("blurry"), 5, 48, 64, 7, s);
    std::vector<at::Tensor> chunks;
    pipe.decode(latent, 1, [&](const at::Tensor& f) { chunks.push_back(f); });
    const at::Tensor video = at::cat(chunks, 2);  // [1, 3, 5, 48, 64]
    QCOMPARE(video.size(2), int64_t{5});
    const at::Tensor last = video[0].select(1, 4).permute({1, 2, 0}).contiguous();
    const auto& img = r.frames.back();
    const at::Tensor got =
        at::from_blob(const_cast<float*>(img.pixels.data()), {48, 64, 3}, at::kFloat);
    QVERIFY(kiln::testing::maxAbsDiff(got, last) < 1e-5);
  }

  void rendersFromComfyUiSingleFiles() {
    std::vector<std::string> logs;
    const auto r = kiln::render(tinyVideo(model_.transformer, 9));
    QCOMPARE(r.frames.size(), std::size_t{9});
    // and with the parts named explicitly
    auto p = tinyVideo(model_.transformer, 1);
    p.model.vae_path = model_.vae;
    p.model.text_encoder_path = model_.text_encoder;
    const auto still = kiln::render(p);
    QCOMPARE(still.frames.size(), std::size_t{1});
    QVERIFY(still.image.text.at("parameters").find("Shift: 5") !=
            std::string::npos);  // Wan's default
  }

  void snapsFramesAndSizeWithANotice() {
    auto p = tinyVideo(model_.folder, 6);
    p.size.width = 70;
    p.size.height = 50;
    const auto r = kiln::render(p);
    QCOMPARE(r.frames.size(), std::size_t{5});  // the nearest 1 + 4n
    QCOMPARE(r.frames.front().width, 64);
    QCOMPARE(r.frames.front().height, 48);
    const auto has = [&](const char* what) {
      return std::any_of(r.notices.begin(), r.notices.end(),
                         [&](const std::string& n) { return n.find(what) != std::string::npos; });
    };
    QVERIFY(has("6 frames are not on the model's grid of 1 + 4n; rendering 5"));
    QVERIFY(has("size 70x50 is not a multiple of 16; rendering 64x48"));
    QCOMPARE(kiln::pipelines::snapFrames(8, 4), int64_t{9});
    QCOMPARE(kiln::pipelines::snapFrames(7, 4), int64_t{9});  // halfway rounds up
    QCOMPARE(kiln::pipelines::snapFrames(1, 4), int64_t{1});
    QCOMPARE(kiln::pipelines::snapFrames(2, 4), int64_t{1});
  }

  void writesVideoFilesThroughTheEngine_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("mp4") << "clip.mp4";
    QTest::newRow("webm") << "clip.webm";
    QTest::newRow("png") << "frames/";
  }
  void writesVideoFilesThroughTheEngine() {
    QFETCH(QString, name);
    QTemporaryDir out;
    kiln::Job job;
    job.params = tinyVideo(model_.folder, 9);
    job.output_path = out.path().toStdString() + "/" + name.toStdString();
    const EngineRun run = runOnEngine(job);
    QVERIFY2(run.end.type == kiln::EventType::JobFinished, run.end.message.c_str());
    QCOMPARE(run.end.output_paths, std::vector<std::string>{job.output_path});
    QCOMPARE(run.end.model_family, std::string("wan21"));
    // the plan names the encode as its own stage, counted in frames
    const auto planned =
        std::find_if(run.events.begin(), run.events.end(),
                     [](const kiln::Event& e) { return e.type == kiln::EventType::StagePlanned; });
    QVERIFY(planned != run.events.end());
    QVERIFY(std::any_of(planned->stages.begin(), planned->stages.end(), [](const kiln::Stage& s) {
      return s.kind == kiln::StageKind::EncodeVideo && s.total == 9 && s.unit == "frames";
    }));
    const kiln::Video v = kiln::readVideo(job.output_path);
    QCOMPARE(static_cast<int>(v.frames.size()), 9);
    QCOMPARE(v.width, 64);
    QCOMPARE(v.height, 48);
    QVERIFY(std::abs(v.fps - 8.0) < 1e-6);
    QVERIFY(v.metadata.at("parameters").find("Frames: 9") != std::string::npos);
    // the first frame as generated (the render API gives the same frames): within the
    // lossy codecs' error on this noise-like random-weight video, and far nearer to it
    // than to another frame
    const auto r = kiln::render(tinyVideo(model_.folder, 9));
    const double err = meanAbsDiff(v.frames.front(), r.frames.front());
    const double other = meanAbsDiff(v.frames.front(), r.frames.back());
    QVERIFY2(err < 0.06 && err < 0.5 * other, ("first frame differs by " + std::to_string(err) +
                                               ", from the last by " + std::to_string(other))
                                                  .c_str());
  }

  void cancelWhileEncodingLeavesNoFile() {
    QTemporaryDir out;
    kiln::Job job;
    job.params = tinyVideo(model_.folder, 9);
    job.output_path = out.path().toStdString() + "/clip.mp4";
    int encode_stage = -1;
    const EngineRun run = runOnEngine(job, [&](kiln::Engine& engine, const kiln::Event& e) {
      if (e.type == kiln::EventType::StagePlanned)
        for (std::size_t i = 0; i < e.stages.size(); ++i)
          if (e.stages[i].kind == kiln::StageKind::EncodeVideo) encode_stage = static_cast<int>(i);
      if (e.type == kiln::EventType::Progress && e.stage == encode_stage && e.done >= 3)
        engine.cancel(e.job);
    });
    QVERIFY(encode_stage >= 0);
    QCOMPARE(run.end.type, kiln::EventType::JobCancelled);
    QCOMPARE(entries(out.path().toStdString()), std::size_t{0});
  }

  // The same video through workflow nodes: LoadVideoModel, TextEncode, EmptyVideoLatent,
  // Sampler, VAEDecode and SaveVideo, whose file carries the workflow.
  void runsAsAWorkflow() {
    QTemporaryDir out;
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(
        textToVideo("LoadVideoModel", model_.folder,
                    {"",
                     "EmptyVideoLatent",
                     {{"width", int64_t{64}}, {"height", int64_t{48}}, {"frames", int64_t{5}}},
                     0,
                     0,
                     ""},
                    {"", "SaveVideo", {{"fps", 8.0}, {"format", std::string("webm")}}, 0, 0, ""}));
    job.output_dir = out.path().toStdString();
    const EngineRun run = runOnEngine(job);
    QVERIFY2(run.end.type == kiln::EventType::JobFinished, run.end.message.c_str());
    QCOMPARE(run.end.output_paths.size(), std::size_t{1});
    const std::string path = run.end.output_paths.front();
    QVERIFY2(path.size() > 5 && path.substr(path.size() - 5) == ".webm", path.c_str());
    // the frames are the render API's, both in the default (auto) precision
    auto params = tinyVideo(model_.folder, 5);
    params.model.dtype = kiln::ComputeDType::Auto;
    const auto r = kiln::render(params);
    QVERIFY(samePixels(run.end.outputs.at(0), r.frames.front()));
    // the decode reported one pass per latent frame
    QVERIFY(std::any_of(run.events.begin(), run.events.end(), [](const kiln::Event& e) {
      return e.type == kiln::EventType::Progress && e.unit == "tile passes" && e.done == 2 &&
             e.total == 2;
    }));
    const kiln::Video v = kiln::readVideo(path);
    QCOMPARE(static_cast<int>(v.frames.size()), 5);
    QVERIFY(std::abs(v.fps - 8.0) < 1e-6);
    const kiln::Workflow restored = kiln::parseWorkflow(v.metadata.at("kiln_workflow"));
    QCOMPARE(restored.nodes.size(), std::size_t{7});
    QVERIFY(v.metadata.at("parameters").find("Frames: 5") != std::string::npos);
  }

  // A video model picked where a checkpoint goes (LoadCheckpoint, as the generate panel's
  // template has it) with an EmptyLatent renders stills on the model's own grid (16
  // channels, 1/8): image b of a batch with seed + b, each what the render API draws as a
  // one-frame video, with the same parameters text.
  void checkpointLoaderRendersStillsWithAVideoModel() {
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(
        textToVideo("LoadCheckpoint", model_.folder,
                    {"",
                     "EmptyLatent",
                     {{"width", int64_t{64}}, {"height", int64_t{64}}, {"batch_size", int64_t{2}}},
                     0,
                     0,
                     ""},
                    {"", "PreviewImage", {}, 0, 0, ""}));
    const EngineRun run = runOnEngine(job);
    QVERIFY2(run.end.type == kiln::EventType::JobFinished, run.end.message.c_str());
    QCOMPARE(run.end.outputs.size(), std::size_t{2});
    for (int b = 0; b < 2; ++b) {
      auto params = tinyVideo(model_.folder, 1);
      params.size.width = 64;
      params.size.height = 64;
      params.sampling.seed = 7 + b;
      params.model.dtype = kiln::ComputeDType::Auto;
      const auto r = kiln::render(params);
      const kiln::Image& still = run.end.outputs.at(static_cast<std::size_t>(b));
      QCOMPARE(still.width, 64);
      QCOMPARE(still.height, 64);
      QVERIFY(samePixels(still, r.image));
      QCOMPARE(still.text.at("parameters"), r.image.text.at("parameters"));
    }
    QVERIFY(!samePixels(run.end.outputs[0], run.end.outputs[1]));
  }

  // Video memory defaults on an accelerator (a simulated one here): the UMT5 encoder
  // offloaded leaf by leaf, the VAE onloaded whole for its calls when above the resident
  // threshold, the transformer as the settings say; a user's own choice wins.
  void videoPlacementDefaults() {
    kiln::memory::SimulatedDevice device(int64_t{256} << 20);
    const auto& family = kiln::pipelines::familyOf(model_.folder);
    QVERIFY(family.video);
    auto model = kiln::nodes::loadModel(
        family, family.resolve({model_.folder, {}, {}, at::kFloat, {}}), device, {});
    kiln::memory::OffloadSettings settings;
    settings.vae_resident_threshold_bytes = 1024;  // the tiny VAE counts as large
    model->place(settings, 0);
    const auto& p = model->placements();
    QCOMPARE(p.size(), std::size_t{3});
    QCOMPARE(p[0]->component().name, std::string("text_encoder"));
    QCOMPARE(p[0]->decision().mode, kiln::memory::OffloadMode::GroupLeaf);
    QCOMPARE(p[1]->decision().mode, kiln::memory::OffloadMode::None);
    QCOMPARE(p[2]->decision().mode, kiln::memory::OffloadMode::Model);
    QVERIFY(p[2]->decision().offload_after_call);
    QVERIFY(p[0]->residentBytes() == 0 && p[2]->residentBytes() == 0);  // both rest in host memory
    QVERIFY(p[1]->residentBytes() > 0);
    // the user's word wins: the VAE kept resident, the encoder at block level
    settings.never = {"vae"};
    settings.per_component["text_encoder"] = kiln::memory::OffloadMode::None;
    model->place(settings, 0);
    QCOMPARE(p[0]->decision().mode, kiln::memory::OffloadMode::None);
    QCOMPARE(p[2]->decision().mode, kiln::memory::OffloadMode::None);
    model->offload();
    QCOMPARE(model->deviceBytes(), int64_t{0});
  }

  // A render's picture carries the workflow that draws it: that workflow, run on the
  // engine as the app and `kiln-cli run` run it, draws the same pixels and the same A1111
  // text, for SD 1.x, SDXL (with a LoRA whose strength changes over the steps, and size
  // conditioning from a cropped larger original) and a Wan still.
  void renderedPicturesCarryTheirWorkflow_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("sampler");
    QTest::addColumn<bool>("lora");
    QTest::newRow("sd1") << QString::fromStdString(sd1Tiny()) << "euler" << false;
    QTest::newRow("sdxl-lora") << QString::fromStdString(kiln::testing::conformancePath(
                                      "sd-tiny-1234/sdxl/sdxl_tiny_ldm.safetensors"))
                               << "dpmpp_2m" << true;
    QTest::newRow("wan-still") << QString() << "uni_pc" << false;
  }
  void renderedPicturesCarryTheirWorkflow() {
    QFETCH(QString, model);
    QFETCH(QString, sampler);
    QFETCH(bool, lora);
    kiln::RenderParams p = tinyVideo(model.isEmpty() ? model_.folder : model.toStdString(), 1);
    p.sampling.sampler = sampler.toStdString();
    p.size.width = p.size.height = 64;
    p.video.frames = model.isEmpty() ? 1 : 0;  // a Wan render without a file: one frame
    if (lora) {
      // A LoRA on the first down block's first attention's query, in kohya's names.
      const auto file = kiln::tensor_io::SafetensorsFile::open(p.model.path);
      for (const auto& info : file->tensors())
        if (info.name.ends_with("attn1.to_q.weight") &&
            info.name.find("input_blocks") != std::string::npos) {
          std::string module = info.name.substr(std::string("model.diffusion_model.").size());
          module = module.substr(0, module.size() - std::string(".weight").size());
          std::replace(module.begin(), module.end(), '.', '_');
          const int64_t out = info.shape[0], in = info.shape[1];
          const std::string path = dir_.filePath("sdxl_lora.safetensors").toStdString();
          at::manual_seed(3);
          kiln::testing::writeTensors(
              path, {{"lora_unet_" + module + ".lora_down.weight", at::randn({2, in}) * 0.3},
                     {"lora_unet_" + module + ".lora_up.weight", at::randn({out, 2}) * 0.3}});
          // Its strength changes half-way (hooked), and SDXL's size conditioning claims a
          // cropped larger original: both travel in the workflow.
          p.model.loras.push_back({path, 0.8, 1.0, {{0.5, 0.2}}});
          p.size.original_width = 128;
          p.size.original_height = 96;
          p.size.crop_top = 16;
          p.size.crop_left = 8;
          break;
        }
      QCOMPARE(p.model.loras.size(), std::size_t{1});
    }
    const kiln::RenderResult r = kiln::render(p);
    QVERIFY(r.image.text.count("kiln_workflow"));
    if (lora) {  // each setting reaches the picture
      kiln::RenderParams plain_size = p, steady = p;
      plain_size.size.original_width = plain_size.size.original_height = 0;
      plain_size.size.crop_top = plain_size.size.crop_left = 0;
      steady.model.loras.front().keyframes.clear();
      QVERIFY(!samePixels(kiln::render(plain_size).image, r.image));
      QVERIFY(!samePixels(kiln::render(steady).image, r.image));
    }
    const kiln::Workflow carried = kiln::parseWorkflow(r.image.text.at("kiln_workflow"));
    QCOMPARE(carried.node("model")->params.at("ckpt_name"), kiln::ParamValue(p.model.path));
    SimEngine sim("cpu", 1);
    kiln::Workflow w = carried;
    w.node("save")->type = "PreviewImage";  // no file writer here
    w.node("save")->params.clear();
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(w);
    const kiln::Event end = sim.run(job);
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    const kiln::Image& drawn = end.outputs.at(0);
    QCOMPARE(drawn.width, r.image.width);
    QVERIFY2(samePixels(drawn, r.image), qPrintable(QString::number(meanAbsDiff(drawn, r.image))));
    QCOMPARE(drawn.text.at("parameters"), r.image.text.at("parameters"));
  }

  // A Wan LoRA (diffusers/PEFT names on the transformer) through the render API and
  // through a workflow's LoadLoRAModelOnly draws what the model with the LoRA merged into
  // its file by hand draws; the cached model goes back to its own weights after.
  void loraOnAVideoModel() {
    at::manual_seed(5);
    const at::Tensor down = at::randn({4, 32}) * 0.5, up = at::randn({32, 4}) * 0.5,
                     ffn_up = at::randn({64, 4}) * 0.5;
    const std::string lora = dir_.filePath("wan_lora.safetensors").toStdString();
    kiln::testing::writeTensors(lora,
                                {{"transformer.blocks.0.attn1.to_q.lora_A.weight", down},
                                 {"transformer.blocks.0.attn1.to_q.lora_B.weight", up},
                                 {"transformer.blocks.0.ffn.net.0.proj.lora_A.weight", down},
                                 {"transformer.blocks.0.ffn.net.0.proj.lora_B.weight", ffn_up}});
    // The same change written into a copy of the model's transformer file.
    const fs::path merged = fs::path(dir_.path().toStdString()) / "wan-merged";
    fs::copy(model_.folder, merged, fs::copy_options::recursive);
    {
      const fs::path file =
          fs::path(model_.folder) / "transformer" / "diffusion_pytorch_model.safetensors";
      const auto source = kiln::tensor_io::SafetensorsFile::open(file.string());
      kiln::testing::NamedTensors tensors;
      for (const auto& info : source->tensors()) {
        at::Tensor t = kiln::tensor_io::viewStored({source, &info}).to(at::kFloat);
        if (info.name == "blocks.0.attn1.to_q.weight") t = t + at::matmul(up, down);
        if (info.name == "blocks.0.ffn.net.0.proj.weight") t = t + at::matmul(ffn_up, down);
        tensors.push_back({info.name, t});
      }
      fs::remove(merged / "transformer" / "diffusion_pytorch_model.safetensors");
      kiln::testing::writeTensors(
          (merged / "transformer" / "diffusion_pytorch_model.safetensors").string(), tensors);
    }
    const kiln::Image plain = kiln::render(tinyVideo(model_.folder, 1)).frames.at(0);
    const kiln::Image by_hand = kiln::render(tinyVideo(merged.string(), 1)).frames.at(0);
    QVERIFY2(meanAbsDiff(plain, by_hand) > 0.01, "the LoRA changes too little to test");
    auto with_lora = tinyVideo(model_.folder, 1);
    with_lora.model.loras.push_back({lora, 1.0, 1.0, {}});
    const kiln::Image rendered = kiln::render(with_lora).frames.at(0);
    QVERIFY2(meanAbsDiff(rendered, by_hand) < 1e-4,
             qPrintable(QString::number(meanAbsDiff(rendered, by_hand))));

    // Through a workflow on an engine that keeps the model between jobs.
    SimEngine sim("cpu", 1);
    kiln::Workflow w =
        textToVideo("LoadVideoModel", model_.folder,
                    {"",
                     "EmptyVideoLatent",
                     {{"width", int64_t{64}}, {"height", int64_t{48}}, {"frames", int64_t{1}}},
                     0,
                     0,
                     ""},
                    {"", "PreviewImage", {}, 0, 0, ""});
    w.node("model")->params["dtype"] = std::string("fp32");  // as the renders above
    const kiln::Workflow without = w;
    w.nodes.push_back(
        {"lora", "LoadLoRAModelOnly", {{"lora_name", lora}, {"strength_model", 1.0}}, 0, 0, ""});
    for (auto& l : w.links)
      if (l.to_node == "sampler" && l.to_input == "model") l.from_node = "lora";
    w.links.push_back({"model", "MODEL", "lora", "model"});
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(w);
    kiln::Event end = sim.run(job);
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    QVERIFY2(meanAbsDiff(end.outputs.at(0), by_hand) < 1e-4,
             qPrintable(QString::number(meanAbsDiff(end.outputs.at(0), by_hand))));
    QVERIFY(sim.logged("LoRA: "));
    job.workflow = std::make_shared<const kiln::Workflow>(without);
    end = sim.run(job);
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    QVERIFY2(meanAbsDiff(end.outputs.at(0), plain) < 1e-6, "the LoRA stayed on the cached model");
  }

  // One re-placement path for every family: new offload settings while the engine is idle
  // re-place the cached Wan model, an SD model and a lone VAE file at once, without a job
  // and without reloading; "unet" names every family's denoiser (Wan's transformer too).
  void idleSettingsReplaceEveryCachedModel() {
    SimEngine sim("sim:512MiB", 3);
    kiln::Job video;
    video.workflow = std::make_shared<const kiln::Workflow>(
        textToVideo("LoadVideoModel", model_.folder,
                    {"",
                     "EmptyVideoLatent",
                     {{"width", int64_t{64}}, {"height", int64_t{48}}, {"frames", int64_t{1}}},
                     0,
                     0,
                     ""},
                    {"", "PreviewImage", {}, 0, 0, ""}));
    kiln::Event end = sim.run(video);
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    kiln::Workflow image = textToVideo(
        "LoadCheckpoint", sd1Tiny(),
        {"", "EmptyLatent", {{"width", int64_t{64}}, {"height", int64_t{64}}}, 0, 0, ""},
        {"", "PreviewImage", {}, 0, 0, ""});
    image.node("sampler")->params["sampler_name"] = std::string("euler");
    image.nodes.push_back(
        {"vae",
         "LoadVAE",
         {{"vae_name", kiln::testing::conformancePath(
                           "sd-tiny-1234/sd1/vae/diffusion_pytorch_model.safetensors")}},
         0,
         0,
         ""});
    for (auto& l : image.links)
      if (l.to_node == "decode" && l.to_input == "vae") l.from_node = "vae";
    kiln::Job still;
    still.workflow = std::make_shared<const kiln::Workflow>(image);
    end = sim.run(still);
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    QCOMPARE(sim.loggedIdle({"placed "}), 0);

    kiln::OffloadSettings s;
    s.per_component["unet"] = kiln::OffloadMode::GroupBlock;
    s.per_component["vae"] = kiln::OffloadMode::Model;
    s.vae_resident_threshold_bytes = 1024;  // the tiny VAEs count as large: onloaded per call
    sim.engine().setOffloadSettings(s);
    QVERIFY(sim.engine().waitIdle(120));
    QVERIFY(sim.loggedIdle({"placed transformer (WanTransformer3DModel", "group-block"}) >= 1);
    QVERIFY(sim.loggedIdle({"placed unet (UNetModel", "group-block"}) >= 1);
    // the checkpoint's VAE and the file's, each its own model in the cache
    QVERIFY(sim.loggedIdle({"placed vae (AutoencoderKL,", "model"}) >= 2);
    bool block_placed = false;
    for (const auto& line : sim.engine().memoryStats().placements)
      block_placed = block_placed || line.find("group-block") != std::string::npos;
    QVERIFY(block_placed);
  }

  // On a simulated accelerator with those defaults the video is the CPU's.
  void rendersOnASimulatedDevice() {
    QTemporaryDir out;
    kiln::Job job;
    job.params = tinyVideo(model_.folder, 5);
    job.output_path = out.path().toStdString() + "/frames/";
    const EngineRun run = runOnEngine(job, {}, "sim:256MiB");
    QVERIFY2(run.end.type == kiln::EventType::JobFinished, run.end.message.c_str());
    const auto cpu = kiln::render(tinyVideo(model_.folder, 5));
    const kiln::Video v = kiln::readVideo(job.output_path);
    QCOMPARE(v.frames.size(), std::size_t{5});
    QVERIFY(meanAbsDiff(v.frames.back(), cpu.frames.back()) <
            1.0 / 255.0);  // PNG: 8-bit rounding only
    QVERIFY(samePixels(run.end.outputs.at(0), cpu.frames.front()));
  }

  // Both families drawn by one function that knows only pipelines::Pipeline, as the nodes
  // draw them: the latent format says the grid of what is sampled, the native size is what
  // the registry reads from the files, a picture family decodes through its image VAE and
  // a video family through its clip decoder, and each refuses the other's work.
  void bothFamiliesBehindOnePipelineInterface() {
    struct Case {
      std::string path;
      int64_t frames;
    };
    for (const Case& c : {Case{sd1Tiny(), 0}, Case{model_.folder, 5}}) {
      const kiln::pipelines::Family& family = kiln::pipelines::familyOf(c.path);
      const kiln::pipelines::ModelRequest request =
          family.resolve({c.path, {}, {}, at::kFloat, {}});
      const std::unique_ptr<kiln::pipelines::ModelParts> parts = family.open(request, {});
      const auto* pipe = dynamic_cast<const kiln::pipelines::Pipeline*>(parts.get());
      QVERIFY2(pipe, c.path.c_str());
      const kiln::pipelines::LatentFormat format = pipe->latentFormat();
      QCOMPARE(format.video(), family.video);
      QCOMPARE(format.side_multiple % format.spatial, int64_t{0});
      const kiln::pipelines::ModelInfo info = family.inspect(c.path);
      QCOMPARE(info.kind, parts->kindName());
      QCOMPARE(info.native.width, pipe->nativeSize().width);
      QCOMPARE(info.native.height, pipe->nativeSize().height);
      QCOMPARE(info.native.frames, pipe->nativeSize().frames);

      kiln::pipelines::SampleRequest r;
      r.positive = pipe->promptEncoding("a red cat runs across a field");
      r.negative = pipe->promptEncoding("blurry");
      QCOMPARE(r.positive.context.size(-1), pipe->contextWidth());
      r.cfg = 5.0;
      r.height = 48;
      r.width = 64;
      r.frames = c.frames;
      r.steps = 2;
      r.seed = 7;
      r.sampler = format.video() ? "uni_pc" : "euler";
      int64_t steps_seen = 0;
      const at::Tensor latent = pipe->sampleLatent(r, [&](const kiln::pipelines::SampleStep& s) {
        QCOMPARE(s.total, r.steps);
        ++steps_seen;
      });
      QCOMPARE(steps_seen, r.steps);
      QCOMPARE(latent.size(1), format.channels);
      QCOMPARE(latent.size(-2) * format.spatial, r.height);
      QCOMPARE(latent.size(-1) * format.spatial, r.width);
      QVERIFY(at::equal(latent, pipe->sampleLatent(r)));  // the seed fixes it
      if (format.video()) {                               // a clip starts from noise only
        kiln::sampling::LatentInit init;
        init.latent = latent;
        r.init = &init;
        QVERIFY_THROWS_EXCEPTION(kiln::Error, pipe->sampleLatent(r));
        r.init = nullptr;
      }

      at::Tensor frames;  // [n, 3, H, W] in [0, 1]
      if (const std::optional<kiln::pipelines::VaeCodec> codec = pipe->imageCodec()) {
        QCOMPARE(latent.dim(), int64_t{4});
        frames = (codec->decode(latent) / 2 + 0.5).clamp(0, 1);
        QVERIFY_THROWS_EXCEPTION(kiln::Error,
                                 pipe->planClipDecode(latent.size(2), latent.size(3), {}, -1));
      } else {
        QCOMPARE(latent.dim(), int64_t{5});
        QCOMPARE(1 + (latent.size(2) - 1) * format.temporal, c.frames);
        const kiln::pipelines::ClipTiles tiles =
            pipe->planClipDecode(latent.size(3), latent.size(4), {}, -1);
        QCOMPARE(tiles.tile, int64_t{0});  // unknown memory: whole frames
        std::vector<at::Tensor> chunks;
        QCOMPARE(pipe->decodeClip(latent, tiles,
                                  [&](const at::Tensor& f) {
                                    chunks.push_back(f[0].permute({1, 0, 2, 3}));
                                  }),
                 c.frames);
        frames = at::cat(chunks, 0);
      }
      QCOMPARE(frames.size(0), std::max<int64_t>(c.frames, 1));
      QCOMPARE(frames.size(2), r.height);
      QCOMPARE(frames.size(3), r.width);
      QVERIFY(at::isfinite(frames).all().item<bool>());
      QVERIFY(frames.std().item<double>() > 0.0);  // a picture, not a flat field
    }
  }

  void refusals() {
    const auto kindOf = [](const kiln::RenderParams& p) {
      try {
        kiln::render(p);
      } catch (const kiln::Error& e) {
        return std::make_pair(e.kind(), std::string(e.what()));
      }
      return std::make_pair(kiln::ErrorKind::Invalid, std::string());
    };
    auto image_model =
        tinyVideo(kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors"), 5);
    image_model.sampling.sampler = "euler";
    auto [kind, message] = kindOf(image_model);
    QCOMPARE(kind, kiln::ErrorKind::InvalidArgument);
    QVERIFY2(message.find("image model") != std::string::npos, message.c_str());
    auto sampler = tinyVideo(model_.folder, 5);
    sampler.sampling.sampler = "dpmpp_2m";
    std::tie(kind, message) = kindOf(sampler);
    QCOMPARE(kind, kiln::ErrorKind::InvalidArgument);
    QVERIFY2(message.find("uni_pc") != std::string::npos, message.c_str());
    // a text encoder without its tokenizer says what to put where
    QTemporaryDir bare;
    const fs::path te = fs::path(bare.path().toStdString()) / "umt5_tiny.safetensors";
    fs::copy_file(model_.text_encoder, te);
    auto no_tokenizer = tinyVideo(model_.transformer, 5);
    no_tokenizer.model.text_encoder_path = te.string();
    std::tie(kind, message) = kindOf(no_tokenizer);
    QCOMPARE(kind, kiln::ErrorKind::FileNotFound);
    QVERIFY2(message.find("spiece.model") != std::string::npos, message.c_str());
    // many frames into an image file
    kiln::Job job;
    job.params = tinyVideo(model_.folder, 5);
    job.output_path = bare.path().toStdString() + "/still.png";
    const EngineRun run = runOnEngine(job);
    QCOMPARE(run.end.type, kiln::EventType::JobFailed);
    QVERIFY2(run.end.message.find("need a video file") != std::string::npos,
             run.end.message.c_str());
    QCOMPARE(entries(bare.path().toStdString()), std::size_t{1});  // only the copied encoder
  }
};

QTEST_GUILESS_MAIN(TestVideoJob)
#include "test_video_job.moc"
