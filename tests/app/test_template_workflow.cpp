// The generate panel's template workflow without widgets: the built-in template is valid
// and exposes the usual parameters, roles are found whatever the node ids, each batch
// image gets seed + i and the file name prefix, and a model's native size is read from
// its header.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "kiln/engine.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "kiln/video_io.h"
#include "kiln/workflow.h"
#include "model_list.h"
#include "node_texts.h"
#include "template_workflow.h"
#include "wan_tiny.h"

using namespace kiln::app;

namespace {

// A safetensors file of one tiny tensor, with `metadata` and an extra key name.
QString writeCheckpoint(const QTemporaryDir& dir, const QString& name, const QByteArray& metadata,
                        const QByteArray& key) {
  QByteArray header = "{\"" + key + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
  if (!metadata.isEmpty()) header += ",\"__metadata__\":" + metadata;
  header += "}";
  QFile f(dir.filePath(name));
  if (!f.open(QIODevice::WriteOnly)) return {};
  QByteArray length(8, '\0');
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<char>((static_cast<quint64>(header.size()) >> (8 * i)) & 0xff);
  f.write(length + header + QByteArray(4, '\0'));
  return f.fileName();
}

// Runs `workflow` on an engine as the app's bridge does (a video writer; outputs into
// `output_dir`) and returns the job's last event.
kiln::Event runAsTheApp(const kiln::Workflow& workflow, const std::string& output_dir) {
  std::mutex mutex;
  std::condition_variable done;
  kiln::Event end;
  bool over = false;
  kiln::EngineOptions options;
  options.write_video = [](const std::string& path, const std::vector<kiln::Image>& frames,
                           const kiln::VideoWriteOptions& o) { kiln::writeVideo(path, frames, o); };
  options.sink = [&](const kiln::Event& e) {
    if (e.type != kiln::EventType::JobFinished && e.type != kiln::EventType::JobFailed &&
        e.type != kiln::EventType::JobCancelled)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    end = e;
    over = true;
    done.notify_all();
  };
  kiln::Engine engine(std::move(options));
  kiln::Job job;
  job.workflow = std::make_shared<const kiln::Workflow>(workflow);
  job.output_dir = output_dir;
  engine.submit(std::move(job));
  std::unique_lock<std::mutex> lock(mutex);
  done.wait_for(lock, std::chrono::seconds(300), [&] { return over; });
  return end;
}

}  // namespace

class TestTemplateWorkflow : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void defaultTemplateRunsAsItIs() {
    const kiln::Workflow w = defaultTemplate();
    QVERIFY2(kiln::validateWorkflow(w, kiln::builtinNodeSchemas()).empty(),
             kiln::describeProblems(kiln::validateWorkflow(w, kiln::builtinNodeSchemas())).c_str());
    QCOMPARE(w.exposed.size(), std::size_t{9});
    QCOMPARE(findRole(w, PanelRole::Prompt).node, std::string("prompt"));
    QCOMPARE(findRole(w, PanelRole::Negative).node, std::string("negative"));
    const kiln::RenderParams p = roleParams(w);
    QCOMPARE(p.model.path, std::string());  // the starter model
    QCOMPARE(p.size.width, 64);
    QCOMPARE(p.sampling.steps, 20);
    // It survives the workflow file format.
    QCOMPARE(kiln::workflowToJson(kiln::parseWorkflow(kiln::workflowToJson(w))),
             kiln::workflowToJson(w));
  }

  // The built-in text-to-video template: the render template of a clip, with the frames
  // exposed beside the usual parameters; roles find the video nodes.
  // FLUX.1's template: guidance exposed in place of the CFG scale, no negative prompt, the
  // model's own sampling (CFG 1, euler over the simple schedule), the prompt found through
  // its FluxGuidance.
  void fluxTemplateExposesGuidance() {
    const std::string model = std::string(KILN_CONFORMANCE_DIR) +
                              "/flux1-tiny-1234/flux1_tiny_transformer_original.safetensors";
    const kiln::Workflow w = fluxTemplate(model);
    QVERIFY2(kiln::validateWorkflow(w, kiln::builtinNodeSchemas()).empty(),
             kiln::describeProblems(kiln::validateWorkflow(w, kiln::builtinNodeSchemas())).c_str());
    std::vector<std::string> labels;
    for (const auto& e : w.exposed) labels.push_back(e.label);
    QVERIFY(std::find(labels.begin(), labels.end(), "Guidance") != labels.end());
    QVERIFY(std::find(labels.begin(), labels.end(), "CFG scale") == labels.end());
    QVERIFY(std::find(labels.begin(), labels.end(), "Negative prompt") == labels.end());
    QCOMPARE(w.node(findRole(w, PanelRole::Prompt).node)->type, std::string("TextEncode"));
    QCOMPARE(w.node(findRole(w, PanelRole::Guidance).node)->type, std::string("FluxGuidance"));
    QCOMPARE(std::get<double>(w.node("sampler")->params.at("cfg")), 1.0);
    QCOMPARE(std::get<std::string>(w.node("sampler")->params.at("scheduler")),
             std::string("simple"));
    const kiln::RenderParams p = roleParams(w);
    QCOMPARE(p.size.width, 1024);
    QCOMPARE(p.model.path, model);
    QVERIFY(!findRole(defaultTemplate(), PanelRole::Guidance).valid());
  }

  void videoTemplateExposesTheClip() {
    const kiln::Workflow w = videoTemplate();
    QVERIFY2(kiln::validateWorkflow(w, kiln::builtinNodeSchemas()).empty(),
             kiln::describeProblems(kiln::validateWorkflow(w, kiln::builtinNodeSchemas())).c_str());
    QCOMPARE(w.exposed.size(), std::size_t{10});
    QCOMPARE(w.exposed.back().label, std::string("Frames"));
    QCOMPARE(findRole(w, PanelRole::Model).param, std::string("model_name"));
    QCOMPARE(w.node(findRole(w, PanelRole::Width).node)->type, std::string("EmptyVideoLatent"));
    QCOMPARE(w.node("save")->type, std::string("SaveVideo"));
    const kiln::RenderParams p = roleParams(w);
    QCOMPARE(p.video.frames, 81);
    QCOMPARE(p.size.width, 832);
    QCOMPARE(p.size.height, 480);
    QCOMPARE(std::get<std::string>(w.node("sampler")->params.at("sampler_name")),
             std::string("uni_pc"));
    QCOMPARE(std::get<std::string>(prepareRun(w, kiln::builtinNodeSchemas(), 0, "clip")
                                       .node("save")
                                       ->params.at("filename_prefix")),
             std::string("clip"));
    QVERIFY(!findRole(defaultTemplate(), PanelRole::Frames).valid());
  }

  // A short clip through the generate panel's video template, prepared as the panel
  // prepares a run, draws the frames kiln::render (and so `kiln-cli render`) draws for the
  // same settings: the first frame exactly, every frame's PNG pixel for pixel; the clip's
  // frames carry the workflow, which draws it again.
  void videoTemplateDrawsTheRenderApisClip() {
    QTemporaryDir dir;
    const kiln::testing::WanTinyModel model =
        kiln::testing::writeWanTinyModel(dir.path().toStdString());
    kiln::Workflow w = videoTemplate();
    const auto set = [&](PanelRole role, kiln::ParamValue v) {
      const ParamRef ref = findRole(w, role);
      QVERIFY(ref.valid());
      w.node(ref.node)->params[ref.param] = std::move(v);
    };
    set(PanelRole::Model, model.folder);
    set(PanelRole::Prompt, std::string("a red cat runs across a field"));
    set(PanelRole::Negative, std::string("blurry"));
    set(PanelRole::Seed, int64_t{7});
    set(PanelRole::Steps, int64_t{3});
    set(PanelRole::Width, int64_t{64});
    set(PanelRole::Height, int64_t{48});
    set(PanelRole::Frames, int64_t{5});
    w.node("save")->params["format"] = std::string("png");  // lossless frames to compare
    w.node("save")->params["fps"] = 8.0;
    applyNodeDefaults(w, {});
    const kiln::Workflow run = prepareRun(w, kiln::builtinNodeSchemas(), 0, "clip");
    const kiln::Event end = runAsTheApp(run, dir.filePath("out").toStdString());
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    QCOMPARE(end.output_paths.size(), std::size_t{1});
    const kiln::Video app_clip = kiln::readVideo(end.output_paths.front());
    QCOMPARE(app_clip.frames.size(), std::size_t{5});
    QVERIFY(app_clip.metadata.count("kiln_workflow"));

    kiln::RenderParams p;
    p.model.path = model.folder;
    p.prompt.text = "a red cat runs across a field";
    p.prompt.negative = "blurry";
    p.sampling.seed = 7;
    p.sampling.steps = 3;
    p.sampling.cfg_scale = 5.0;
    p.sampling.sampler = "uni_pc";
    p.size.width = 64;
    p.size.height = 48;
    p.video.frames = 5;
    p.video.fps = 8;
    const kiln::RenderResult r = kiln::render(p);
    QCOMPARE(r.frames.size(), std::size_t{5});
    QCOMPARE(end.outputs.at(0).pixels, r.frames.front().pixels);
    const std::string render_clip = dir.filePath("render/").toStdString();
    kiln::VideoWriteOptions options;
    options.fps = 8;
    kiln::writeVideo(render_clip, r.frames, options);
    const kiln::Video expected = kiln::readVideo(render_clip);
    for (std::size_t i = 0; i < 5; ++i)
      QVERIFY2(app_clip.frames[i].pixels == expected.frames[i].pixels,
               qPrintable(QString("frame %1").arg(i)));
    // The clip's own workflow, as `kiln-cli run clip/` and File > Open Workflow read it.
    const kiln::Workflow carried = kiln::parseWorkflow(app_clip.metadata.at("kiln_workflow"));
    QCOMPARE(carried.node(findRole(carried, PanelRole::Frames).node)->params.at("frames"),
             kiln::ParamValue(int64_t{5}));
    // Opened in the editor and run again, it draws the same clip.
    const kiln::Event again = runAsTheApp(carried, dir.filePath("again").toStdString());
    QVERIFY2(again.type == kiln::EventType::JobFinished, again.message.c_str());
    const kiln::Video redrawn = kiln::readVideo(again.output_paths.at(0));
    QCOMPARE(redrawn.frames.size(), std::size_t{5});
    for (std::size_t i = 0; i < 5; ++i)
      QVERIFY2(redrawn.frames[i].pixels == app_clip.frames[i].pixels,
               qPrintable(QString("frame %1").arg(i)));
  }

  void rolesFollowTheLinksNotTheIds() {
    kiln::Workflow w = defaultTemplate();
    // Swap which text node feeds the positive input: the roles follow.
    for (auto& l : w.links) {
      if (l.to_input == "positive")
        l.from_node = "negative";
      else if (l.to_input == "negative")
        l.from_node = "prompt";
    }
    QCOMPARE(findRole(w, PanelRole::Prompt).node, std::string("negative"));
    QCOMPARE(findRole(w, PanelRole::Negative).node, std::string("prompt"));
    kiln::Workflow bare;
    QVERIFY(!findRole(bare, PanelRole::Seed).valid());
    w.exposed.clear();
    exposeCommonParameters(w);
    QCOMPARE(w.exposed.size(), std::size_t{9});
    QCOMPARE(w.exposed[1].node, std::string("negative"));  // the prompt role's node
    QCOMPARE(w.exposed[1].label, std::string("Prompt"));
    // Exposed parameters of the workflow's own are kept as they are.
    kiln::Workflow own = defaultTemplate();
    own.exposed = {{"sampler", "denoise", "Strength"}};
    exposeCommonParameters(own);
    QCOMPARE(own.exposed.size(), std::size_t{1});
  }

  void eachBatchImageGetsItsSeedAndName() {
    kiln::Workflow w = defaultTemplate();
    w.node("sampler")->params["seed"] = int64_t{41};
    const auto schemas = kiln::builtinNodeSchemas();
    const kiln::Workflow first = prepareRun(w, schemas, 0, "cat");
    const kiln::Workflow third = prepareRun(w, schemas, 2, "");
    QCOMPARE(std::get<int64_t>(first.node("sampler")->params.at("seed")), int64_t{41});
    QCOMPARE(std::get<std::string>(first.node("save")->params.at("filename_prefix")),
             std::string("cat"));
    QCOMPARE(std::get<int64_t>(third.node("sampler")->params.at("seed")), int64_t{43});
    QCOMPARE(std::get<std::string>(third.node("save")->params.at("filename_prefix")),
             std::string("kiln"));
    QCOMPARE(roleParams(w, 2).sampling.seed, int64_t{43});
    // A seed the node leaves unset counts from the schema's default.
    w.node("sampler")->params.erase("seed");
    QCOMPARE(std::get<int64_t>(prepareRun(w, schemas, 1, "").node("sampler")->params.at("seed")),
             int64_t{1});
  }

  void preferencesFillWhatNodesLeaveOpen() {
    kiln::Workflow w = defaultTemplate();
    w.nodes.push_back(
        {"lora",
         "LoadLoRA",
         {{"lora_name", std::string("style.safetensors")}, {"mode", std::string("hook")}},
         0,
         0,
         ""});
    w.nodes.push_back({"encode", "VAEEncode", {{"tiling", std::string("never")}}, 0, 0, ""});
    applyNodeDefaults(w, {"always", 256, 32, "merge"});
    const auto param = [&](const char* node, const char* name) {
      return w.node(node)->params.at(name);
    };
    QCOMPARE(std::get<std::string>(param("decode", "tiling")), std::string("always"));
    QCOMPARE(std::get<int64_t>(param("decode", "tile_size")), int64_t{256});
    QCOMPARE(std::get<int64_t>(param("decode", "tile_overlap")), int64_t{32});
    QCOMPARE(std::get<std::string>(param("encode", "tiling")),
             std::string("never"));  // the workflow's own
    QCOMPARE(std::get<int64_t>(param("encode", "tile_size")), int64_t{256});
    QCOMPARE(std::get<std::string>(param("lora", "mode")), std::string("hook"));
    QVERIFY(!w.node("sampler")->params.count("tiling"));
    kiln::Workflow plain = defaultTemplate();
    applyNodeDefaults(plain, {});
    QVERIFY(kiln::validateWorkflow(plain, kiln::builtinNodeSchemas()).empty());
  }

  void nativeSizeComesFromTheHeader() {
    QTemporaryDir dir;
    QCOMPARE(nativeSize(writeCheckpoint(dir, "spec.safetensors",
                                        "{\"modelspec.resolution\":\"768x512\"}", "x")),
             QSize(768, 512));
    QCOMPARE(nativeSize(writeCheckpoint(dir, "xl.safetensors", {},
                                        "conditioner.embedders.1.model.ln_final.weight")),
             QSize(1024, 1024));
    QCOMPARE(
        nativeSize(writeCheckpoint(dir, "sd1.safetensors", {}, "model.diffusion_model.out.2.bias")),
        QSize(512, 512));
    QCOMPARE(
        nativeSize(QString(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors")
            .isValid(),
        true);
    // Not checkpoints: no size.
    QVERIFY(!nativeSize(dir.filePath("missing.safetensors")).isValid());
    QFile junk(dir.filePath("junk.safetensors"));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write(QByteArray("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10));
    junk.close();
    QVERIFY(!nativeSize(junk.fileName()).isValid());
    QDir(dir.path()).mkpath("diffusers/unet");
    QFile config(dir.filePath("diffusers/unet/config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write("{\"sample_size\": 96}");
    config.close();
    QCOMPARE(nativeSize(dir.filePath("diffusers")), QSize(768, 768));
  }

  // Every text a built-in node shows is listed for translation; a new node or parameter
  // without its entry fails here, naming it.
  void everyNodeTextIsListed() {
    QStringList missing;
    const auto check = [&](const std::string& text) {
      if (!text.empty() && !kiln::app::nodeTextListed(text))
        missing << QString::fromStdString(text);
    };
    int count = 0;
    for (const kiln::NodeSchema& s : kiln::builtinNodeSchemas()) {
      check(s.display_name);
      check(s.category);
      for (const auto& i : s.inputs) check(i.display_name);
      for (const auto& o : s.outputs) check(o.display_name);
      for (const auto& p : s.params) check(p.display_name);
      count += 2 + static_cast<int>(s.inputs.size() + s.outputs.size() + s.params.size());
    }
    QVERIFY(count > 40);
    missing.removeDuplicates();
    QVERIFY2(missing.isEmpty(), qPrintable("not listed in node_texts.cpp: " + missing.join(", ")));
    QVERIFY(!kiln::app::nodeTextListed("No such text"));
    QCOMPARE(kiln::app::nodeText("Sampler"), QString("Sampler"));  // no translator: English
  }
  // Node categories are headings in the add-node menu and the search.
  void categoriesAreHeadings() {
    QCOMPARE(nodeCategoryText("loaders"), QString("Loaders"));
    QCOMPARE(nodeCategoryText("sampling"), QString("Sampling"));
  }
};

QTEST_GUILESS_MAIN(TestTemplateWorkflow)
#include "test_template_workflow.moc"
