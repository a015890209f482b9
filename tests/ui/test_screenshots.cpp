// Screenshots of the real windows, kept as test artifacts: the main window during a
// generation (progress bar mid-way, queue and memory docks filled) and every page of
// the preferences dialog, in the light and dark themes, and both pages of the first-start
// assistant. Run under Xvfb (the xcb
// platform: what the X server shows is grabbed) where xvfb-run exists, else offscreen.
#include <QDir>
#include <QGuiApplication>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScreen>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "appearance.h"
#include "engine_bridge.h"
#include "first_start_wizard.h"
#include "main_window.h"
#include "preferences_dialog.h"
#include "settings.h"
#include "stage_progress_bar.h"

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
    window.modelEdit()->setText(QString(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
    window.stepsSpin()->setValue(4);
    window.widthSpin()->setValue(128);
    window.heightSpin()->setValue(128);
    window.startGenerate();
    QTRY_VERIFY2_WITH_TIMEOUT(window.hasResult(), qPrintable(window.statusText()), 120000);
    window.stepsSpin()->setValue(1000);
    window.startGenerate();
    window.startGenerate();
    // Far enough into the denoising that the bar shows it (the model is loaded already).
    QTRY_VERIFY2_WITH_TIMEOUT(window.statusText().contains("/1000 steps") && !window.statusText().contains(" 0/") &&
                                  !window.statusText().contains(" 1/"),
                              qPrintable(window.statusText()), 60000);
    const QImage shot = shoot(&window);
    window.bridge()->cancelAll();
    QVERIFY(shot.width() >= 1000 && shot.height() >= 600);
    QVERIFY2(distinctColours(shot) > 20, qPrintable(QString::number(distinctColours(shot))));
    keep(shot, "main_window_generating_" + theme + ".png");
    QTRY_VERIFY_WITH_TIMEOUT(!window.bridge()->busy(), 10000);
    kiln::ui::setTheme("system");
  }

  void preferencesDialog() {
    QTemporaryDir dir;
    kiln::app::Settings settings(std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat));
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
      keep(shot, "preferences_" + QString::number(page + 1) + "_" + dialog.pages()->tabText(page).toLower() + ".png");
    }
  }

  void firstStartAssistant() {
    QTemporaryDir dir;
    kiln::app::Settings settings(std::make_unique<QSettings>(dir.filePath("kiln.ini"), QSettings::IniFormat));
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
      keep(shot, QString("first_start_") + page + ".png");
      wizard.next();
    }
  }
};

QTEST_MAIN(TestScreenshots)
#include "test_screenshots.moc"
