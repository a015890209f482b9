// The German and Japanese translations compile, cover every string, and turn the main
// window's and the preferences' texts into those languages.
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest>

#include "main_window.h"
#include "preferences_dialog.h"
#include "settings.h"

class TestTranslations : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void translateTheWindow_data() {
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("generate");
    QTest::addColumn<QString>("memory");
    QTest::newRow("de") << "de" << "Generieren" << "Speicher";
    QTest::newRow("ja") << "ja" << "生成" << "メモリ";
  }
  void translateTheWindow() {
    QFETCH(QString, language);
    QFETCH(QString, generate);
    QFETCH(QString, memory);
    QTranslator translator;
    QVERIFY(translator.load(QString(KILN_QM_DIR) + "/kiln_" + language + ".qm"));
    QVERIFY(!translator.isEmpty());
    QCoreApplication::installTranslator(&translator);
    {
      kiln::ui::MainWindow window;
      QCOMPARE(window.generateButton()->text(), generate);
      QTemporaryDir dir;
      kiln::app::Settings settings(std::make_unique<QSettings>(dir.filePath("k.ini"), QSettings::IniFormat));
      kiln::ui::PreferencesDialog dialog(settings, nullptr);
      QCOMPARE(dialog.pages()->tabText(1), memory);
    }
    QCoreApplication::removeTranslator(&translator);
  }
};

QTEST_MAIN(TestTranslations)
#include "test_translations.moc"
