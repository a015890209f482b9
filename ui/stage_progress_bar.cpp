#include "stage_progress_bar.h"

#include <QPainter>

#include <algorithm>

#include "kiln/units.h"

namespace kiln::ui {
namespace {

constexpr double kGap = 2.0;        // pixels between segments
constexpr double kMinShare = 0.03;  // the smallest segment's share, so short stages show

}  // namespace

StageProgressBar::StageProgressBar(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setAccessibleName(tr("Progress"));
}

void StageProgressBar::setPlan(const QList<app::PlannedStage>& stages) {
  stages_.clear();
  for (const app::PlannedStage& s : stages) stages_.push_back({s, 0.0});
  current_ = -1;
  update();
}

void StageProgressBar::updateStage(int index, const QString& name, qint64 total) {
  if (index < 0 || index >= stages_.size()) return;
  stages_[index].stage.name = name;
  stages_[index].stage.total = total;
  update();
}

void StageProgressBar::setStageProgress(int index, qint64 done, qint64 total) {
  if (index < 0 || index >= stages_.size()) return;
  for (int i = 0; i < index; ++i) stages_[i].done = 1.0;
  current_ = index;
  stages_[index].stage.total = total > 0 ? total : stages_[index].stage.total;
  stages_[index].done =
      total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0)
                : 0.0;
  setToolTip(label());
  update();
}

void StageProgressBar::finish() {
  for (Segment& s : stages_) s.done = 1.0;
  current_ = -1;
  update();
}

void StageProgressBar::clear() {
  stages_.clear();
  current_ = -1;
  update();
}

double StageProgressBar::stageFraction(int index) const {
  return index >= 0 && index < stages_.size() ? stages_[index].done : 0.0;
}

QVector<QRectF> StageProgressBar::segmentRects() const {
  QVector<QRectF> rects;
  if (stages_.isEmpty()) return rects;
  double total = 0;
  for (const Segment& s : stages_) total += std::max(s.stage.expected_seconds, 0.0);
  // Shares by expected time, each at least kMinShare, normalised to the whole.
  QVector<double> shares;
  double sum = 0;
  for (const Segment& s : stages_) {
    const double share =
        total > 0 ? std::max(s.stage.expected_seconds, 0.0) / total : 1.0 / stages_.size();
    shares.push_back(std::max(share, kMinShare));
    sum += shares.back();
  }
  const double usable = std::max(0.0, width() - kGap * (stages_.size() - 1));
  double x = 0;
  for (double share : shares) {
    const double w = usable * share / sum;
    rects.push_back(QRectF(x, 0, w, height()));
    x += w + kGap;
  }
  return rects;
}

QString StageProgressBar::label() const {
  if (current_ < 0 || current_ >= stages_.size()) return {};
  const Segment& s = stages_[current_];
  if (s.stage.total <= 1) return s.stage.name;
  const auto done = static_cast<qint64>(std::llround(s.done * static_cast<double>(s.stage.total)));
  return tr("%1 %2").arg(s.stage.name, QString::fromStdString(kiln::formatProgressAmount(
                                           done, s.stage.total, s.stage.unit.toStdString())));
}

void StageProgressBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, false);
  const QColor empty = palette().color(QPalette::Mid);
  const QColor filled = palette().color(QPalette::Highlight);
  const QColor current = filled.lighter(115);
  if (stages_.isEmpty()) {
    p.fillRect(rect(), empty);
    return;
  }
  const QVector<QRectF> rects = segmentRects();
  for (int i = 0; i < rects.size(); ++i) {
    const QRectF& r = rects[i];
    p.fillRect(r, empty);
    const double done = stages_[i].done;
    if (done > 0)
      p.fillRect(QRectF(r.left(), r.top(), r.width() * done, r.height()),
                 i == current_ ? current : filled);
  }
}

}  // namespace kiln::ui
