// The German and Japanese translations compile, cover every string, and turn the main
// window's and the preferences' texts into those languages.
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest>

#include "main_window.h"
#include "node_texts.h"
#include "preferences_dialog.h"
#include "settings.h"

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
    QTest::newRow("de") << "de" << "Generieren" << "Speicher" << "Auslagerungsmodus des UNet" << "Arbeitsspeicher-Reserve"
                        << "Checkpoint laden";
    QTest::newRow("ja") << "ja" << "生成" << "メモリ" << "UNet のオフロード方式" << "作業用メモリの予約"
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
      kiln::ui::MainWindow window(
          std::make_unique<kiln::app::Settings>(std::make_unique<QSettings>(dir.filePath("w.ini"), QSettings::IniFormat)));
      QCOMPARE(window.generateButton()->text(), generate);
      kiln::app::Settings settings(std::make_unique<QSettings>(dir.filePath("k.ini"), QSettings::IniFormat));
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
};

QTEST_MAIN(TestTranslations)
#include "test_translations.moc"
