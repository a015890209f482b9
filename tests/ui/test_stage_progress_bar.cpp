// The stage-aware progress bar under the offscreen platform: segments sized by expected
// time, filled stage by stage from progress, renamed by stage updates, drawn as such.
#include <QtTest>

#include "stage_progress_bar.h"

namespace {

QList<kiln::app::PlannedStage> plan() {
  return {{"Loading model", "bytes", 2'000'000'000, 1.0},
          {"Encoding prompt", "encoders", 1, 1.0},
          {"Denoising", "steps", 8, 8.0},
          {"Decoding", "tile passes", 1, 2.0}};
}

}  // namespace

class TestStageProgressBar : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void segmentsFollowExpectedTime() {
    kiln::ui::StageProgressBar bar;
    bar.resize(406, 20);
    bar.setPlan(plan());
    QCOMPARE(bar.stageCount(), 4);
    const QVector<QRectF> r = bar.segmentRects();
    QCOMPARE(r.size(), 4);
    QCOMPARE(r.last().right(), 406.0);
    QCOMPARE(r[0].left(), 0.0);
    QVERIFY(qAbs(r[2].width() / r[0].width() - 8.0) < 0.01);  // 8 s against 1 s
    QVERIFY(qAbs(r[3].width() / r[0].width() - 2.0) < 0.01);
    for (int i = 1; i < 4; ++i) QCOMPARE(r[i].left(), r[i - 1].right() + 2.0);  // 2-px gaps

    // A stage with no expected time still shows.
    auto p = plan();
    p[1].expected_seconds = 0;
    bar.setPlan(p);
    QVERIFY(bar.segmentRects()[1].width() >= 5.0);
  }

  void fillsStageByStageAndDraws() {
    kiln::ui::StageProgressBar bar;
    bar.resize(406, 20);
    bar.setPlan(plan());
    QCOMPARE(bar.label(), QString());
    bar.setStageProgress(2, 3, 8);
    QCOMPARE(bar.currentStage(), 2);
    QCOMPARE(bar.stageFraction(0), 1.0);
    QCOMPARE(bar.stageFraction(1), 1.0);
    QCOMPARE(bar.stageFraction(2), 0.375);
    QCOMPARE(bar.stageFraction(3), 0.0);
    QCOMPARE(bar.label(), QString("Denoising 3/8 steps"));
    // Loading counts the bytes read, shown in the unit of the file's size.
    kiln::ui::StageProgressBar loading;
    loading.setPlan(plan());
    loading.setStageProgress(0, 1'200'000'000, 2'000'000'000);
    QCOMPARE(loading.label(), QString("Loading model 1.2/2.0 GB"));
    auto small = plan();
    small[0].total = 820'000'000;
    loading.setPlan(small);
    loading.setStageProgress(0, 310'000'000, 820'000'000);
    QCOMPARE(loading.label(), QString("Loading model 310/820 MB"));

    QImage shot(bar.size(), QImage::Format_RGB32);
    bar.render(&shot);
    const QVector<QRectF> r = bar.segmentRects();
    const QRgb empty = bar.palette().color(QPalette::Mid).rgb();
    const auto at = [&](const QRectF& seg, double share) {
      return shot.pixel(static_cast<int>(seg.left() + seg.width() * share), 10);
    };
    QVERIFY(at(r[0], 0.5) != empty);
    QVERIFY(at(r[1], 0.5) != empty);
    QVERIFY(at(r[2], 0.2) != empty);  // 37.5% of the denoising is done
    QCOMPARE(at(r[2], 0.8), empty);
    QCOMPARE(at(r[3], 0.5), empty);

    // The decode turned tiled: its new name and size show while it runs.
    bar.updateStage(3, "Decoding (in tiles after running out of memory)", 16);
    bar.setStageProgress(3, 4, 16);
    QCOMPARE(bar.label(),
             QString("Decoding (in tiles after running out of memory) 4/16 tile passes"));
    QCOMPARE(bar.stageFraction(2), 1.0);
    bar.finish();
    for (int i = 0; i < 4; ++i) QCOMPARE(bar.stageFraction(i), 1.0);
    bar.clear();
    QCOMPARE(bar.stageCount(), 0);
    bar.setStageProgress(0, 1, 1);  // no plan: ignored
    QCOMPARE(bar.currentStage(), -1);
  }
};

QTEST_MAIN(TestStageProgressBar)
#include "test_stage_progress_bar.moc"
