#include "loss_plot.h"

#include <QImage>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace kiln::starter {
namespace {

std::vector<double> movingAverage(const std::vector<double>& v, std::size_t window) {
  std::vector<double> out(v.size());
  double sum = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    sum += v[i];
    if (i >= window) sum -= v[i - window];
    out[i] = sum / static_cast<double>(std::min(i + 1, window));
  }
  return out;
}

void drawPanel(QPainter& p, const QRectF& frame, const LossCurve& curve) {
  const QRectF plot = frame.adjusted(70, 36, -20, -44);
  p.setPen(QPen(Qt::black, 1));
  p.drawRect(plot);
  QFont f = p.font();
  f.setPixelSize(15);
  f.setBold(true);
  p.setFont(f);
  p.drawText(QRectF(frame.left(), frame.top() + 6, frame.width(), 24), Qt::AlignCenter,
             QString::fromStdString(curve.title));
  f.setBold(false);
  f.setPixelSize(12);
  p.setFont(f);
  if (curve.loss.empty()) return;
  double lo = 1e300, hi = -1e300;
  for (double v : curve.loss)
    if (v > 0 && std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!(hi > lo)) hi = lo * 10;
  const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi));
  const auto n = static_cast<double>(curve.loss.size());
  auto at = [&](double i, double v) {
    const double x = plot.left() + plot.width() * i / std::max(1.0, n - 1);
    const double lv = std::log10(std::max(v, lo));
    const double y = plot.bottom() - plot.height() * (lv - l0) / std::max(1e-9, l1 - l0);
    return QPointF(x, y);
  };
  // Decade grid and labels.
  for (double d = l0; d <= l1; d += 1) {
    const double y = plot.bottom() - plot.height() * (d - l0) / std::max(1e-9, l1 - l0);
    p.setPen(QPen(QColor(220, 220, 220), 1));
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.setPen(Qt::black);
    p.drawText(QRectF(frame.left(), y - 8, 64, 16), Qt::AlignRight | Qt::AlignVCenter,
               QString("1e%1").arg(static_cast<int>(d)));
  }
  for (int k = 0; k <= 4; ++k) {
    const double x = plot.left() + plot.width() * k / 4.0;
    p.drawText(QRectF(x - 40, plot.bottom() + 4, 80, 16), Qt::AlignCenter,
               QString::number(static_cast<long long>(std::llround((n - 1) * k / 4.0))));
  }
  p.drawText(QRectF(plot.left(), plot.bottom() + 22, plot.width(), 16), Qt::AlignCenter, "step");
  QPainterPath raw, smooth;
  const auto avg = movingAverage(curve.loss, std::max<std::size_t>(1, curve.loss.size() / 50));
  for (std::size_t i = 0; i < curve.loss.size(); ++i) {
    const QPointF a = at(static_cast<double>(i), curve.loss[i]);
    const QPointF b = at(static_cast<double>(i), avg[i]);
    if (i == 0) {
      raw.moveTo(a);
      smooth.moveTo(b);
    } else {
      raw.lineTo(a);
      smooth.lineTo(b);
    }
  }
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(QColor(120, 160, 230), 1));
  p.drawPath(raw);
  p.setPen(QPen(QColor(20, 50, 160), 2));
  p.drawPath(smooth);
}

}  // namespace

bool writeLossPlot(const std::string& path, const std::vector<LossCurve>& curves) {
  const int panel_w = 560, panel_h = 360;
  QImage img(panel_w * std::max<int>(1, static_cast<int>(curves.size())), panel_h,
             QImage::Format_RGB32);
  img.fill(Qt::white);
  QPainter p(&img);
  for (std::size_t i = 0; i < curves.size(); ++i)
    drawPanel(p, QRectF(static_cast<double>(i) * panel_w, 0, panel_w, panel_h), curves[i]);
  p.end();
  return img.save(QString::fromStdString(path), "PNG");
}

}  // namespace kiln::starter
