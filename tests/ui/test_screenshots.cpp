// Screenshots of the real windows, kept as test artifacts, with what a person would see
// checked: the main window during a generation (progress bar mid-way with its stage
// segments, Interrupt enabled and bold, queue and memory docks filled) in the light and
// dark themes; every page of the preferences dialog with its controls inside it; both
// pages of the first-start assistant with no description cut; a long error that keeps the
// window on the screen; a small picture enlarged to the view; the workflow editor opening
// whole on the screen; the memory dock showing its values. Run under Xvfb (the xcb
// platform: what the X server shows is grabbed) where xvfb-run exists, else offscreen.
#include <QComboBox>
#include <QDir>
#include <QGuiApplication>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>

#include "appearance.h"
#include "engine_bridge.h"
#include "first_start_wizard.h"
#include "image_view.h"
#include "main_window.h"
#include "memory_map.h"
#include "memory_panel.h"
#include "preferences_dialog.h"
#include "settings.h"
#include "stage_progress_bar.h"
#include "workflow_editor.h"

namespace {

// What the screen shows of `w` (X server) or what the widget paints (offscreen).
QImage shoot(QWidget* w) {
  if (QGuiApplication::platformName() == "xcb") {
    QCoreApplication::processEvents();
    return w->screen()->grabWindow(w->winId()).toImage();
  }
  return w->grab().toImage();
}

// A picture with content: several distinct colours, not one flat fill.
int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 7)
    for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
  return static_cast<int>(colours.size());
}

// Whether a widget inside a scroll area is within the part of it the area shows.
struct MemoryBarCheck {
  QWidget* bar;
  bool inView() const {
    for (QWidget* w = bar->parentWidget(); w; w = w->parentWidget())
      if (auto* scroll = qobject_cast<QScrollArea*>(w)) {
        QWidget* view = scroll->viewport();
        return view->rect().contains(QRect(bar->mapTo(view, QPoint()), bar->size()));
      }
    return true;
  }
};

void keep(const QImage& image, const QString& name) {
  QDir().mkpath(KILN_TEST_ARTIFACTS);
  QVERIFY(image.save(QString(KILN_TEST_ARTIFACTS) + "/" + name));
}

}  // namespace

class TestScreenshots : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void mainWindowDuringGeneration_data() {
    QTest::addColumn<QString>("theme");
    QTest::newRow("light") << "light";
    QTest::newRow("dark") << "dark";
  }
  void mainWindowDuringGeneration() {
    QFETCH(QString, theme);
    kiln::ui::setTheme(theme);
    QTemporaryDir dir;
    auto store = std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat);
    auto settings = std::make_unique<kiln::app::Settings>(std::move(store));
    QVERIFY(settings->set("general/output_folder", dir.filePath("out")).isEmpty());
    kiln::ui::MainWindow window(std::move(settings));
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    // A finished picture in the viewer, then a long render running, one more waiting.
    window.modelEdit()->setText(QString(KILN_CONFORMANCE_DIR) +
                                "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
    window.stepsSpin()->setValue(4);
    window.widthSpin()->setValue(128);
    window.heightSpin()->setValue(128);
    window.startGenerate();
    QTRY_VERIFY2_WITH_TIMEOUT(window.hasResult(), qPrintable(window.statusText()), 120000);
    window.stepsSpin()->setValue(1000);
    window.startGenerate();
    window.startGenerate();
    // Far enough into the denoising that the bar shows it (the model is loaded already).
    QTRY_VERIFY2_WITH_TIMEOUT(window.statusText().contains("/1000 steps") &&
                                  !window.statusText().contains(" 0/") &&
                                  !window.statusText().contains(" 1/"),
                              qPrintable(window.statusText()), 60000);
    const QImage shot = shoot(&window);
    // What a person sees: one bar segment per stage, Interrupt reachable and bold.
    QVERIFY(window.progressBar()->stageCount() >= 3);
    QVERIFY(window.stopButton()->isEnabled() && window.stopButton()->font().bold());
    QVERIFY(window.skipButton()->isEnabled());
    window.bridge()->cancelAll();
    QVERIFY(shot.width() >= 1000 && shot.height() >= 600);
    QVERIFY2(distinctColours(shot) > 20, qPrintable(QString::number(distinctColours(shot))));
    keep(shot, "main_window_generating_" + theme + ".png");
    QTRY_VERIFY_WITH_TIMEOUT(!window.bridge()->busy(), 10000);
    kiln::ui::setTheme("system");
  }

  void preferencesDialog() {
    QTemporaryDir dir;
    kiln::app::Settings settings(
        std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat));
    kiln::ui::PreferencesDialog dialog(settings, nullptr);
    dialog.resize(720, 640);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    for (int page = 0; page < dialog.pages()->count(); ++page) {
      dialog.pages()->setCurrentIndex(page);
      QTest::qWait(50);
      const QImage shot = shoot(&dialog);
      QVERIFY(shot.width() >= 600);
      QVERIFY(distinctColours(shot) > 5);
      // Every setting of the page has its control shown, whole, inside the dialog.
      int controls = 0;
      for (const auto& spec : kiln::app::settingSpecs()) {
        QWidget* editor = dialog.editorFor(spec.key);
        if (!editor || !editor->isVisible()) continue;
        ++controls;
        // A page longer than the dialog scrolls: the control is shown once scrolled to.
        for (QWidget* w = editor->parentWidget(); w; w = w->parentWidget())
          if (auto* scroll = qobject_cast<QScrollArea*>(w)) {
            scroll->ensureWidgetVisible(editor);
            break;
          }
        const QRect r(editor->mapTo(&dialog, QPoint()), editor->size());
        QVERIFY2(dialog.rect().contains(r), qPrintable(spec.key));
        QVERIFY2(editor->width() >= std::min(editor->minimumSizeHint().width(), 200),
                 qPrintable(spec.key));
      }
      QVERIFY2(controls >= 1, qPrintable(dialog.pages()->tabText(page)));
      keep(shot, "preferences_" + QString::number(page + 1) + "_" +
                     dialog.pages()->tabText(page).toLower() + ".png");
    }
  }

  // The memory map of a loaded model on a simulated 256 MiB device, with the UNet
  // streamed block by block: shown whole when the Memory page is scrolled to it.
  void memoryMap() {
    QTemporaryDir dir;
    auto store = std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat);
    auto settings = std::make_unique<kiln::app::Settings>(std::move(store));
    QVERIFY(settings->set("memory/device", "sim:256M").isEmpty());
    QVERIFY(settings->set("general/output_folder", dir.filePath("out")).isEmpty());
    kiln::ui::MainWindow window(std::move(settings));
    window.modelEdit()->setText(QString(KILN_CONFORMANCE_DIR) +
                                "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
    window.stepsSpin()->setValue(2);
    window.widthSpin()->setValue(128);
    window.heightSpin()->setValue(128);
    window.startGenerate();
    QTRY_VERIFY2_WITH_TIMEOUT(window.hasResult(), qPrintable(window.statusText()), 120000);
    kiln::ui::PreferencesDialog dialog(window.settings(), window.bridge());
    dialog.resize(760, 700);
    dialog.setPlanSize(512, 512, 0);
    qobject_cast<QComboBox*>(dialog.editorFor("memory/offload_unet"))
        ->setCurrentText("group-block");
    dialog.pages()->setCurrentIndex(1);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QTest::qWait(100);
    kiln::ui::MemoryMapView* map = dialog.memoryMap();
    QCOMPARE(map->deviceBars().size(), 1);
    QVERIFY(map->fits());
    // Whole inside the dialog and inside the map's scrolled view (not clipped away).
    MemoryBarCheck check{map->deviceBars()[0]};
    const QRect bar(check.bar->mapTo(&dialog, QPoint()), check.bar->size());
    QVERIFY2(dialog.rect().contains(bar), "the device bar is inside the dialog");
    QVERIFY2(check.inView(), "the device bar is in the map's view");
    QVERIFY(bar.width() >= 300);
    const QImage shot = shoot(&dialog);
    QVERIFY(distinctColours(shot) > 8);
    keep(shot, "preferences_memory_map.png");
  }

  void firstStartAssistant() {
    QTemporaryDir dir;
    kiln::app::Settings settings(
        std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat));
    kiln::ui::FirstStartWizard wizard(
        settings,
        {{"/home/artist/ComfyUI", kiln::app::ModelLayout::ComfyUI, 12},
         {"/home/artist/AI/stable-diffusion-webui", kiln::app::ModelLayout::A1111, 4}},
        {{"NVIDIA GeForce RTX 3060", "NVIDIA", qint64{12288} << 20}}, false);
    wizard.resize(720, 520);
    wizard.show();
    QVERIFY(QTest::qWaitForWindowExposed(&wizard));
    for (const char* page : {"models", "memory"}) {
      QTest::qWait(50);
      const QImage shot = shoot(&wizard);
      QVERIFY(shot.width() >= 600);
      QVERIFY(distinctColours(shot) > 5);
      // No wrapped text is cut: each label is as tall as its text needs at its width.
      for (const QLabel* label : wizard.currentPage()->findChildren<QLabel*>())
        if (label->isVisible() && label->wordWrap())
          QVERIFY2(label->height() >= label->heightForWidth(label->width()),
                   qPrintable(label->text()));
      keep(shot, QString("first_start_") + page + ".png");
      wizard.next();
    }
  }

  // A long error wraps in the status line, the window stays on the screen, and the
  // parser's own words go to the log only; a small picture is enlarged to the view.
  void longErrorsAndSmallPictures() {
    QTemporaryDir dir;
    kiln::ui::MainWindow window(std::make_unique<kiln::app::Settings>(
        std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat)));
    window.resize(1280, 820);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QRect screen = window.screen()->availableGeometry();
    QFile notes(dir.filePath(QString(200, 'n') + ".json"));
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("these are my notes, not a workflow {");
    notes.close();
    QVERIFY(!window.openTemplate(notes.fileName()));
    QVERIFY2(window.statusText().contains("This file is not a workflow: it is not JSON"),
             qPrintable(window.statusText()));
    QVERIFY(!window.statusText().contains("json.exception"));
    QVERIFY(window.logView()->toPlainText().contains("json.exception"));
    // A failure whose message runs to thousands of characters.
    window.modelEdit()->setText("/models/" + QString(3000, 'm') + ".safetensors");
    window.startGenerate();
    QTRY_VERIFY_WITH_TIMEOUT(!window.bridge()->busy(), 60000);
    QVERIFY2(window.statusText().startsWith("Failed"), qPrintable(window.statusText()));
    QTest::qWait(50);
    QVERIFY2(window.frameGeometry().width() <= screen.width(),
             qPrintable(QString::number(window.frameGeometry().width())));
    QVERIFY(window.minimumSizeHint().width() <= screen.width());
    // A 64x64 picture fills the view, its pixels as blocks.
    QImage small(64, 64, QImage::Format_RGB888);
    small.fill(QColor(220, 30, 30));
    window.imageView()->setImage(small);
    window.imageView()->fitToWindow();
    QVERIFY2(window.imageView()->zoom() > 3.0,
             qPrintable(QString::number(window.imageView()->zoom())));
    const QImage shot = shoot(&window);
    keep(shot, "main_window_long_error.png");
    const QPoint middle = window.imageView()->mapTo(&window, window.imageView()->rect().center());
    const QColor seen = shot.pixelColor(middle * shot.width() / window.width());
    QVERIFY2(seen.red() > 180 && seen.green() < 80, qPrintable(seen.name()));
  }

  // The workflow editor opens whole on the screen, its side panel wide enough.
  void workflowEditorOpensOnTheScreen() {
    QTemporaryDir dir;
    kiln::ui::MainWindow window(std::make_unique<kiln::app::Settings>(
        std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat)));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    kiln::ui::WorkflowEditor* editor = window.openWorkflowEditor();
    QVERIFY(QTest::qWaitForWindowExposed(editor));
    const QRect screen = editor->screen()->availableGeometry();
    QVERIFY2(screen.contains(editor->frameGeometry()),
             qPrintable(QString("%1,%2 %3x%4")
                            .arg(editor->frameGeometry().x())
                            .arg(editor->frameGeometry().y())
                            .arg(editor->frameGeometry().width())
                            .arg(editor->frameGeometry().height())));
    QVERIFY(editor->findChild<QDockWidget*>("node")->width() >= 340);
    keep(shoot(editor), "workflow_editor.png");
  }

  // The memory dock at a narrow width shows both columns, long names elided, whole
  // texts in the tooltips.
  void memoryDockShowsItsValues() {
    kiln::ui::MemoryPanel panel;
    kiln::app::MemorySnapshot m;
    m.device = "sim:8.00 GiB";
    m.device_total = qint64{8} << 30;
    m.cached_models = 1;
    m.placements << "conditioner.embedders.1.model.transformer (OpenCLIPTextModelWithProjection, "
                    "1.29 GiB, fp16, "
                    "not quantized): group-leaf, back to the host after each call, pinned";
    panel.showMemory(m);
    panel.resize(320, 300);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTreeWidget* tree = panel.tree();
    QVERIFY(tree->header()->sectionPosition(1) < tree->viewport()->width() - 80);
    QVERIFY(tree->header()->sectionSize(1) >= 100);
    const QTreeWidgetItem* models = tree->topLevelItem(3);
    QVERIFY(models && models->childCount() == 1);
    QVERIFY(models->child(0)->toolTip(1).contains("back to the host after each call"));
    keep(shoot(&panel), "memory_dock.png");
  }
};

QTEST_MAIN(TestScreenshots)
#include "test_screenshots.moc"
