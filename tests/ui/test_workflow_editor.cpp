// The workflow editor window under the offscreen platform, opened from the main window on
// its template: the side panel edits the selected node's parameters into the document
// (undoable), exposes a parameter to the generate panel, Run renders through the shared
// bridge with node states on the canvas, a workflow that cannot run has its problems
// marked, and "Use in Generate Panel" hands the workflow back.
#include <QCheckBox>
#include <QDir>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "engine_bridge.h"
#include "main_window.h"
#include "node_canvas.h"
#include "parameter_panel.h"
#include "settings.h"
#include "workflow_document.h"
#include "workflow_editor.h"

class TestWorkflowEditor : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void editsRunsAndHandsBack() {
    QTemporaryDir dir;
    auto settings = std::make_unique<kiln::app::Settings>(
        std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat));
    QVERIFY(settings->set("general/output_folder", dir.filePath("out")).isEmpty());
    kiln::ui::MainWindow window(std::move(settings));
    kiln::ui::WorkflowEditor* editor = window.openWorkflowEditor();
    QVERIFY(editor);
    kiln::app::WorkflowDocument* doc = editor->document();
    QCOMPARE(doc->workflow().nodes.size(), std::size_t{7});  // the panel's template
    QVERIFY(!doc->isModified());
    // The side panel edits the selected node.
    editor->canvas()->selectIds({"sampler"});
    auto* steps = qobject_cast<QSpinBox*>(editor->nodePanel()->editor("sampler", "steps"));
    QVERIFY(steps);
    steps->setValue(3);
    steps->setValue(2);
    QCOMPARE(std::get<int64_t>(doc->workflow().node("sampler")->params.at("steps")), int64_t{2});
    QCOMPARE(doc->undoStack()->count(), 1);  // one field, one undo step
    doc->undoStack()->undo();
    QCOMPARE(qobject_cast<QSpinBox*>(editor->nodePanel()->editor("sampler", "steps"))->value(),
             20);  // the panel follows
    doc->undoStack()->redo();
    QVERIFY(editor->exposeBox("denoise"));
    QVERIFY(!editor->exposeBox("denoise")->isChecked());
    QVERIFY(editor->exposeBox("steps")->isChecked());
    editor->exposeBox("denoise")->setChecked(true);
    QCOMPARE(doc->workflow().exposed.size(), std::size_t{10});
    // Run: the conformance model at 64 px.
    QVERIFY(doc->setParam(
        "model", "ckpt_name",
        std::string(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors"));
    // A slow sampler shows its own progress on its node while it runs.
    QVERIFY(doc->setParam("sampler", "steps", int64_t{400}));
    QVERIFY(editor->run());
    QTRY_VERIFY_WITH_TIMEOUT(editor->canvas()->nodeState("sampler") == "running" &&
                                 editor->canvas()->nodeProgress("sampler") > 0.0,
                             60000);
    QCOMPARE(editor->canvas()->nodeState("model"), QString("done"));
    window.bridge()->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!window.bridge()->busy() && editor->statusText() == "Stopped", 10000);
    doc->undoStack()->undo();  // back to 2 steps
    QCOMPARE(std::get<int64_t>(doc->workflow().node("sampler")->params.at("steps")), int64_t{2});
    QVERIFY(editor->run());
    QTRY_VERIFY2_WITH_TIMEOUT(!window.bridge()->busy() && editor->statusText() == "Done",
                              qPrintable(editor->statusText()), 120000);
    QCOMPARE(QDir(dir.filePath("out")).entryList({"*.png"}).size(), 1);
    QCOMPARE(editor->canvas()->nodeState("sampler"), QString("done"));
    QCOMPARE(editor->canvas()->nodeState("save"), QString("done"));
    // A run that fails leaves no node waiting for it; an edit clears the last run's states.
    QVERIFY(doc->setParam("model", "ckpt_name", dir.filePath("missing.safetensors").toStdString()));
    QVERIFY(editor->run());
    QTRY_VERIFY_WITH_TIMEOUT(!window.bridge()->busy() && editor->statusText().startsWith("Failed"),
                             60000);
    QCOMPARE(editor->canvas()->nodeState("model"), QString("failed"));
    for (const char* node : {"prompt", "negative", "latent", "sampler", "decode", "save"})
      QVERIFY2(editor->canvas()->nodeState(node).isEmpty(), node);
    doc->undoStack()->undo();  // the model again
    QVERIFY(editor->canvas()->nodeState("model").isEmpty());
    // A workflow that cannot run says why, on the nodes.
    QVERIFY(doc->removeNodes({"latent"}));
    QVERIFY(!editor->run());
    QVERIFY(editor->canvas()->nodeProblem("sampler").contains("latent_image"));
    QVERIFY(editor->statusText().startsWith("The workflow cannot run"));
    doc->undoStack()->undo();
    // Back to the generate panel, with the newly exposed parameter.
    Q_EMIT editor->useAsTemplate(doc->workflow());
    QCOMPARE(window.templateSource(), QString("workflow editor"));
    QCOMPARE(window.parameterPanel()->count(), 10);
    QCOMPARE(window.stepsSpin()->value(), 2);
    QVERIFY(window.parameterPanel()->editor("sampler", "denoise"));
  }
};

QTEST_MAIN(TestWorkflowEditor)
#include "test_workflow_editor.moc"
