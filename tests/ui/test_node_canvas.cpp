// The workflow editor's canvas under the offscreen platform: a text-to-image workflow is
// wired up by dragging from outputs to inputs (a wrong type is refused while dragging,
// with the reason), nodes are deleted with Del and come back with undo, copied and pasted,
// failed validation is marked on nodes, and the workflow built this way runs to an image.
// Groups are made with Ctrl+G, dragged by their title bar and renamed in place;
// parameters are edited on the nodes themselves. A screenshot is kept as an artifact.
#include <QDir>
#include <QLineEdit>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "kiln/engine.h"
#include "kiln/image_io.h"
#include "node_canvas.h"
#include "node_search.h"
#include "workflow_document.h"

using kiln::app::WorkflowDocument;
using kiln::ui::NodeCanvas;

namespace {

// Drags with the left button from one scene point to another on the canvas.
void drag(NodeCanvas& canvas, const QPointF& from, const QPointF& to,
          QString* problem_on_the_way = nullptr) {
  QWidget* port = canvas.viewport();
  const QPoint a = canvas.mapFromScene(from), b = canvas.mapFromScene(to);
  QTest::mousePress(port, Qt::LeftButton, {}, a);
  QTest::mouseMove(port, (a + b) / 2);
  QTest::mouseMove(port, b);
  if (problem_on_the_way) *problem_on_the_way = canvas.dragProblem();
  QTest::mouseRelease(port, Qt::LeftButton, {}, b);
}

}  // namespace

class TestNodeCanvas : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void buildsAndRunsAWorkflow() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    NodeCanvas canvas(&doc);
    canvas.resize(1400, 800);
    canvas.show();
    QVERIFY(QTest::qWaitForWindowExposed(&canvas));
    const std::string ckpt = doc.addNode("LoadCheckpoint", 0, 0);
    const std::string pos = doc.addNode("TextEncode", 260, -60);
    const std::string neg = doc.addNode("TextEncode", 260, 60);
    const std::string latent = doc.addNode("EmptyLatent", 260, 180);
    const std::string sampler = doc.addNode("Sampler", 520, 0);
    const std::string decode = doc.addNode("VAEDecode", 780, 0);
    const std::string save = doc.addNode("SaveImage", 1040, 0);
    canvas.frameAll();
    const auto out = [&](const std::string& n, const char* p) {
      return canvas.portPosition(n, p, true);
    };
    const auto in = [&](const std::string& n, const char* p) {
      return canvas.portPosition(n, p, false);
    };
    // A VAE output on a MODEL input: refused while dragging, and nothing connected.
    QString problem;
    drag(canvas, out(ckpt, "VAE"), in(sampler, "model"), &problem);
    QCOMPARE(problem, QString("The output gives VAE and the input takes MODEL"));
    QVERIFY(doc.workflow().links.empty());
    QVERIFY(canvas.dragProblem().isEmpty());
    // Wire everything by dragging.
    drag(canvas, out(ckpt, "CLIP"), in(pos, "clip"));
    drag(canvas, out(ckpt, "CLIP"), in(neg, "clip"));
    drag(canvas, out(ckpt, "MODEL"), in(sampler, "model"));
    drag(canvas, out(pos, "CONDITIONING"), in(sampler, "positive"));
    drag(canvas, out(neg, "CONDITIONING"), in(sampler, "negative"));
    drag(canvas, out(latent, "LATENT"), in(sampler, "latent_image"));
    drag(canvas, out(sampler, "LATENT"), in(decode, "samples"));
    drag(canvas, out(ckpt, "VAE"), in(decode, "vae"));
    drag(canvas, out(decode, "IMAGE"), in(save, "images"));
    QCOMPARE(doc.workflow().links.size(), std::size_t{9});
    // Pulling a link off an input and dropping it on nothing disconnects it; undo restores.
    drag(canvas, in(decode, "vae"), in(decode, "vae") + QPointF(0, 300));
    QCOMPARE(doc.workflow().links.size(), std::size_t{8});
    doc.undoStack()->undo();
    QCOMPARE(doc.workflow().links.size(), std::size_t{9});
    // Validation problems are marked on the nodes they concern.
    canvas.showProblems(doc.problems());
    QVERIFY(doc.problems().empty());
    // Del removes the selected node and its links; undo brings both back.
    canvas.selectIds({latent});
    QTest::keyClick(canvas.viewport(), Qt::Key_Delete);
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{6});
    QCOMPARE(doc.workflow().links.size(), std::size_t{8});
    QVERIFY(!doc.problems().empty());
    canvas.showProblems(doc.problems());
    QVERIFY(canvas.nodeProblem(sampler).contains("latent_image"));
    doc.undoStack()->undo();
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{7});
    QVERIFY(doc.problems().empty());
    QVERIFY(canvas.nodeProblem(sampler).isEmpty());  // cleared by the edit
    // Copy and paste through the clipboard.
    canvas.selectIds({pos, neg});
    canvas.copySelection();
    canvas.paste();
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{9});
    QCOMPARE(canvas.selectedIds().size(), std::size_t{2});
    canvas.deleteSelection();
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{7});

    // The node search: best matches first, Enter adds the first at the place it opened.
    kiln::ui::NodeSearch* search = canvas.openNodeSearch({100, 500}, "vae");
    QCOMPARE(search->matches().front(), std::string("VAEDecode"));
    search->field()->setText("samp");
    QCOMPARE(search->matches().front(), std::string("Sampler"));
    QTest::keyClick(search->field(), Qt::Key_Return);
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{8});
    QCOMPARE(doc.workflow().nodes.back().type, std::string("Sampler"));
    QCOMPARE(doc.workflow().nodes.back().x, 100.0);
    QCOMPARE(canvas.selectedIds(), std::vector<std::string>{doc.workflow().nodes.back().id});
    doc.undoStack()->undo();
    // Typing a letter on the canvas opens the search with it.
    QTRY_VERIFY(!canvas.findChild<kiln::ui::NodeSearch*>());  // the first one closed and went
    QTest::keyClick(canvas.viewport(), Qt::Key_L, Qt::NoModifier);
    auto* typed = canvas.findChild<kiln::ui::NodeSearch*>();
    QTRY_VERIFY(typed);
    QCOMPARE(typed->field()->text(), QString("l"));
    QCOMPARE(typed->matches().front(), std::string("LoadCheckpoint"));
    QTest::keyClick(typed->field(), Qt::Key_Escape);
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{7});

    // The workflow the canvas built runs to an image.
    QVERIFY(doc.setParam(
        ckpt, "ckpt_name",
        std::string(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors"));
    QVERIFY(doc.setParam(pos, "text", std::string("a red circle")));
    QVERIFY(doc.setParam(latent, "width", int64_t{64}));
    QVERIFY(doc.setParam(latent, "height", int64_t{64}));
    QVERIFY(doc.setParam(sampler, "steps", int64_t{2}));
    QTemporaryDir dir;
    kiln::EngineOptions options;
    options.write_image = [](const std::string& path, const kiln::Image& image) {
      kiln::writeImage(path, image);
    };
    kiln::Engine engine(options);
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(doc.workflow());
    job.output_dir = dir.path().toStdString();
    QVERIFY(engine.submit(job) > 0);
    QVERIFY(engine.waitIdle(120));
    QCOMPARE(QDir(dir.path()).entryList({"*.png"}).size(), 1);
    // A group around the prompts, for the screenshot.
    canvas.selectIds({pos, neg});
    QVERIFY(canvas.groupSelection() >= 0);
    QVERIFY(doc.setGroupTitle(0, "Prompts"));
    // States show on the nodes while a workflow runs.
    canvas.setNodeState(sampler, "running", "12/30 steps");
    canvas.setNodeState(decode, "failed", "out of memory");
    const QString shot = QString(KILN_TEST_ARTIFACTS) + "/workflow_editor.png";
    QDir().mkpath(KILN_TEST_ARTIFACTS);
    QVERIFY(canvas.grab().save(shot));
  }

  void groupsAndEditsOnNodes() {
    WorkflowDocument doc(kiln::builtinNodeSchemas());
    NodeCanvas canvas(&doc);
    canvas.resize(1200, 800);
    canvas.show();
    QVERIFY(QTest::qWaitForWindowExposed(&canvas));
    const std::string sampler = doc.addNode("Sampler", 0, 0);
    const std::string latent = doc.addNode("EmptyLatent", 0, 320);
    const std::string save = doc.addNode("SaveImage", 400, 0);
    canvas.centerOn(200, 200);
    // Ctrl+G frames the selection as one group.
    canvas.selectIds({sampler, latent});
    QTest::keyClick(canvas.viewport(), Qt::Key_G, Qt::ControlModifier);
    QCOMPARE(doc.workflow().groups.size(), std::size_t{1});
    QCOMPARE(doc.workflow().groups[0].nodes, (std::vector<std::string>{sampler, latent}));
    const QRectF frame = canvas.groupRect(0);
    QVERIFY(frame.contains(canvas.nodePosition(sampler)) &&
            frame.contains(canvas.nodePosition(latent)));
    QVERIFY(!frame.contains(canvas.nodePosition(save)));
    // Dragging its title bar moves the group and its nodes, as one undo step.
    const QPointF bar = frame.topLeft() + QPointF(60, 12);
    QCOMPARE(canvas.groupAt(bar, true), 0);
    const int steps_before = doc.undoStack()->count();
    drag(canvas, bar, bar + QPointF(100, 50));
    QVERIFY2(std::abs(doc.workflow().node(sampler)->x - 100) < 1.5,
             qPrintable(QString::number(doc.workflow().node(sampler)->x)));
    QVERIFY(std::abs(doc.workflow().node(latent)->y - 370) < 1.5);
    QCOMPARE(doc.workflow().node(save)->x, 400.0);  // not in the group
    QCOMPARE(doc.undoStack()->count(), steps_before + 1);
    QVERIFY(std::abs(canvas.groupRect(0).left() - (frame.left() + 100)) <
            1.5);  // the frame follows
    doc.undoStack()->undo();
    QCOMPARE(doc.workflow().node(sampler)->x, 0.0);
    // A double click on the title renames it in place.
    QTest::mouseDClick(canvas.viewport(), Qt::LeftButton, {}, canvas.mapFromScene(bar));
    auto* title = canvas.findChild<QLineEdit*>("groupTitleEditor");
    QVERIFY(title);
    title->setText("Sampling");
    QTest::keyClick(title, Qt::Key_Return);
    QCOMPARE(doc.workflow().groups[0].title, std::string("Sampling"));

    // A click on a parameter's row edits it on the node; typing changes the document
    // (one undo step for the typing), Enter closes the editor.
    QCOMPARE(doc.workflow().node(sampler)->params.count("steps"), std::size_t{0});
    QTest::mouseClick(canvas.viewport(), Qt::LeftButton, {},
                      canvas.mapFromScene(canvas.paramPosition(sampler, "steps")));
    QVERIFY(canvas.paramEditor());
    auto* spin = canvas.paramEditor()->findChild<QSpinBox*>();
    QVERIFY(spin);
    const int before = doc.undoStack()->count();
    spin->selectAll();
    QTest::keyClicks(spin, "33");
    QCOMPARE(std::get<int64_t>(doc.workflow().node(sampler)->params.at("steps")), int64_t{33});
    QCOMPARE(doc.undoStack()->count(), before + 1);
    QVERIFY(canvas.paramEditor());  // still open while typing
    QTest::keyClick(spin, Qt::Key_Return);
    QTRY_VERIFY(!canvas.paramEditor());
    doc.undoStack()->undo();
    QCOMPARE(doc.workflow().node(sampler)->params.count("steps"), std::size_t{0});
    // Escape closes it without a change; dragging a row moves the node instead of editing.
    QVERIFY(canvas.editParam(latent, "width"));
    QTest::keyClick(canvas.paramEditor()->findChild<QSpinBox*>(), Qt::Key_Escape);
    QTRY_VERIFY(!canvas.paramEditor());
    QCOMPARE(doc.undoStack()->index(), before);  // nothing new since the undo
    const QPointF row = canvas.paramPosition(latent, "width");
    drag(canvas, row, row + QPointF(0, 80));
    QVERIFY(!canvas.paramEditor());
    QVERIFY(std::abs(doc.workflow().node(latent)->y - 400) < 1.5);
    QVERIFY(!canvas.editParam(latent, "nothing"));
    // Ctrl+Shift+G ungroups the selection's group; the nodes stay.
    canvas.selectIds({sampler});
    QTest::keyClick(canvas.viewport(), Qt::Key_G, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(doc.workflow().groups.empty());
    QCOMPARE(doc.workflow().nodes.size(), std::size_t{3});
    QCOMPARE(canvas.groupAt(bar), -1);
  }
};

QTEST_MAIN(TestNodeCanvas)
#include "test_node_canvas.moc"
