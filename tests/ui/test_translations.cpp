// The German and Japanese translations compile, are current with the sources and cover
// every string, and turn the main window's, the preferences' and the engine's texts into
// those languages; Qt's own buttons follow; switching back to English works.
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLibraryInfo>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest>

#include "appearance.h"
#include "engine_texts.h"
#include "main_window.h"
#include "node_texts.h"
#include "preferences_dialog.h"
#include "settings.h"

#include <QPlainTextEdit>

class TestTranslations : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void translateTheWindow_data() {
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("generate");
    QTest::addColumn<QString>("memory");
    QTest::addColumn<QString>("unet_tip");
    QTest::addColumn<QString>("reserve");
    QTest::addColumn<QString>("load_checkpoint");
    QTest::newRow("de") << "de"
                        << "Generieren"
                        << "Speicher"
                        << "Auslagerungsmodus des UNet"
                        << "Arbeitsspeicher-Reserve"
                        << "Checkpoint laden";
    QTest::newRow("ja") << "ja"
                        << "生成"
                        << "メモリ"
                        << "UNet のオフロード方式"
                        << "作業用メモリの予約"
                        << "チェックポイントを読み込む";
  }
  void translateTheWindow() {
    QFETCH(QString, language);
    QFETCH(QString, generate);
    QFETCH(QString, memory);
    QFETCH(QString, unet_tip);
    QFETCH(QString, reserve);
    QFETCH(QString, load_checkpoint);
    QTranslator translator;
    QVERIFY(translator.load(QString(KILN_QM_DIR) + "/kiln_" + language + ".qm"));
    QVERIFY(!translator.isEmpty());
    QCoreApplication::installTranslator(&translator);
    {
      QTemporaryDir dir;
      kiln::ui::MainWindow window(std::make_unique<kiln::app::Settings>(
          std::make_unique<QSettings>(dir.filePath("w.ini"), QSettings::IniFormat)));
      QCOMPARE(window.generateButton()->text(), generate);
      kiln::app::Settings settings(
          std::make_unique<QSettings>(dir.filePath("k.ini"), QSettings::IniFormat));
      kiln::ui::PreferencesDialog dialog(settings, nullptr);
      QCOMPARE(dialog.pages()->tabText(1), memory);
      // Setting titles and descriptions too, even though the settings were described
      // before this language was installed.
      QVERIFY(!kiln::app::settingSpecs().isEmpty());
      auto* unet = dialog.editorFor("memory/offload_unet");
      QCOMPARE(unet->toolTip(), unet_tip);
      QString unet_label;
      for (const QLabel* l : dialog.findChildren<QLabel*>())
        if (l->buddy() == unet) unet_label = l->text();
      QCOMPARE(unet_label, QString("UNet"));
      QCOMPARE(kiln::app::settingTitle("memory/working_reserve"), reserve);
      // The node schemas' texts (engine strings) too.
      QCOMPARE(kiln::app::nodeText("Load checkpoint"), load_checkpoint);
    }
    QCoreApplication::removeTranslator(&translator);
  }

  // lupdate over the sources, into copies of the .ts files, finds no text the files lack,
  // and no text in them is unfinished.
  void translationFilesAreCurrentAndComplete_data() {
    QTest::addColumn<QString>("language");
    QTest::newRow("de") << "de";
    QTest::newRow("ja") << "ja";
  }
  void translationFilesAreCurrentAndComplete() {
    QFETCH(QString, language);
    QTemporaryDir dir;
    const QString ts = dir.filePath("kiln_" + language + ".ts");
    QVERIFY(QFile::copy(QString(KILN_SOURCE_DIR) + "/translations/kiln_" + language + ".ts", ts));
    QFile::setPermissions(ts, QFile::ReadOwner | QFile::WriteOwner);
    QProcess lupdate;
    lupdate.start(KILN_LUPDATE, QString(KILN_TRANSLATED_SOURCES).split(';', Qt::SkipEmptyParts) +
                                    QStringList{"-no-obsolete", "-ts", ts});
    QVERIFY(lupdate.waitForFinished(120000));
    const QString out =
        QString::fromUtf8(lupdate.readAllStandardOutput() + lupdate.readAllStandardError());
    QVERIFY2(lupdate.exitCode() == 0, qPrintable(out));
    const QRegularExpressionMatch found =
        QRegularExpression("Found (\\d+) source text\\(s\\) \\((\\d+) new").match(out);
    QVERIFY2(found.hasMatch(), qPrintable(out));
    QVERIFY(found.captured(1).toInt() > 400);
    QVERIFY2(
        found.captured(2).toInt() == 0,
        qPrintable("texts missing from the translations (run ninja update_translations): " + out));
    QFile file(ts);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY2(!text.contains("type=\"unfinished\""), "unfinished translations");
    QVERIFY(!text.contains("<translation></translation>"));
  }

  // Qt's own texts (the dialog buttons) follow the language, from Qt's translations.
  void qtButtonsFollowTheLanguage() {
    if (!QFile::exists(QLibraryInfo::path(QLibraryInfo::TranslationsPath) + "/qtbase_de.qm"))
      QSKIP("Qt's translations (qt6-translations-l10n) are not installed");
    QVERIFY(kiln::ui::setLanguage("de", KILN_QM_DIR));
    QTemporaryDir dir;
    kiln::app::Settings settings(
        std::make_unique<QSettings>(dir.filePath("k.ini"), QSettings::IniFormat));
    kiln::ui::PreferencesDialog dialog(settings, nullptr);
    auto* buttons = dialog.findChild<QDialogButtonBox*>();
    QCOMPARE(buttons->button(QDialogButtonBox::Cancel)->text(), QString("Abbrechen"));
    QCOMPARE(buttons->button(QDialogButtonBox::Apply)->text(), QString("Anwenden"));
    QVERIFY(kiln::ui::setLanguage("en", KILN_QM_DIR));
    QTRY_COMPARE(buttons->button(QDialogButtonBox::Cancel)->text(), QString("Cancel"));
  }

  // Started in German, the texts the engine sends (stage names, units, placements) and
  // Qt's own buttons are German too, the language list names each language in its own
  // words, and choosing English in Preferences brings English back without a restart.
  void germanThroughoutAndBackToEnglish() {
    QVERIFY(kiln::ui::setLanguage("de", KILN_QM_DIR));  // as Kiln does at start
    QCOMPARE(kiln::ui::stageText("Denoising image 2 of 3"), QString("Entrauschen Bild 2 von 3"));
    QCOMPARE(kiln::ui::stageText("Encoding prompt (Prompt)"),
             QString("Prompt wird kodiert (Prompt)"));
    QCOMPARE(kiln::ui::progressAmountText(12, 30, "steps"), QString("12/30 Schritte"));
    QCOMPARE(kiln::ui::placementText("group-block, 1 block per group, no streams, pinned"),
             QString("group-block, 1 Block/Blöcke je Gruppe, keine Streams, gepinnt"));
    QTemporaryDir dir;
    auto settings = std::make_unique<kiln::app::Settings>(
        std::make_unique<QSettings>(dir.filePath("k.ini"), QSettings::IniFormat));
    kiln::app::Settings& stored = *settings;
    kiln::ui::MainWindow window(std::move(settings));
    QCOMPARE(window.generateButton()->text(), QString("Generieren"));
    QPushButton* browse = window.findChild<QPushButton*>("browse");
    QVERIFY(browse);
    QCOMPARE(browse->text(), QString("Durchsuchen…"));
    {
      kiln::ui::PreferencesDialog dialog(stored, nullptr);
      auto* language = qobject_cast<QComboBox*>(dialog.editorFor("appearance/language"));
      QStringList names;
      for (int i = 0; i < language->count(); ++i) names << language->itemText(i);
      QCOMPARE(names, (QStringList{"Sprache des Systems", "English", "Deutsch", "日本語"}));
    }
    QCOMPARE(stored.set("appearance/language", "en"), QString());
    window.applySettings();
    QTRY_COMPARE(window.generateButton()->text(), QString("Generate"));
    QCOMPARE(browse->text(), QString("Browse…"));
    // "system" on a system language without a translation is English, and nothing to log.
    QCOMPARE(stored.set("appearance/language", "system"), QString());
    window.applySettings();
    QVERIFY(!window.logView()->toPlainText().contains("No translation"));
  }
};

QTEST_MAIN(TestTranslations)
#include "test_translations.moc"
