// The main window used the way a new artist uses it, under the offscreen platform: settings
// and the generate panel survive a restart (in the dark theme from the start), an
// image-to-image workflow and prompt embeddings work from the app, number fields say what
// they changed, files that are no checkpoints are marked, shortcuts reach the window from
// text fields, progress covers a whole batch and says when it is still estimating, a fresh
// panel draws random seeds, Skip says what it dropped, and reusing a result shows it.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>

#include "appearance.h"
#include "engine_bridge.h"
#include "gallery_panel.h"
#include "image_view.h"
#include "main_window.h"
#include "number_fields.h"
#include "parameter_panel.h"
#include "queue_panel.h"
#include "result_files.h"
#include "settings.h"
#include "workflow_editor.h"

namespace {

QString tinyModel() {
  return QString(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors";
}

// A safetensors file of one F32 tensor `name` of `shape`, filled with small values.
void writeTensorFile(const QString& path, const QByteArray& name, int rows, int cols) {
  QDir().mkpath(QFileInfo(path).path());
  const int bytes = rows * cols * 4;
  const QByteArray header = "{\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[" +
                            QByteArray::number(rows) + "," + QByteArray::number(cols) +
                            "],\"data_offsets\":[0," + QByteArray::number(bytes) + "]}}";
  QByteArray length(8, '\0');
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<char>((static_cast<quint64>(header.size()) >> (8 * i)) & 0xff);
  QByteArray data(bytes, '\0');
  for (int i = 0; i < rows * cols; ++i) {
    const float v = 0.01f * static_cast<float>((i * 7) % 13 - 6);
    std::memcpy(data.data() + 4 * i, &v, 4);
  }
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(length + header + data);
}

std::unique_ptr<kiln::app::Settings> settingsAt(const QString& file) {
  return std::make_unique<kiln::app::Settings>(
      std::make_unique<QSettings>(file, QSettings::IniFormat));
}

// A window over `file` saving into `dir`/out, rendering the conformance model small.
std::unique_ptr<kiln::ui::MainWindow> makeWindow(const QTemporaryDir& dir,
                                                 const QString& file = "kiln.ini") {
  auto settings = settingsAt(dir.filePath(file));
  settings->set("general/output_folder", dir.filePath("out"));
  auto window = std::make_unique<kiln::ui::MainWindow>(std::move(settings));
  window->modelEdit()->setText(tinyModel());
  window->stepsSpin()->setValue(2);
  window->widthSpin()->setValue(64);
  window->heightSpin()->setValue(64);
  return window;
}

// Types `text` into a field and leaves it (Enter), as a person does.
void typeInto(QAbstractSpinBox* field, const QString& text) {
  field->setFocus();
  field->selectAll();
  QTest::keyClicks(field, text);
  QTest::keyClick(field, Qt::Key_Return);
}

}  // namespace

class TestEverydayUse : public QObject {
  Q_OBJECT
  QTemporaryDir cache_;

 private Q_SLOTS:
  void initTestCase() {
    // Stage timings of this test's own, so a first render is a first render.
    qputenv("XDG_CACHE_HOME", cache_.path().toUtf8());
  }

  // Settings, the generate panel's values and the dark theme come back at the next start
  // (a copy of the settings file: QSettings keeps a file it has open parsed for the whole
  // process, and the bug only showed when the file was read afresh).
  void restartKeepsSettingsPanelAndTheme() {
    QTemporaryDir dir;
    {
      auto window = makeWindow(dir);
      kiln::app::Settings& s = window->settings();
      QCOMPARE(s.set("general/model_folders", QStringList{dir.filePath("models")}), QString());
      QCOMPARE(s.set("general/file_name_template", "mine-{seed}"), QString());
      QCOMPARE(s.set("general/first_start", false), QString());
      QCOMPARE(s.set("appearance/theme", "dark"), QString());
      window->promptEdit()->setPlainText("a lighthouse at dusk");
      window->stepsSpin()->setValue(7);
      window->randomSeedCheck()->setChecked(false);
      window->seedSpin()->setValue(4242);
      QVERIFY(window->close());
    }
    QVERIFY(QFile::copy(dir.filePath("kiln.ini"), dir.filePath("restarted.ini")));
    auto again = std::make_unique<kiln::ui::MainWindow>(settingsAt(dir.filePath("restarted.ini")));
    kiln::app::Settings& s = again->settings();
    QCOMPARE(s.modelFolders(), QStringList{dir.filePath("models")});
    QCOMPARE(s.outputFolder(), dir.filePath("out"));
    QCOMPARE(s.value("general/file_name_template").toString(), QString("mine-{seed}"));
    QVERIFY(!s.firstStartDue());
    QCOMPARE(again->promptEdit()->toPlainText(), QString("a lighthouse at dusk"));
    QCOMPARE(again->stepsSpin()->value(), 7);
    QCOMPARE(again->seedSpin()->value(), qint64{4242});
    QVERIFY(!again->randomSeedCheck()->isChecked());
    QCOMPARE(again->modelEdit()->text(), tinyModel());
    // Dark from the start, the picture area included.
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 100);
    QVERIFY2(again->imageView()->backgroundBrush().color().lightness() < 100,
             qPrintable(again->imageView()->backgroundBrush().color().name() + " " +
                        again->imageView()->palette().window().color().name()));
    kiln::ui::setTheme("light");
    QTRY_VERIFY(again->imageView()->backgroundBrush().color().lightness() > 150);  // and back, live
  }

  // LoadImage -> VAEEncode -> Sampler from the app: the app's engine reads pictures; an
  // embedding from a model folder set in Preferences serves the prompt.
  void imageToImageAndEmbeddingsFromTheApp() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    window->randomSeedCheck()->setChecked(false);
    QImage picture(64, 64, QImage::Format_RGB888);
    picture.fill(QColor(200, 40, 30));
    QVERIFY(picture.save(dir.filePath("start.png")));
    const QString workflow = QString(R"({"kiln_workflow": 1, "nodes": [
      {"id": "model", "type": "LoadCheckpoint", "params": {"ckpt_name": "%1"}},
      {"id": "image", "type": "LoadImage", "params": {"image": "%2"}},
      {"id": "encode", "type": "VAEEncode"},
      {"id": "prompt", "type": "TextEncode", "params": {"text": "a red square, embedding:mystyle"}},
      {"id": "negative", "type": "TextEncode", "params": {"text": ""}},
      {"id": "sampler", "type": "Sampler", "params": {"seed": 3, "steps": 4, "cfg": 5, "denoise": 0.5}},
      {"id": "decode", "type": "VAEDecode"},
      {"id": "save", "type": "SaveImage"}],
     "links": [
      {"from": "image", "output": "IMAGE", "to": "encode", "input": "pixels"},
      {"from": "model", "output": "VAE", "to": "encode", "input": "vae"},
      {"from": "model", "output": "CLIP", "to": "prompt", "input": "clip"},
      {"from": "model", "output": "CLIP", "to": "negative", "input": "clip"},
      {"from": "model", "output": "MODEL", "to": "sampler", "input": "model"},
      {"from": "prompt", "output": "CONDITIONING", "to": "sampler", "input": "positive"},
      {"from": "negative", "output": "CONDITIONING", "to": "sampler", "input": "negative"},
      {"from": "encode", "output": "LATENT", "to": "sampler", "input": "latent_image"},
      {"from": "sampler", "output": "LATENT", "to": "decode", "input": "samples"},
      {"from": "model", "output": "VAE", "to": "decode", "input": "vae"},
      {"from": "decode", "output": "IMAGE", "to": "save", "input": "images"}]})")
                                 .arg(tinyModel(), dir.filePath("start.png"));
    QFile file(dir.filePath("img2img.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(workflow.toUtf8());
    file.close();
    QVERIFY2(window->openTemplate(file.fileName()), qPrintable(window->statusText()));
    // Without the embedding's folder the prompt names an embedding that is not there.
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!window->bridge()->busy(), 120000);
    QVERIFY2(window->statusText().startsWith("Failed") && window->statusText().contains("mystyle"),
             qPrintable(window->statusText()));
    // The model folder from Preferences, with embeddings/mystyle.safetensors (CLIP width 32).
    writeTensorFile(dir.filePath("models/embeddings/mystyle.safetensors"), "emb_params", 2, 32);
    QCOMPARE(window->settings().set("general/model_folders", QStringList{dir.filePath("models")}),
             QString());
    window->applySettings();
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!window->bridge()->busy(), 120000);
    QVERIFY2(window->statusText() == "Done", qPrintable(window->statusText()));
    QVERIFY(window->hasResult());
    QCOMPARE(window->imageView()->image().size(), QSize(64, 64));
  }

  // Typed values are kept, or changed with a word about it: a 64-bit seed, 1e3 in CFG
  // (above its most, 100), 5000 steps (above 1000), a width off the 8-pixel grid.
  void numberFieldsSayWhatTheyChange() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    window->show();
    window->randomSeedCheck()->setChecked(false);
    QLabel* notice = window->parameterPanel()->notice();
    typeInto(window->seedSpin(), "3456789012");
    QCOMPARE(window->seedSpin()->value(), qint64{3456789012});
    QVERIFY(notice->isHidden());
    typeInto(window->seedSpin(), "99999999999999999999");
    QCOMPARE(window->seedSpin()->value(), qint64{9223372036854775807});
    QVERIFY2(notice->text().contains("is above the most"), qPrintable(notice->text()));
    typeInto(window->cfgSpin(), "1e3");
    QCOMPARE(window->cfgSpin()->value(), 100.0);
    QVERIFY2(notice->text().startsWith("CFG scale: 1e3 is above the most, 100"),
             qPrintable(notice->text()));
    typeInto(window->cfgSpin(), "2.5e0");
    QCOMPARE(window->cfgSpin()->value(), 2.5);
    typeInto(window->stepsSpin(), "5000");
    QCOMPARE(window->stepsSpin()->value(), 1000);
    QVERIFY2(notice->text().startsWith("Steps: 5000 is above the most, 1000: set to 1000"),
             qPrintable(notice->text()));
    typeInto(window->widthSpin(), "70");
    QCOMPARE(window->widthSpin()->value(), 64);
    QVERIFY2(notice->text().startsWith("Width: 70 is not a multiple of 8: set to 64"),
             qPrintable(notice->text()));
    QVERIFY(notice->isVisible());
    // The workflow carries the full seed.
    const kiln::Workflow w = window->parameterPanel()->workflow();
    QCOMPARE(std::get<int64_t>(w.node("sampler")->params.at("seed")), int64_t{9223372036854775807});
  }

  // A text file renamed .safetensors is listed as not a checkpoint, with the reason, and
  // cannot be picked.
  void modelPickerMarksFilesThatAreNoCheckpoints() {
    QTemporaryDir dir;
    QFile notes(dir.filePath("models/checkpoints/notes.safetensors"));
    QDir().mkpath(dir.filePath("models/checkpoints"));
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("prompts I like\n");
    notes.close();
    QVERIFY(QFile::copy(tinyModel(), dir.filePath("models/checkpoints/tiny.safetensors")));
    auto window = makeWindow(dir);
    QCOMPARE(window->settings().set("general/model_folders", QStringList{dir.filePath("models")}),
             QString());
    window->refreshModels();
    QComboBox* picker = window->modelPicker();
    const auto* items = qobject_cast<QStandardItemModel*>(picker->model());
    QVERIFY(items);
    int bad = -1, good = -1;
    for (int i = 0; i < picker->count(); ++i) {
      if (picker->itemText(i).startsWith("notes")) bad = i;
      if (picker->itemText(i) == "tiny") good = i;
    }
    QVERIFY(bad >= 0 && good >= 0);
    QCOMPARE(picker->itemText(bad), QString("notes (not a checkpoint)"));
    QVERIFY(!items->item(bad)->isEnabled());
    QVERIFY(picker->itemData(bad, Qt::ToolTipRole).toString().contains("not a safetensors file"));
    QVERIFY(items->item(good)->isEnabled());
  }

  // Ctrl+E and Ctrl+, reach the window while a text field has the keyboard.
  void shortcutsWorkFromTextFields() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    window->show();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    bool preferences_shown = false;
    QAction* preferences = nullptr;
    for (QAction* a : window->findChildren<QAction*>())
      if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_Comma)) preferences = a;
    QVERIFY2(preferences, "Preferences has no Ctrl+, shortcut");
    QVERIFY(preferences->text().contains("Preferences"));
    // Seen, not opened: a modal dialog would wait for a person.
    preferences->disconnect();
    connect(preferences, &QAction::triggered, this, [&] { preferences_shown = true; });
    window->modelEdit()->setFocus();
    QTest::keyClick(window->modelEdit(), Qt::Key_Comma, Qt::ControlModifier);
    QVERIFY(preferences_shown);
    window->promptEdit()->setFocus();
    QTest::keyClick(window->promptEdit(), Qt::Key_E, Qt::ControlModifier);
    QVERIFY(window->findChild<kiln::ui::WorkflowEditor*>());
    QTRY_VERIFY(window->findChild<kiln::ui::WorkflowEditor*>()->isVisible());
  }

  // A fresh panel draws a new seed at every Generate; a batch's progress covers the whole
  // batch and names the image; a first render says it is estimating the time left; Skip
  // says how many images it dropped.
  void batchesSeedsAndSkip() {
    QTemporaryDir dir, cache;
    qputenv("XDG_CACHE_HOME", cache.path().toUtf8());  // no stage timed on this machine yet
    auto window = makeWindow(dir);
    QVERIFY(window->randomSeedCheck()->isChecked());  // the default template
    QStringList lines;
    QList<double> fractions;
    connect(window->bridge(), &kiln::app::EngineBridge::progress, this,
            [&](const QString&, qint64, qint64, const QString&, double fraction, double, int, int) {
              lines << window->statusText();
              fractions << fraction;
            });
    window->stepsSpin()->setValue(200);
    window->batchSpin()->setValue(3);
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    const qint64 first_seed = window->seedSpin()->value();
    QTRY_VERIFY_WITH_TIMEOUT(
        !lines.isEmpty() && lines.last().startsWith("Image 1 of 3 · Denoising"), 60000);
    QVERIFY2(lines.last().contains("estimating the time left"),
             qPrintable(lines.last()));  // never timed here
    QVERIFY(fractions.last() <= 1.0 / 3.0 + 1e-9);
    // The queue's entry wraps in a narrow dock and carries its whole text.
    QListWidget* queue = window->queuePanel()->list();
    QVERIFY(queue->wordWrap() && queue->count() == 1);
    QCOMPARE(queue->item(0)->toolTip(), queue->item(0)->text());
    QTest::mouseClick(window->skipButton(), Qt::LeftButton);
    QCOMPARE(window->statusText(),
             QString("Skipped: this image finishes, 2 later image(s) dropped"));
    QTRY_VERIFY_WITH_TIMEOUT(!window->bridge()->busy(), 120000);
    QCOMPARE(QDir(dir.filePath("out")).entryList({"*.png"}).size(), 1);
    // Another Generate: another seed; every stage timed now, so a time left is given, and
    // the whole batch's fraction never runs backwards.
    lines.clear();
    fractions.clear();
    window->stepsSpin()->setValue(20);
    window->batchSpin()->setValue(2);
    QTest::mouseClick(window->generateButton(), Qt::LeftButton);
    QVERIFY(window->seedSpin()->value() != first_seed);
    QTRY_VERIFY_WITH_TIMEOUT(!window->bridge()->busy(), 120000);
    QVERIFY(std::any_of(lines.begin(), lines.end(),
                        [](const QString& l) { return l.startsWith("Image 2 of 2 · "); }));
    QVERIFY(std::none_of(lines.begin(), lines.end(),
                         [](const QString& l) { return l.contains("estimating"); }));
    for (int i = 1; i < fractions.size(); ++i) QVERIFY(fractions[i] >= fractions[i - 1] - 1e-9);
  }

  // View > Smooth Scaling is a choice kept in the settings; enlarged pictures are blocks
  // without it.
  void smoothScalingIsAViewChoice() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    auto* smooth = window->findChild<QAction*>("smoothScaling");
    QVERIFY(smooth && smooth->isCheckable() && !smooth->isChecked());
    QVERIFY(!window->imageView()->smoothScaling());
    smooth->trigger();
    QVERIFY(window->imageView()->smoothScaling());
    QVERIFY(window->settings().value("appearance/smooth_scaling").toBool());
  }

  // Reusing a result shows the picture it came from; Default Workflow says so.
  void reuseShowsThePictureAndDefaultResetsTheStatus() {
    QTemporaryDir dir;
    auto window = makeWindow(dir);
    QImage picture(40, 30, QImage::Format_RGB888);
    picture.fill(Qt::blue);
    QVERIFY(picture.save(dir.filePath("elsewhere.png")));
    kiln::app::ResultFile r;
    r.path = dir.filePath("elsewhere.png");
    r.parameters =
        "a blue field\nNegative prompt: \nSteps: 9, Sampler: Euler, CFG scale: 4, Seed: 11, Size: "
        "64x64, Model: x";
    QVERIFY(window->reuseResult(r));
    QCOMPARE(window->imageView()->image().size(), QSize(40, 30));
    QCOMPARE(kiln::ui::GalleryPanel::caption(r), QString("a blue field\nseed 11"));
    QAction* reset = nullptr;
    for (QAction* a : window->findChildren<QAction*>())
      if (a->text() == "&Default Workflow") reset = a;
    QVERIFY(reset);
    reset->trigger();
    QCOMPARE(window->statusText(), QString("Default workflow"));
    QVERIFY(window->randomSeedCheck()->isChecked());
  }
};

QTEST_MAIN(TestEverydayUse)
#include "test_everyday_use.moc"
