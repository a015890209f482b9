// The workflow editor's document without widgets: adding, connecting (types checked,
// cycles refused), disconnecting, deleting, moving, parameters, exposing, copy and paste,
// undo and redo of each, and saving and opening files.
#include <QTemporaryDir>
#include <QtTest>

#include "kiln/workflow.h"
#include "workflow_document.h"

using kiln::app::WorkflowDocument;

namespace {

// A text-to-image graph built through the document's own edits.
struct Graph {
  std::string ckpt, pos, neg, latent, sampler, decode, save;
};

Graph build(WorkflowDocument& doc) {
  Graph g;
  g.ckpt = doc.addNode("LoadCheckpoint", 0, 0);
  g.pos = doc.addNode("TextEncode", 300, -100);
  g.neg = doc.addNode("TextEncode", 300, 100);
  g.latent = doc.addNode("EmptyLatent", 300, 300);
  g.sampler = doc.addNode("Sampler", 600, 0);
  g.decode = doc.addNode("VAEDecode", 900, 0);
  g.save = doc.addNode("SaveImage", 1200, 0);
  doc.connectPorts(g.ckpt, "CLIP", g.pos, "clip");
  doc.connectPorts(g.ckpt, "CLIP", g.neg, "clip");
  doc.connectPorts(g.ckpt, "MODEL", g.sampler, "model");
  doc.connectPorts(g.pos, "CONDITIONING", g.sampler, "positive");
  doc.connectPorts(g.neg, "CONDITIONING", g.sampler, "negative");
  doc.connectPorts(g.latent, "LATENT", g.sampler, "latent_image");
  doc.connectPorts(g.sampler, "LATENT", g.decode, "samples");
  doc.connectPorts(g.ckpt, "VAE", g.decode, "vae");
  doc.connectPorts(g.decode, "IMAGE", g.save, "images");
  return g;
}

}  // namespace

class TestWorkflowDocument : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void buildsARunnableWorkflow() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    QVERIFY(!doc.isModified());
    const Graph g = build(doc);
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{7});
    QCOMPARE(doc.workflow().links.size(), std::size_t{9});
    QVERIFY2(doc.problems().empty(), kiln::describeProblems(doc.problems()).c_str());
    QVERIFY(doc.isModified());
    QCOMPARE(doc.undoStack()->count(), 16);
    // Fresh ids never repeat, even after a delete.
    QVERIFY(doc.removeNodes({g.save}));
    const std::string again = doc.addNode("SaveImage", 0, 0);
    QVERIFY(again != g.save);
    QVERIFY(doc.addNode("NoSuchNode", 0, 0).empty());
    QVERIFY(doc.lastError().contains("NoSuchNode"));
  }

  void refusesBadConnections() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    const Graph g = build(doc);
    const int steps = doc.undoStack()->count();
    QCOMPARE(doc.connectionProblem(g.decode, "IMAGE", g.sampler, "latent_image"),
             QString("The output gives IMAGE and the input takes LATENT"));
    QVERIFY(!doc.connectPorts(g.decode, "IMAGE", g.sampler, "latent_image"));
    QVERIFY(doc.lastError().contains("takes LATENT"));
    QVERIFY(
        doc.connectionProblem(g.sampler, "LATENT", g.sampler, "latent_image").contains("itself"));
    // The decode's output back into the graph's start would close a loop.
    const std::string encode = doc.addNode("VAEEncode", 0, 0);
    QVERIFY(doc.connectPorts(g.decode, "IMAGE", encode, "pixels"));
    QVERIFY(doc.connectPorts(g.ckpt, "VAE", encode, "vae"));
    QVERIFY(doc.connectionProblem(encode, "LATENT", g.sampler, "latent_image").contains("cycle"));
    QVERIFY(doc.connectionProblem(g.sampler, "NOPE", g.decode, "samples").contains("no output"));
    QVERIFY(doc.connectionProblem(g.sampler, "LATENT", g.decode, "nope").contains("no input"));
    QCOMPARE(doc.undoStack()->count(), steps + 3);  // refusals are not edits
  }

  void connectingReplacesAndDisconnects() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    const Graph g = build(doc);
    const std::string other = doc.addNode("EmptyLatent", 0, 600);
    QVERIFY(doc.connectPorts(other, "LATENT", g.sampler, "latent_image"));
    int into_sampler = 0;
    for (const auto& l : doc.workflow().links)
      if (l.to_node == g.sampler && l.to_input == "latent_image") {
        ++into_sampler;
        QCOMPARE(l.from_node, other);
      }
    QCOMPARE(into_sampler, 1);  // an input has one link; the new one replaced the old
    QVERIFY(doc.disconnectInput(g.sampler, "latent_image"));
    QVERIFY(!doc.problems().empty());  // the sampler now lacks its latent
    QVERIFY(!doc.disconnectInput(g.sampler, "latent_image"));
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QVERIFY(doc.problems().empty());
    for (const auto& l : doc.workflow().links)
      if (l.to_node == g.sampler && l.to_input == "latent_image") QCOMPARE(l.from_node, g.latent);
  }

  void deletingTakesLinksAndUndoBringsThemBack() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    const Graph g = build(doc);
    QVERIFY(doc.setExposed(g.sampler, "steps", true));
    const std::string before = kiln::workflowToJson(doc.workflow());
    QVERIFY(doc.removeNodes({g.sampler, g.latent}));
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{5});
    for (const auto& l : doc.workflow().links)
      QVERIFY(l.to_node != g.sampler && l.from_node != g.sampler);
    QVERIFY(doc.workflow().exposed.empty());
    doc.undoStack()->undo();
    QCOMPARE(kiln::workflowToJson(doc.workflow()), before);
    doc.undoStack()->redo();
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{5});
    QVERIFY(!doc.removeNodes({"nope"}));
  }

  void movesAndParametersMergeIntoOneStep() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    const Graph g = build(doc);
    const int steps = doc.undoStack()->count();
    for (int i = 0; i < 10; ++i) QVERIFY(doc.moveNodes({g.sampler, g.decode}, 5, -2));
    QCOMPARE(doc.undoStack()->count(), steps + 1);  // one drag
    QCOMPARE(doc.workflow().node(g.sampler)->x, 650.0);
    QCOMPARE(doc.workflow().node(g.decode)->y, -20.0);
    QVERIFY(doc.setParam(g.sampler, "steps", int64_t{3}));
    QVERIFY(doc.setParam(g.sampler, "steps", int64_t{30}));
    QVERIFY(doc.setParam(g.sampler, "cfg", 4.5));
    QCOMPARE(doc.undoStack()->count(), steps + 3);
    QCOMPARE(std::get<int64_t>(doc.workflow().node(g.sampler)->params.at("steps")), int64_t{30});
    doc.undoStack()->undo();  // the cfg
    doc.undoStack()->undo();  // both steps edits
    QVERIFY(!doc.workflow().node(g.sampler)->params.count("steps"));
    doc.undoStack()->undo();  // the drag
    QCOMPARE(doc.workflow().node(g.sampler)->x, 600.0);
    // Values the schema refuses change nothing.
    QVERIFY(!doc.setParam(g.sampler, "steps", int64_t{0}));
    QVERIFY(doc.lastError().contains("between"));
    QVERIFY(!doc.setParam(g.sampler, "steps", std::string("many")));
    QVERIFY(!doc.setParam(g.sampler, "sampler_name", std::string("no-such-sampler")));
    QVERIFY(!doc.setParam(g.sampler, "nope", int64_t{1}));
    QVERIFY(!doc.setParam(g.sampler, "cfg", std::nan("")));
    QVERIFY(doc.setTitle(g.pos, "  Prompt "));
    QCOMPARE(doc.workflow().node(g.pos)->title, std::string("Prompt"));
  }

  void copyAndPasteKeepInnerLinks() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    const Graph g = build(doc);
    QVERIFY(doc.setParam(g.pos, "text", std::string("a red circle")));
    const QString clip = doc.copy({g.pos, g.sampler, g.decode});
    const std::vector<std::string> pasted = doc.paste(clip, 40, 40);
    QCOMPARE(pasted.size(), std::size_t{3});
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{10});
    for (const auto& id : pasted) QVERIFY(id != g.pos && id != g.sampler && id != g.decode);
    const kiln::WorkflowNode* text = doc.workflow().node(pasted[0]);
    QCOMPARE(std::get<std::string>(text->params.at("text")), std::string("a red circle"));
    QCOMPARE(text->x, 340.0);
    // The links among the copied nodes came along; the ones to the rest did not.
    int inner = 0;
    for (const auto& l : doc.workflow().links) {
      const bool from = std::find(pasted.begin(), pasted.end(), l.from_node) != pasted.end();
      const bool to = std::find(pasted.begin(), pasted.end(), l.to_node) != pasted.end();
      QCOMPARE(from, to);
      inner += from ? 1 : 0;
    }
    QCOMPARE(inner, 2);  // text -> sampler, sampler -> decode
    doc.undoStack()->undo();
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{7});
    QVERIFY(doc.paste("not json", 0, 0).empty());
    QVERIFY(
        doc.paste("{\"kiln_workflow\": 1, \"nodes\": [{\"id\": \"1\", \"type\": \"Nope\"}]}", 0, 0)
            .empty());
    QVERIFY(doc.lastError().contains("Nope"));
  }

  // Groups: made from a selection, renamed, coloured, emptied by deletes, undone; a node
  // is in one group at most; copy and paste bring whole groups along.
  void groupsFrameNodes() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    const Graph g = build(doc);
    QCOMPARE(doc.groupNodes({}, "Nothing"), -1);
    QVERIFY(doc.lastError().contains("Select"));
    QCOMPARE(doc.groupNodes({g.pos, g.neg, "ghost"}, "  Prompts "), 0);
    QCOMPARE(doc.workflow().groups[0].title, std::string("Prompts"));
    QCOMPARE(doc.workflow().groups[0].nodes, (std::vector<std::string>{g.pos, g.neg}));
    QCOMPARE(doc.groupOf(g.neg), 0);
    QCOMPARE(doc.groupOf(g.sampler), -1);
    QVERIFY(doc.problems().empty());
    // Regrouping a member moves it to the new group.
    QCOMPARE(doc.groupNodes({g.neg, g.latent}, "Inputs"), 1);
    QCOMPARE(doc.workflow().groups[0].nodes, (std::vector<std::string>{g.pos}));
    QCOMPARE(doc.groupOf(g.neg), 1);
    QVERIFY(doc.setGroupTitle(1, "Sizes"));
    QVERIFY(doc.setGroupColor(1, "#3f789e"));
    QVERIFY(!doc.setGroupColor(1, "blue"));
    QVERIFY(doc.lastError().contains("#rrggbb"));
    QVERIFY(!doc.setGroupTitle(7, "x"));
    QCOMPARE(doc.workflow().groups[1].title, std::string("Sizes"));
    QCOMPARE(doc.workflow().groups[1].color, std::string("#3f789e"));
    // Copying a whole group brings it along with fresh ids; a partly copied one stays behind.
    const std::vector<std::string> pasted =
        doc.paste(doc.copy({g.neg, g.latent, g.pos, g.sampler}), 50, 50);
    QCOMPARE(pasted.size(), std::size_t{4});
    QCOMPARE(doc.workflow().groups.size(), std::size_t{4});
    const kiln::WorkflowGroup& copied = doc.workflow().groups[3];
    QCOMPARE(copied.title, std::string("Sizes"));
    QCOMPARE(copied.nodes.size(), std::size_t{2});
    for (const auto& id : copied.nodes)
      QVERIFY(std::find(pasted.begin(), pasted.end(), id) != pasted.end());
    doc.undoStack()->undo();
    QCOMPARE(doc.workflow().groups.size(), std::size_t{2});
    // Deleting its last node takes the group away; undo brings both back.
    QVERIFY(doc.removeNodes({g.pos}));
    QCOMPARE(doc.workflow().groups.size(), std::size_t{1});
    QCOMPARE(doc.workflow().groups[0].title, std::string("Sizes"));
    doc.undoStack()->undo();
    QCOMPARE(doc.workflow().groups.size(), std::size_t{2});
    QVERIFY(doc.ungroup(0));
    QCOMPARE(doc.workflow().groups.size(), std::size_t{1});
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{7});  // the nodes stay
    QVERIFY(!doc.ungroup(5));
    doc.undoStack()->undo();
    QCOMPARE(doc.workflow().groups[0].title, std::string("Prompts"));
  }

  void savesAndOpens() {
    QTemporaryDir dir;
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    const Graph g = build(doc);
    QVERIFY(doc.setExposed(g.pos, "text", true, "Prompt"));
    QCOMPARE(doc.groupNodes({g.pos, g.neg}, "Prompts"), 0);
    QVERIFY(doc.isModified());
    QVERIFY(doc.save(dir.filePath("t2i.json")));
    QVERIFY(!doc.isModified());
    QCOMPARE(doc.path(), dir.filePath("t2i.json"));
    WorkflowDocument other(kiln::builtinNodeSchemas());
    QVERIFY(other.open(dir.filePath("t2i.json")));
    QCOMPARE(kiln::workflowToJson(other.workflow()), kiln::workflowToJson(doc.workflow()));
    QCOMPARE(other.undoStack()->count(), 0);
    QCOMPARE(other.workflow().groups.size(), std::size_t{1});
    QVERIFY(!other.isModified());
    QVERIFY(!other.open(dir.filePath("missing.json")));
    QVERIFY(other.lastError().contains("does not exist"));
    QCOMPARE(other.workflow().nodes.size(), std::size_t{7});  // a failed open keeps the document
    QVERIFY(!doc.save(dir.filePath("no/such/folder/x.json")));
  }
};

QTEST_GUILESS_MAIN(TestWorkflowDocument)
#include "test_workflow_document.moc"
