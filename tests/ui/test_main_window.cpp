// The main window under the offscreen platform: fill the generate panel, press Generate,
// and wait for a real render of the conformance model; keep a screenshot as an artifact.
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QtTest>

#include "main_window.h"
#include "stage_progress_bar.h"

class TestMainWindow : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void generatesAnImage() {
    kiln::ui::MainWindow window;
    window.show();
    window.modelEdit()->setText(QString(KILN_CONFORMANCE_DIR) +
                                "/sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
    window.promptEdit()->setPlainText("a red circle");
    window.stepsSpin()->setValue(3);
    window.widthSpin()->setValue(96);
    window.heightSpin()->setValue(64);
    QTest::mouseClick(window.generateButton(), Qt::LeftButton);
    QVERIFY(!window.generateButton()->isEnabled());  // one render at a time
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResult(), 120000);
    QCOMPARE(window.statusText(), QString("Done"));
    // The bar drew the job's planned stages and ended full.
    QCOMPARE(window.progressBar()->stageCount(), 4);
    for (int i = 0; i < 4; ++i) QCOMPARE(window.progressBar()->stageFraction(i), 1.0);
    QVERIFY(window.generateButton()->isEnabled());
    const auto labels = window.findChildren<QLabel*>();
    bool found = false;
    for (const QLabel* l : labels) {
      if (!l->pixmap().isNull()) {
        QCOMPARE(l->pixmap().size(), QSize(96, 64));
        found = true;
      }
    }
    QVERIFY(found);
    const QString shot = QString(KILN_TEST_ARTIFACTS) + "/main_window.png";
    QDir().mkpath(KILN_TEST_ARTIFACTS);
    QVERIFY(window.grab().save(shot));
  }

  // Stop interrupts a long render at once and leaves the window ready for the next one.
  void stopInterruptsTheRender() {
    kiln::ui::MainWindow window;
    window.show();
    window.stepsSpin()->setValue(1000);
    QVERIFY(!window.stopButton()->isEnabled());
    QTest::mouseClick(window.generateButton(), Qt::LeftButton);
    QVERIFY(window.stopButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(window.statusText().startsWith("Denoising") && window.statusText().contains("/1000 steps"), 60000);
    QElapsedTimer latency;
    latency.start();
    QTest::mouseClick(window.stopButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(window.statusText(), QString("Stopped"), 5000);
    QVERIFY2(latency.elapsed() < 2000, qPrintable(QString::number(latency.elapsed())));
    QVERIFY(window.generateButton()->isEnabled());
    QVERIFY(!window.stopButton()->isEnabled());
    QVERIFY(!window.hasResult());
  }

  void reportsFailureWithoutModel() {
    kiln::ui::MainWindow window;
    window.modelEdit()->setText("/nonexistent/model.safetensors");
    QTest::mouseClick(window.generateButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window.statusText().startsWith("Failed:"), 30000);
    QVERIFY2(window.statusText().contains("does not exist"), qPrintable(window.statusText()));
    QVERIFY(window.generateButton()->isEnabled());
    QVERIFY(!window.hasResult());
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
