// The generate panel's template workflow without widgets: the built-in template is valid
// and exposes the usual parameters, roles are found whatever the node ids, each batch
// image gets seed + i and the file name prefix, and a model's native size is read from
// its header.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "kiln/workflow.h"
#include "model_list.h"
#include "node_texts.h"
#include "template_workflow.h"

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
    QCOMPARE(p.model_path, std::string());  // the starter model
    QCOMPARE(p.width, 64);
    QCOMPARE(p.steps, 20);
    // It survives the workflow file format.
    QCOMPARE(kiln::workflowToJson(kiln::parseWorkflow(kiln::workflowToJson(w))),
             kiln::workflowToJson(w));
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
    QCOMPARE(roleParams(w, 2).seed, int64_t{43});
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
