// Workflow files and validation against the built-in node schemas: every kind of problem
// is reported with the node it concerns, files round-trip, bad files are refused with a
// reason, and --set style assignments convert or fail clearly.
#include <QtTest>

#include "graph/plan.h"
#include "kiln/error.h"
#include "kiln/workflow.h"
#include "nodes/node_library.h"

namespace {

const std::vector<kiln::NodeSchema>& schemas() {
  static const kiln::nodes::NodeLibrary lib = kiln::nodes::builtinNodes();
  return lib.schemas();
}

// A text-to-image workflow that validates.
kiln::Workflow textToImage() {
  kiln::Workflow w;
  w.nodes = {
      {"ckpt", "LoadCheckpoint", {{"ckpt_name", std::string("/models/a.safetensors")}}, 0, 0, ""},
      {"pos", "TextEncode", {{"text", std::string("a red circle")}}, 300, 0, "Prompt"},
      {"neg", "TextEncode", {{"text", std::string("")}}, 300, 200, ""},
      {"latent", "EmptyLatent", {{"width", int64_t{64}}, {"height", int64_t{64}}}, 300, 400, ""},
      {"sampler",
       "Sampler",
       {{"seed", int64_t{1}}, {"steps", int64_t{2}}, {"cfg", 5.0}},
       600,
       0,
       ""},
      {"decode", "VAEDecode", {}, 900, 0, ""},
      {"save", "SaveImage", {{"filename_prefix", std::string("t")}}, 1200, 0, ""}};
  w.links = {{"ckpt", "CLIP", "pos", "clip"},
             {"ckpt", "CLIP", "neg", "clip"},
             {"ckpt", "MODEL", "sampler", "model"},
             {"pos", "CONDITIONING", "sampler", "positive"},
             {"neg", "CONDITIONING", "sampler", "negative"},
             {"latent", "LATENT", "sampler", "latent_image"},
             {"sampler", "LATENT", "decode", "samples"},
             {"ckpt", "VAE", "decode", "vae"},
             {"decode", "IMAGE", "save", "images"}};
  w.exposed = {{"pos", "text", "Prompt"}, {"sampler", "seed", "Seed"}};
  return w;
}

bool hasProblem(const std::vector<kiln::WorkflowProblem>& problems, const std::string& node,
                const std::string& text) {
  for (const auto& p : problems)
    if (p.node == node && p.message.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

class TestWorkflow : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void builtinSchemasAreComplete() {
    for (const char* type :
         {"LoadCheckpoint", "LoadLoRA", "TextEncode", "EmptyLatent", "Sampler", "VAEDecode",
          "VAEEncode", "LoadImage", "LoadMask", "SaveImage", "PreviewImage"}) {
      const auto it = std::find_if(schemas().begin(), schemas().end(),
                                   [&](const kiln::NodeSchema& s) { return s.type == type; });
      QVERIFY2(it != schemas().end(), type);
      QVERIFY2(!it->display_name.empty() && !it->category.empty() && !it->description.empty(),
               type);
      for (const auto& p : it->params) {
        const QString what = QString("%1.%2").arg(type, p.name.c_str());
        QVERIFY2(!p.display_name.empty(), qPrintable(what));
        if (p.required()) continue;
        // Every default is of the parameter's own type.
        const kiln::ParamValue& d = p.default_value;
        switch (p.type) {
          case kiln::ValueType::Int:
          case kiln::ValueType::Seed:
            QVERIFY2(std::holds_alternative<int64_t>(d), qPrintable(what));
            break;
          case kiln::ValueType::Float:
            QVERIFY2(std::holds_alternative<double>(d), qPrintable(what));
            break;
          case kiln::ValueType::Bool:
            QVERIFY2(std::holds_alternative<bool>(d), qPrintable(what));
            break;
          default:
            QVERIFY2(std::holds_alternative<std::string>(d), qPrintable(what));
        }
      }
    }
    QVERIFY(kiln::validateWorkflow(textToImage(), schemas()).empty());
  }

  // Each kind of problem, made from the valid workflow by one edit.
  void reportsEveryKindOfProblem_data() {
    QTest::addColumn<int>("edit");
    QTest::addColumn<QString>("node");
    QTest::addColumn<QString>("message");
    const QStringList rows{
        "unknown type",        "duplicate id",  "unknown parameter", "missing parameter",
        "wrong type",          "out of range",  "bad choice",        "dangling link",
        "unknown output",      "unknown input", "type mismatch",     "linked twice",
        "input not linked",    "cycle",         "unknown exposed",   "no output node",
        "unknown group member"};
    const QStringList nodes{"ckpt",    "pos",    "sampler", "save",   "sampler", "sampler",
                            "sampler", "decode", "decode",  "decode", "decode",  "sampler",
                            "decode",  "pos",    "nowhere", "",       "ghost"};
    const QStringList messages{
        "unknown node type 'Checkpoint'",
        "the id is used by more than one node",
        "Sampler has no parameter 'stepz'",
        "parameter 'lora_name' is required",
        "'steps' must be a whole number, got \"many\"",
        "'cfg' is 250, outside 0 to 100",
        "'sampler_name' is 'dpm', which is not one of: euler, euler_ancestral, heun",
        "refers to a node that does not exist (ghost)",
        "Sampler has no output 'IMAGE'",
        "VAEDecode has no input 'latent'",
        "connects CONDITIONING to an input of type LATENT",
        "input 'negative' is linked twice",
        "input 'vae' (VAE) is not linked",
        "the links form a cycle",
        "belongs to a node that does not exist",
        "the workflow has no output node",
        "the group 'Inputs' names a node that does not exist"};
    for (int i = 0; i < rows.size(); ++i)
      QTest::newRow(qPrintable(rows[i])) << i << nodes[i] << messages[i];
  }
  void reportsEveryKindOfProblem() {
    QFETCH(int, edit);
    QFETCH(QString, node);
    QFETCH(QString, message);
    kiln::Workflow w = textToImage();
    switch (edit) {
      case 0:
        w.node("ckpt")->type = "Checkpoint";
        break;
      case 1:
        w.nodes.push_back({"pos", "TextEncode", {}, 0, 0, ""});
        break;
      case 2:
        w.node("sampler")->params["stepz"] = int64_t{3};
        break;
      case 3:
        w.nodes.push_back({"lora", "LoadLoRA", {}, 0, 0, ""});
        node = "lora";
        break;
      case 4:
        w.node("sampler")->params["steps"] = std::string("many");
        break;
      case 5:
        w.node("sampler")->params["cfg"] = 250.0;
        break;
      case 6:
        w.node("sampler")->params["sampler_name"] = std::string("dpm");
        break;
      case 7:
        w.links.push_back({"ghost", "LATENT", "decode", "samples"});
        break;
      case 8:
        w.links[6].from_output = "IMAGE";
        break;
      case 9:
        w.links[6].to_input = "latent";
        break;
      case 10:
        w.links[6].from_node = "pos";
        w.links[6].from_output = "CONDITIONING";
        break;
      case 11:
        w.links.push_back({"pos", "CONDITIONING", "sampler", "negative"});
        break;
      case 12:
        w.links.erase(w.links.begin() + 7);
        break;
      case 13:
        // TextEncode fed by the sampler's latent is a type error too; a real cycle needs
        // matching types, so make one through two LoadLoRA nodes.
        w.nodes.push_back(
            {"l1", "LoadLoRA", {{"lora_name", std::string("/x.safetensors")}}, 0, 0, ""});
        w.nodes.push_back(
            {"l2", "LoadLoRA", {{"lora_name", std::string("/y.safetensors")}}, 0, 0, ""});
        w.links.push_back({"l1", "MODEL", "l2", "model"});
        w.links.push_back({"l1", "CLIP", "l2", "clip"});
        w.links.push_back({"l2", "MODEL", "l1", "model"});
        w.links.push_back({"l2", "CLIP", "l1", "clip"});
        w.links.erase(w.links.begin());  // pos.clip comes from l2 now
        w.links.push_back({"l2", "CLIP", "pos", "clip"});
        node = "l1";
        break;
      case 14:
        w.exposed.push_back({"nowhere", "text", "X"});
        break;
      case 15:
        w.nodes.pop_back();
        w.links.pop_back();
        break;
      case 16:
        w.groups.push_back({"Inputs", {"pos", "ghost"}, ""});
        break;
      default:
        QFAIL("no such edit");
    }
    const auto problems = kiln::validateWorkflow(w, schemas());
    QVERIFY2(hasProblem(problems, node.toStdString(), message.toStdString()),
             qPrintable(QString::fromStdString(kiln::describeProblems(problems))));
    QVERIFY_THROWS_EXCEPTION(kiln::Error, [&] {
      if (!problems.empty()) throw kiln::Error(kiln::ErrorKind::InvalidWorkflow, "");
    }());
  }

  // All problems at once, not just the first.
  void reportsAllProblemsTogether() {
    kiln::Workflow w = textToImage();
    w.node("sampler")->params["steps"] = int64_t{0};
    w.node("latent")->params["width"] = int64_t{9000};
    w.links.erase(w.links.begin() + 1);  // neg.clip
    const auto problems = kiln::validateWorkflow(w, schemas());
    QCOMPARE(problems.size(), std::size_t{3});
    const std::string text = kiln::describeProblems(problems);
    QVERIFY2(
        text.find("node sampler: Sampler: 'steps' is 0, outside 1 to 1000") != std::string::npos,
        text.c_str());
    QVERIFY2(text.find("node latent: EmptyLatent: 'width' is 9000") != std::string::npos,
             text.c_str());
    QVERIFY2(
        text.find("node neg: TextEncode: input 'clip' (CLIP) is not linked") != std::string::npos,
        text.c_str());
  }

  void roundTripsThroughJson() {
    const kiln::Workflow w = textToImage();
    const std::string text = kiln::workflowToJson(w);
    const kiln::Workflow back = kiln::parseWorkflow(text);
    QCOMPARE(kiln::workflowToJson(back), text);
    QCOMPARE(back.nodes.size(), w.nodes.size());
    QCOMPARE(back.node("pos")->title, std::string("Prompt"));
    QCOMPARE(back.node("sampler")->x, 600.0);
    QVERIFY(std::get<double>(back.node("sampler")->params.at("cfg")) == 5.0);
    QVERIFY(std::get<int64_t>(back.node("sampler")->params.at("steps")) == 2);
    QCOMPARE(back.exposed.size(), std::size_t{2});
    QCOMPARE(back.exposed[1].param, std::string("seed"));
    QVERIFY(back.groups.empty());
    QVERIFY(text.find("\"groups\"") ==
            std::string::npos);  // files without groups stay as they were

    kiln::Workflow grouped = w;
    grouped.groups = {{"Prompts", {"pos", "neg"}, "#3f789e"}, {"", {"save"}, ""}};
    const kiln::Workflow again = kiln::parseWorkflow(kiln::workflowToJson(grouped));
    QCOMPARE(again.groups.size(), std::size_t{2});
    QCOMPARE(again.groups[0].title, std::string("Prompts"));
    QCOMPARE(again.groups[0].nodes, (std::vector<std::string>{"pos", "neg"}));
    QCOMPARE(again.groups[0].color, std::string("#3f789e"));
    QCOMPARE(again.groups[1].nodes, (std::vector<std::string>{"save"}));
    QVERIFY(kiln::validateWorkflow(again, schemas()).empty());
  }

  void refusesMalformedFiles_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("not json") << "{nodes: ["
                              << "does not parse";
    QTest::newRow("array") << "[1, 2]"
                           << "not a JSON object";
    QTest::newRow("no version") << R"({"nodes": []})"
                                << "no \"kiln_workflow\" version";
    QTest::newRow("comfy api") << R"({"3": {"class_type": "KSampler", "inputs": {}}})"
                               << "imported, not opened";
    QTest::newRow("newer") << R"({"kiln_workflow": 99, "nodes": []})"
                           << "written by a newer Kiln";
    QTest::newRow("version 0") << R"({"kiln_workflow": 0, "nodes": []})"
                               << "does not exist";
    QTest::newRow("nodes not array") << R"({"kiln_workflow": 1, "nodes": {}})"
                                     << "\"nodes\" must be an array";
    QTest::newRow("id not string") << R"({"kiln_workflow": 1, "nodes": [{"id": 3, "type": "X"}]})"
                                   << "\"id\" must be a string";
    QTest::newRow("param null")
        << R"({"kiln_workflow": 1, "nodes": [{"id": "3", "type": "X", "params": {"a": null}}]})"
        << "parameter 'a' must be a number, a string or true/false";
    QTest::newRow("bad position")
        << R"({"kiln_workflow": 1, "nodes": [{"id": "3", "type": "X", "position": [1]}]})"
        << "\"position\" must be [x, y]";
    QTest::newRow("link fields") << R"({"kiln_workflow": 1, "nodes": [], "links": [{"from": "1"}]})"
                                 << "link #1 has no \"output\"";
    QTest::newRow("group nodes")
        << R"({"kiln_workflow": 1, "nodes": [], "groups": [{"title": "a", "nodes": [1]}]})"
        << "group #1: \"nodes\" must be an array of node ids";
    QTest::newRow("group not object") << R"({"kiln_workflow": 1, "nodes": [], "groups": [3]})"
                                      << "group #1 is not an object";
  }
  void refusesMalformedFiles() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    try {
      (void)kiln::parseWorkflow(text.toStdString());
      QFAIL("parsed");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::InvalidWorkflow);
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  void setsParametersFromText() {
    kiln::Workflow w = textToImage();
    kiln::setWorkflowParameter(w, schemas(), "sampler.seed=42");
    QCOMPARE(std::get<int64_t>(w.node("sampler")->params.at("seed")), int64_t{42});
    kiln::setWorkflowParameter(w, schemas(), "Prompt.text=a blue square, with a = sign");
    QCOMPARE(std::get<std::string>(w.node("pos")->params.at("text")),
             std::string("a blue square, with a = sign"));
    kiln::setWorkflowParameter(w, schemas(), "sampler.cfg=3.5");
    QCOMPARE(std::get<double>(w.node("sampler")->params.at("cfg")), 3.5);
    const auto fails = [&](const char* assignment, const char* message) {
      try {
        kiln::setWorkflowParameter(w, schemas(), assignment);
      } catch (const kiln::Error& e) {
        return e.kind() == kiln::ErrorKind::InvalidArgument &&
               std::string(e.what()).find(message) != std::string::npos;
      }
      return false;
    };
    QVERIFY(fails("sampler.steps=ten", "needs a whole number, got 'ten'"));
    QVERIFY(fails("sampler.steps=5x", "needs a whole number"));
    QVERIFY(fails("sampler.cfg=", "needs a number"));
    QVERIFY(fails("sampler.steps=0", "outside 1 to 1000"));
    QVERIFY(fails("sampler.sampler_name=dpm", "not one of"));
    QVERIFY(fails("nobody.seed=1", "has no node 'nobody'"));
    QVERIFY(fails("sampler.nothing=1", "has no parameter 'nothing'"));
    QVERIFY(fails("seed=1", "is not NODE.PARAM=VALUE"));
  }

  // Only what feeds an output is planned, inputs before readers; the signature changes
  // with a parameter and with anything upstream, and only there.
  void plansAndSignsNodes() {
    kiln::Workflow w = textToImage();
    w.nodes.push_back({"orphan", "TextEncode", {{"text", std::string("unused")}}, 0, 0, ""});
    w.links.push_back({"ckpt", "CLIP", "orphan", "clip"});
    const auto plan = kiln::graph::planExecution(w, schemas());
    QCOMPARE(plan.size(), std::size_t{7});
    std::map<std::string, std::size_t> at;
    std::map<std::string, std::string> sig;
    for (std::size_t i = 0; i < plan.size(); ++i) {
      at[plan[i].node->id] = i;
      sig[plan[i].node->id] = plan[i].signature;
    }
    QVERIFY(!at.count("orphan"));
    for (const auto& l : w.links)
      if (at.count(l.to_node))
        QVERIFY2(at[l.from_node] < at[l.to_node], qPrintable(QString::fromStdString(l.to_node)));
    QCOMPARE(std::get<int64_t>(plan[at["latent"]].params.at("batch_size")),
             int64_t{1});  // defaults filled in

    w.node("sampler")->params["seed"] = int64_t{2};
    std::map<std::string, std::string> sig2;
    for (const auto& p : kiln::graph::planExecution(w, schemas())) sig2[p.node->id] = p.signature;
    for (const char* same : {"ckpt", "pos", "neg", "latent"}) QCOMPARE(sig2[same], sig[same]);
    for (const char* changed : {"sampler", "decode", "save"})
      QVERIFY2(sig2[changed] != sig[changed], changed);

    // State outside the workflow (an embeddings folder's files) signs a node and what reads it.
    std::map<std::string, std::string> sig3;
    for (const auto& p :
         kiln::graph::planExecution(w, schemas(), [](const kiln::graph::PlannedNode& n) {
           return n.node->id == "neg" ? std::string("new file") : std::string();
         }))
      sig3[p.node->id] = p.signature;
    for (const char* same : {"ckpt", "pos", "latent"}) QCOMPARE(sig3[same], sig2[same]);
    for (const char* changed : {"neg", "sampler", "decode", "save"})
      QVERIFY2(sig3[changed] != sig2[changed], changed);
  }
};

QTEST_APPLESS_MAIN(TestWorkflow)
#include "test_workflow.moc"
