// The stage-aware progress bar: one segment per planned stage of the job, each as wide as
// its expected share of the time, filled as the stage reports its own units.
#pragma once

#include <QList>
#include <QRectF>
#include <QString>
#include <QVector>
#include <QWidget>

#include "engine_bridge.h"

namespace kiln::ui {

class StageProgressBar : public QWidget {
  Q_OBJECT

 public:
  explicit StageProgressBar(QWidget* parent = nullptr);

  // A new job's plan: every segment empty.
  void setPlan(const QList<app::PlannedStage>& stages);
  // A stage's new name and size (a decode that turned tiled).
  void updateStage(int index, const QString& name, qint64 total);
  // Stage `index` has done `done` of `total` units; the stages before it are complete.
  void setStageProgress(int index, qint64 done, qint64 total);
  void finish();  // every segment full
  void clear();   // no plan

  int stageCount() const { return static_cast<int>(stages_.size()); }
  int currentStage() const { return current_; }
  double stageFraction(int index) const;  // 0 to 1
  // The segments' rectangles in widget coordinates, in plan order.
  QVector<QRectF> segmentRects() const;
  // "Denoising 12/30 steps", or "" when idle.
  QString label() const;

  QSize sizeHint() const override { return {400, 22}; }
  QSize minimumSizeHint() const override { return {120, 16}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  struct Segment {
    app::PlannedStage stage;
    double done = 0;  // fraction of the stage
  };
  QVector<Segment> stages_;
  int current_ = -1;
};

}  // namespace kiln::ui
