// The main window under the offscreen platform, rendering the conformance model for real:
// Generate saves into the output folder and the gallery lists the result; Interrupt,
// Skip, the queue's cancel and reorder; reusing a result's settings; Preferences
// re-placing the loaded model live; the window in another language without a restart.
#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>

#include "appearance.h"
#include "engine_bridge.h"
#include "first_start_wizard.h"
#include "flux_tiny.h"
#include "gallery_panel.h"
#include "image_view.h"
#include "kiln/build_info.h"
#include "kiln/render.h"
#include "main_window.h"
#include "memory_map.h"
#include "memory_panel.h"
#include "number_fields.h"
#include "parameter_panel.h"
#include "preferences_dialog.h"
#include "queue_panel.h"
#include "result_files.h"
#include "settings.h"
#include "stage_progress_bar.h"
#include "wan_tiny.h"
#include "workflow_editor.h"

namespace {

QString tinyModel() {
  return QString(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors";
}

// A window over settings of its own, saving into `dir`/out.
std::unique_ptr<kiln::ui::MainWindow> makeWindow(const QTemporaryDir& dir,
                                                 const QString& device = "cpu") {
  auto store = std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat);
  auto settings = std::make_unique<kiln::app::Settings>(std::move(store));
  if (!settings->set("general/output_folder", dir.filePath("out")).isEmpty()) return nullptr;
  if (!settings->set("general/file_name_template", "test-{seed}").isEmpty()) return nullptr;
  if (!settings->set("memory/device", device).isEmpty()) return nullptr;
  auto window = std::make_unique<kiln::ui::MainWindow>(std::move(settings));
  window->modelEdit()->setText(tinyModel());
  window->promptEdit()->setPlainText("a red circle");
  window->stepsSpin()->setValue(3);
  window->widthSpin()->setValue(96);
  window->heightSpin()->setValue(64);
  window->randomSeedCheck()->setChecked(false);
  window->seedSpin()->setValue(7);
  return window;
}

QStringList pngs(const QTemporaryDir& dir) {
  return QDir(dir.filePath("out")).entryList({"*.png"}, QDir::Files, QDir::Name);
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // One picture whichever way it is asked for: the Generate button (the default template
  // workflow on the app's engine), `kiln-cli render`, kiln::render and the app's picture
  // opened in the workflow editor and run again draw the same pixels with the same A1111
  // text, at the size asked for: the starter model (whose VAE downscales by 4), an SD 1.x
  // model (by 8), an SDXL model (two text encoders, size conditioning) and a Wan 2.1 video
  // model picked as the model (a still, 16 latent channels).
  void generateDrawsWhatTheCliRenders_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("steps");
    QTest::addColumn<QStringList>("extra");  // kiln-cli options beside the panel's
    QTest::newRow("starter model") << "starter" << 6 << QStringList{};
    QTest::newRow("sd1") << "sd1" << 3 << QStringList{};
    QTest::newRow("sdxl") << "sdxl" << 2 << QStringList{};
    QTest::newRow("wan21 still") << "wan" << 2 << QStringList{"--frames", "1"};
  }
  void generateDrawsWhatTheCliRenders() {
    QFETCH(QString, model);
    QFETCH(int, steps);
    QFETCH(QStringList, extra);
    QTemporaryDir dir;
    QString path =
        model == "starter" ? QString::fromStdString(kiln::starterModelPath()) : tinyModel();
    if (model == "wan")
      path = QString::fromStdString(
          kiln::testing::writeWanTinyModel(dir.filePath("wan").toStdString()).folder);
    if (model == "sdxl")
      path = QString(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sdxl/sdxl_tiny_ldm.safetensors";
    auto window = makeWindow(dir);
    QVERIFY(window);
    window->modelEdit()->setText(path);
    window->promptEdit()->setPlainText("a red circle on a blue background");
    window->negativeEdit()->setPlainText("blurry");
    window->stepsSpin()->setValue(steps);
    window->cfgSpin()->setValue(5);
    window->widthSpin()->setValue(64);
    window->heightSpin()->setValue(64);
    window->show();
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window->hasResult(), 120000);
    QCOMPARE(window->statusText(), QString("Done"));
    QCOMPARE(window->imageView()->image().size(), QSize(64, 64));
    QTRY_COMPARE(pngs(dir).size(), 1);
    const QImage app(dir.filePath("out/" + pngs(dir).front()));

    const QString cli_png = dir.filePath("cli.png");
    QProcess cli;
    cli.start(
        KILN_CLI_PATH,
        QStringList{"render", "--model", path, "--prompt", "a red circle on a blue background",
                    "--negative", "blurry", "--seed", "7", "--steps", QString::number(steps),
                    "--cfg", "5", "--width", "64", "--height", "64", "--out", cli_png} +
            extra);
    QVERIFY(cli.waitForFinished(300000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    const QImage rendered(cli_png);
    QCOMPARE(app.size(), QSize(64, 64));
    QCOMPARE(rendered.size(), QSize(64, 64));
    QCOMPARE(app.text("parameters"), rendered.text("parameters"));
    QVERIFY(app.text("parameters").contains("Size: 64x64"));
    QVERIFY(app.convertToFormat(QImage::Format_RGB888) ==
            rendered.convertToFormat(QImage::Format_RGB888));

    // kiln::render, the library call, with the same settings.
    kiln::RenderParams p;
    p.model.path = path.toStdString();
    p.prompt.text = "a red circle on a blue background";
    p.prompt.negative = "blurry";
    p.sampling.seed = 7;
    p.sampling.steps = steps;
    p.sampling.cfg_scale = 5;
    p.size.width = p.size.height = 64;
    if (model == "wan") p.video.frames = 1;
    const kiln::RenderResult r = kiln::render(p);
    QCOMPARE(QString::fromStdString(r.image.text.at("parameters")), app.text("parameters"));
    QImage library(r.image.width, r.image.height, QImage::Format_RGB888);
    for (int y = 0; y < r.image.height; ++y)
      for (int x = 0; x < r.image.width; ++x) {
        const float* px = &r.image.pixels[static_cast<std::size_t>((y * r.image.width + x) * 3)];
        const auto byte = [](float v) { return std::lround(std::clamp(v, 0.0f, 1.0f) * 255); };
        library.setPixel(x, y, qRgb(byte(px[0]), byte(px[1]), byte(px[2])));
      }
    QVERIFY(library == app.convertToFormat(QImage::Format_RGB888));

    // The app's picture opened in the workflow editor and run again.
    const QString app_png = dir.filePath("out/" + pngs(dir).front());
    kiln::ui::WorkflowEditor* editor = window->openWorkflowEditor();
    QVERIFY(editor);
    QVERIFY(editor->open(app_png));
    QVERIFY(editor->run());
    QTRY_VERIFY2_WITH_TIMEOUT(!window->bridge()->busy() && editor->statusText() == "Done",
                              qPrintable(editor->statusText()), 120000);
    QTRY_COMPARE(pngs(dir).size(), 2);
    QString editor_png;
    for (const QString& f : pngs(dir))
      if (dir.filePath("out/" + f) != app_png) editor_png = dir.filePath("out/" + f);
    const QImage again(editor_png);
    QCOMPARE(again.text("parameters"), app.text("parameters"));
    QVERIFY(again.convertToFormat(QImage::Format_RGB888) ==
            app.convertToFormat(QImage::Format_RGB888));
  }

  void generatesSavesAndListsAResult() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    QVERIFY(window);
    window->show();
    QCOMPARE(window->gallery()->count(), 0);
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QVERIFY(window->stopButton()->isEnabled());      // Interrupt is reachable at once
    QVERIFY(window->generateButton()->isEnabled());  // and another request can be queued
    QTRY_VERIFY_WITH_TIMEOUT(window->hasResult(), 120000);
    QCOMPARE(window->statusText(), QString("Done"));
    // The bar drew the job's planned stages and ended full.
    QVERIFY(window->progressBar()->stageCount() >= 5);  // load, encode, denoise, decode, save
    for (int i = 0; i < window->progressBar()->stageCount(); ++i)
      QCOMPARE(window->progressBar()->stageFraction(i), 1.0);
    QVERIFY(!window->stopButton()->isEnabled());
    QCOMPARE(window->imageView()->image().size(), QSize(96, 64));
    // Saved under the file name template, listed by the gallery with its settings.
    QCOMPARE(pngs(dir), QStringList{"test-7-00001.png"});
    QCOMPARE(window->gallery()->count(), 1);
    QVERIFY(window->gallery()->result(0).parameters.contains("Seed: 7"));
    QVERIFY(!window->gallery()->result(0).workflow.isEmpty());
    QVERIFY(
        window->logView()->toPlainText().contains("Saved " + dir.filePath("out/test-7-00001.png")));
    // A second render with the same name does not overwrite the first.
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(pngs(dir).size(), 2, 120000);
    QCOMPARE(pngs(dir), (QStringList{"test-7-00001.png", "test-7-00002.png"}));
    QTRY_COMPARE(window->gallery()->count(), 2);
    // A new window reads the folder back, newest first, thumbnails included.
    auto again = makeWindow(dir);
    QCOMPARE(again->gallery()->count(), 2);
    QTRY_COMPARE(again->gallery()->pendingThumbnails(), 0);
    QVERIFY(!again->gallery()->list()->item(0)->icon().isNull());
    // Reusing the result's settings fills the panel again.
    again->promptEdit()->setPlainText("something else");
    again->seedSpin()->setValue(99);
    again->stepsSpin()->setValue(30);
    again->randomSeedCheck()->setChecked(true);
    again->gallery()->list()->setCurrentRow(0);
    again->gallery()->reuseSelected();
    // The result's workflow is the template again, with the values it was made with.
    QCOMPARE(again->promptEdit()->toPlainText(), QString("a red circle"));
    QCOMPARE(again->seedSpin()->value(), qint64{7});
    QCOMPARE(again->stepsSpin()->value(), 3);
    QCOMPARE(again->widthSpin()->value(), 96);
    QCOMPARE(again->heightSpin()->value(), 64);
    QCOMPARE(again->modelEdit()->text(), tinyModel());
    QVERIFY(!again->randomSeedCheck()->isChecked());
    QCOMPARE(again->templateSource(), QString("test-7-00002.png"));
    // A picture with only A1111 parameters fills the panel's matching fields.
    kiln::app::ResultFile foreign;
    foreign.path = "elsewhere.png";
    foreign.parameters =
        "a green ring\nNegative prompt: blur\nSteps: 9, Sampler: Euler, CFG scale: 4.5, Seed: 11, "
        "Size: 128x72, Model: x";
    QVERIFY(again->reuseResult(foreign));
    QCOMPARE(again->promptEdit()->toPlainText(), QString("a green ring"));
    QCOMPARE(again->negativeEdit()->toPlainText(), QString("blur"));
    QCOMPARE(again->seedSpin()->value(), qint64{11});
    QCOMPARE(again->stepsSpin()->value(), 9);
    QCOMPARE(again->cfgSpin()->value(), 4.5);
    QCOMPARE(again->widthSpin()->value(), 128);
    QCOMPARE(again->heightSpin()->value(), 72);
    foreign.parameters = "no settings here";
    QVERIFY(!again->reuseResult(foreign));
    QCOMPARE(again->promptEdit()->toPlainText(), QString("a green ring"));
    const QString shot = QString(KILN_TEST_ARTIFACTS) + "/main_window.png";
    QDir().mkpath(KILN_TEST_ARTIFACTS);
    QVERIFY(window->grab().save(shot));
  }

  // Interrupt stops a long render at once and leaves the window ready for the next one.
  void interruptStopsTheRender() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    window->show();
    window->stepsSpin()->setValue(1000);
    QVERIFY(!window->stopButton()->isEnabled());
    QElapsedTimer started;
    started.start();
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QVERIFY(window->stopButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(window->statusText().startsWith("Denoising") &&
                                 window->statusText().contains("/1000 steps"),
                             60000);
    const qint64 to_first_step =
        started.elapsed();  // loading and encoding: this machine's pace now
    QElapsedTimer latency;
    latency.start();
    QTest::keyClick(window.get(), Qt::Key_Escape);
    QTRY_COMPARE_WITH_TIMEOUT(window->statusText(), QString("Stopped"), 5000 + 2 * to_first_step);
    QVERIFY2(latency.elapsed() < std::max<qint64>(to_first_step, 500),
             qPrintable(QString("%1 ms; the render took %2 ms to its first step")
                            .arg(latency.elapsed())
                            .arg(to_first_step)));
    QVERIFY(!window->stopButton()->isEnabled());
    QVERIFY(!window->hasResult());
    QVERIFY(pngs(dir).isEmpty());  // nothing half-written
  }

  // Skip finishes the image being rendered and drops the rest of the batch.
  void skipKeepsTheCurrentImageOfABatch() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    window->stepsSpin()->setValue(200);
    window->batchSpin()->setValue(3);
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window->statusText().contains("/200 steps"), 60000);
    QVERIFY(window->queuePanel()->list()->item(0)->text().contains("image 1 of 3"));
    QTest::mouseClick(window->skipButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window->hasResult(), 120000);
    QTRY_VERIFY(!window->bridge()->busy());
    QCOMPARE(pngs(dir), QStringList{"test-7-00001.png"});
    // Without Skip, a batch of 2 makes seed 7 and seed 8.
    window->stepsSpin()->setValue(2);
    window->batchSpin()->setValue(2);
    window->startGenerate();
    QTRY_COMPARE_WITH_TIMEOUT(pngs(dir).size(), 3, 120000);
    QCOMPARE(pngs(dir), (QStringList{"test-7-00001.png", "test-7-00002.png", "test-8-00001.png"}));
  }

  // The queue: requests wait in order, move, and are cancelled one by one or all at once.
  void queueCancelsAndReorders() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    kiln::app::EngineBridge* bridge = window->bridge();
    window->stepsSpin()->setValue(1000);
    window->startGenerate();
    window->stepsSpin()->setValue(2);
    for (int seed : {1, 2, 3}) {
      window->seedSpin()->setValue(seed);
      window->startGenerate();
    }
    QListWidget* list = window->queuePanel()->list();
    QCOMPARE(list->count(), 4);
    QVERIFY(list->item(0)->text().startsWith("Running:"));
    QVERIFY(list->item(3)->text().endsWith("seed 3"));
    // Seed 3 moves before seed 2; the running request cannot move.
    list->setCurrentRow(3);
    window->queuePanel()->moveSelected(-1);
    QVERIFY(list->item(2)->text().endsWith("seed 3"));
    QVERIFY(list->item(3)->text().endsWith("seed 2"));
    QVERIFY(!bridge->moveItem(bridge->queue().front().id, 1));
    // Cancel one waiting request (seed 1), then stop the running one: seed 3, then 2 run.
    list->setCurrentRow(1);
    window->queuePanel()->cancelSelected();
    QCOMPARE(list->count(), 3);
    QTRY_VERIFY_WITH_TIMEOUT(window->statusText().contains("/1000 steps"), 60000);
    QVERIFY(window->statusText().contains("2 waiting"));
    bridge->cancel();
    QTRY_COMPARE_WITH_TIMEOUT(pngs(dir).size(), 2, 120000);
    QCOMPARE(pngs(dir), (QStringList{"test-2-00001.png", "test-3-00001.png"}));
    QTRY_VERIFY(!bridge->busy());  // the files land before their jobs' ends are reported
    const QString log = window->logView()->toPlainText();
    QVERIFY(log.contains("Saved " + dir.filePath("out/test-2-00001.png")));
    QVERIFY(log.indexOf("Saved " + dir.filePath("out/test-3-00001.png")) <
            log.indexOf("Saved " + dir.filePath("out/test-2-00001.png")));
    // Cancel all: the running request stops and the waiting ones go.
    window->stepsSpin()->setValue(1000);
    window->startGenerate();
    window->startGenerate();
    QCOMPARE(list->count(), 2);
    bridge->cancelAll();
    QTRY_VERIFY_WITH_TIMEOUT(!bridge->busy(), 10000);
    QCOMPARE(list->count(), 0);
    QCOMPARE(pngs(dir).size(), 2);
  }

  // Applying memory preferences re-places the loaded model at once, without a job and
  // without reloading, and the memory dock shows the new placement.
  void preferencesReplaceLoadedComponents() {
    QTemporaryDir dir;
    auto window = makeWindow(dir, "sim:256M");
    window->show();
    window->startGenerate();
    QTRY_VERIFY_WITH_TIMEOUT(window->hasResult(), 120000);
    kiln::ui::MemoryPanel* memory = window->memoryPanel();
    QTRY_VERIFY(memory->memory().device.startsWith("sim"));
    QTRY_COMPARE(memory->memory().cached_models, 1);
    const qint64 resident = memory->memory().device_allocated;
    QVERIFY(resident > 0);
    QVERIFY(!memory->memory().placements.filter("unet (").filter("): none").isEmpty());
    kiln::ui::PreferencesDialog dialog(window->settings(), window->bridge());
    // The memory map shows the loaded model as it is placed now...
    kiln::ui::MemoryMapView* map = dialog.memoryMap();
    QCOMPARE(map->deviceBars().size(), 1);
    QVERIFY(map->fits());
    const qint64 planned_now = map->deviceBars()[0]->parts()[0].bytes;  // resident weights
    QTRY_COMPARE(memory->memory().cached_model_device_bytes, planned_now);
    QVERIFY2(map->shownText().contains("unet (UNetModel"), qPrintable(map->shownText()));
    auto* unet = qobject_cast<QComboBox*>(dialog.editorFor("memory/offload_unet"));
    QVERIFY(unet);
    unet->setCurrentText("group-block");
    // ...and what a change will do before it is applied, which Apply then does.
    const qint64 planned = map->deviceBars()[0]->parts()[0].bytes;
    QVERIFY(planned < planned_now);
    QVERIFY(map->deviceBars()[0]->parts()[1].bytes > 0);  // the largest streamed group
    QVERIFY2(map->shownText().contains("group-block"), qPrintable(map->shownText()));
    QVERIFY2(dialog.apply(), qPrintable(dialog.errorText()));
    QTRY_VERIFY_WITH_TIMEOUT(
        !memory->memory().placements.filter("unet (").filter("group-block").isEmpty(), 30000);
    QTRY_COMPARE(memory->memory().cached_model_device_bytes, planned);
    QVERIFY(memory->memory().device_allocated < resident);
    // A size the device cannot take is said before anything runs.
    dialog.setPlanSize(8192, 8192, 0);
    QVERIFY(!map->fits());
    QVERIFY2(map->shownText().contains("Does not fit"), qPrintable(map->shownText()));
    QVERIFY(map->deviceBars()[0]->parts()[2].bytes > map->deviceBars()[0]->total());
    QCOMPARE(memory->memory().cached_models, 1);
    // The dock's tree names the component and its new placement.
    bool shown = false;
    for (QTreeWidgetItem* item :
         memory->tree()->findItems("unet (", Qt::MatchStartsWith | Qt::MatchRecursive))
      shown = shown || item->text(1).contains("group-block");
    QVERIFY(shown);
    QVERIFY(window->logView()->toPlainText().contains("group-block"));
    QCOMPARE(window->logView()->toPlainText().count("Started "), 1);  // no job ran for it
  }

  // Closing the window mid-render stops the engine at once; the next window renders.
  void closingWhileRenderingStopsCleanly() {
    QTemporaryDir dir;
    {
      auto window = makeWindow(dir);
      window->stepsSpin()->setValue(1000);
      QElapsedTimer started;
      started.start();
      window->startGenerate();
      window->startGenerate();
      QTRY_VERIFY_WITH_TIMEOUT(window->statusText().contains("/1000 steps"), 60000);
      const qint64 to_first_step = started.elapsed();
      QElapsedTimer closing;
      closing.start();
      window.reset();
      QVERIFY2(closing.elapsed() < std::max<qint64>(to_first_step, 500),
               qPrintable(QString("%1 ms; the render took %2 ms to its first step")
                              .arg(closing.elapsed())
                              .arg(to_first_step)));
    }
    auto window = makeWindow(dir);
    window->startGenerate();
    QTRY_VERIFY2_WITH_TIMEOUT(window->hasResult(), qPrintable(window->statusText()), 60000);
    QCOMPARE(pngs(dir), QStringList{"test-7-00001.png"});
  }

  void reportsFailureWithoutModel() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    window->modelEdit()->setText("/nonexistent/model.safetensors");
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window->statusText().startsWith("Failed:"), 30000);
    QVERIFY2(window->statusText().contains("does not exist"), qPrintable(window->statusText()));
    QVERIFY(!window->bridge()->busy());
    QVERIFY(!window->hasResult());
    QVERIFY(pngs(dir).isEmpty());
  }

  // Any workflow can be the panel's template: its exposed parameters become the panel.
  // Picking a FLUX.1 model switches the built-in template to FLUX's: guidance in place of
  // the CFG scale and no negative prompt, the prompt and seed kept; Generate draws with it;
  // an SD model brings the default template back.
  void aFluxModelSwitchesToTheFluxTemplate() {
    QTemporaryDir dir;
    const kiln::testing::FluxTinyModel flux =
        kiln::testing::writeFluxTinyModel(dir.filePath("flux").toStdString());
    auto window = makeWindow(dir);
    QCOMPARE(window->templateSource(), QString("default"));
    QVERIFY(window->cfgSpin());
    window->modelEdit()->setText(QString::fromStdString(flux.transformer));
    QTRY_COMPARE(window->templateSource(), QString("flux"));
    QVERIFY(!window->negativeEdit());
    QVERIFY(!window->cfgSpin());
    QVERIFY(window->parameterPanel()->editor("guidance", "guidance"));
    QVERIFY(window->promptEdit());
    QCOMPARE(window->promptEdit()->toPlainText(), QString("a red circle"));
    QCOMPARE(window->seedSpin()->value(), qint64{7});
    QCOMPARE(window->widthSpin()->value(), 1024);
    window->stepsSpin()->setValue(2);
    window->widthSpin()->setValue(64);
    window->heightSpin()->setValue(48);
    window->startGenerate();
    QTRY_VERIFY2_WITH_TIMEOUT(window->hasResult(), qPrintable(window->statusText()), 120000);
    QCOMPARE(pngs(dir).size(), 1);
    QVERIFY(window->gallery()->result(0).workflow.contains("FluxGuidance"));
    window->modelEdit()->setText(tinyModel());
    QTRY_COMPARE(window->templateSource(), QString("default"));
    QVERIFY(window->negativeEdit() && window->promptEdit());
    QCOMPARE(window->promptEdit()->toPlainText(), QString("a red circle"));
  }

  void opensWorkflowsAsTemplates() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    const auto write = [&](const QString& name, const QByteArray& text) {
      QFile f(dir.filePath(name));
      if (!f.open(QIODevice::WriteOnly)) return QString();
      f.write(text);
      return f.fileName();
    };
    // A Kiln workflow exposing two parameters, one of them not a usual one.
    QFile corpus(QString(KILN_SOURCE_DIR) + "/tests/fuzz/workflow_corpus/text_to_image.json");
    QVERIFY(corpus.open(QIODevice::ReadOnly));
    QByteArray text = corpus.readAll();
    text.replace("\"model.safetensors\"", "\"" + tinyModel().toUtf8() + "\"");
    text.replace(
        " \"links\":",
        " \"exposed\": [{\"node\": \"sampler\", \"param\": \"steps\", \"label\": \"Steps\"},"
        " {\"node\": \"sampler\", \"param\": \"denoise\", \"label\": \"Strength\"}],\n \"links\":");
    QVERIFY(window->openTemplate(write("two.json", text)));
    QCOMPARE(window->parameterPanel()->count(), 2);
    QCOMPARE(window->templateSource(), QString("two.json"));
    QVERIFY(window->stepsSpin());
    QVERIFY(!window->promptEdit());  // not exposed: the workflow's own value is used
    QVERIFY(window->parameterPanel()->editor("sampler", "denoise"));
    window->stepsSpin()->setValue(2);
    window->startGenerate();
    QTRY_VERIFY2_WITH_TIMEOUT(window->hasResult(), qPrintable(window->statusText()), 120000);
    QCOMPARE(pngs(dir).size(), 1);
    QVERIFY(window->gallery()->result(0).workflow.contains("\"steps\": 2"));
    // A ComfyUI workflow exposes nothing of its own: the usual parameters are shown.
    QFile comfy(QString(KILN_SOURCE_DIR) + "/tests/fuzz/workflow_corpus/comfy_api.json");
    QVERIFY(comfy.open(QIODevice::ReadOnly));
    QByteArray api = comfy.readAll();
    api.replace("/work/shared/conformance/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors",
                tinyModel().toUtf8());
    QVERIFY(window->openTemplate(write("comfy.json", api)));
    QCOMPARE(window->parameterPanel()->count(), 9);
    QCOMPARE(window->promptEdit()->toPlainText(), QString("a red circle"));
    QCOMPARE(window->negativeEdit()->toPlainText(), QString("blurry"));
    QCOMPARE(window->seedSpin()->value(), qint64{5});
    QCOMPARE(window->widthSpin()->value(), 64);
    // Files that cannot be a template leave the panel as it was, with the reason shown.
    QVERIFY(!window->openTemplate(write("broken.json", "{\"kiln_workflow\": 1, \"nodes\": [")));
    QVERIFY2(window->statusText().startsWith("Cannot open broken.json"),
             qPrintable(window->statusText()));
    QVERIFY(!window->openTemplate(dir.filePath("missing.json")));
    QByteArray cycle = text;
    cycle.replace("\"type\": \"Sampler\"", "\"type\": \"NoSuchNode\"");
    QVERIFY(!window->openTemplate(write("unknown.json", cycle)));
    QVERIFY2(window->statusText().contains("cannot run"), qPrintable(window->statusText()));
    QCOMPARE(window->templateSource(), QString("comfy.json"));
    QCOMPARE(window->parameterPanel()->count(), 9);
  }

  // The interface changes language while it runs.
  void helpMenuShowsVersionAndRunsTheAssistant() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    QMenu* help = nullptr;
    for (QAction* a : window->menuBar()->actions())
      if (a->text() == "&Help") help = a->menu();
    QVERIFY(help);
    QCOMPARE(help->actions().size(), 2);
    const QString about = window->aboutText();
    QVERIFY(about.contains("Kiln " + QString::fromStdString(kiln::buildInfo().version)));
    QVERIFY(about.contains("libtorch " + QString::fromStdString(kiln::buildInfo().torch_version)));
    QVERIFY(about.contains("GPU backends: "));
    // The assistant again, from the menu: choosing a preset stores it and reaches the engine.
    QTimer::singleShot(200, [] {
      auto* wizard = qobject_cast<kiln::ui::FirstStartWizard*>(QApplication::activeModalWidget());
      if (!wizard) {  // fail without leaving a modal dialog waiting
        for (QWidget* w : QApplication::topLevelWidgets())
          if (auto* d = qobject_cast<QDialog*>(w)) d->reject();
        QFAIL("Help > First-Start Assistant opened no assistant");
      }
      wizard->choosePreset(kiln::app::MemoryPreset::Upto12GB);
      wizard->accept();
    });
    help->actions().at(0)->trigger();
    QCOMPARE(window->settings().value("memory/offload").toString(), QString("balanced"));
    QCOMPARE(window->settings().value("general/first_start").toBool(), false);
    QCOMPARE(window->settings().device(), QString("cpu"));  // a CPU-only build keeps the CPU
  }

  void switchesLanguageWithoutRestart() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    QCOMPARE(window->generateButton()->text(), QString("Generate"));
    QVERIFY(kiln::ui::setLanguage("de", KILN_QM_DIR));
    QTRY_COMPARE(window->generateButton()->text(), QString("Generieren"));
    QCOMPARE(window->findChild<QDockWidget*>("queue")->windowTitle(), QString("Warteschlange"));
    // The panel's labels come from the template workflow and are translated too.
    QString steps_label;
    for (const QLabel* l : window->findChildren<QLabel*>())
      if (l->buddy() == window->stepsSpin()) steps_label = l->text();
    QCOMPARE(steps_label, QString("Schritte"));
    QVERIFY(kiln::ui::setLanguage("ja", KILN_QM_DIR));
    QTRY_COMPARE(window->generateButton()->text(), QString("生成"));
    QVERIFY(kiln::ui::setLanguage("en", KILN_QM_DIR));
    QTRY_COMPARE(window->generateButton()->text(), QString("Generate"));
    QVERIFY(!kiln::ui::setLanguage("xx", KILN_QM_DIR));
    QCOMPARE(window->generateButton()->text(), QString("Generate"));
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
