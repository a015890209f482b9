#include "memory_map.h"

#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

#include "engine_texts.h"
#include "kiln/units.h"

namespace kiln::ui {
namespace {

QString bytes(qint64 n) {
  return QString::fromStdString(kiln::formatBytes(std::max<qint64>(n, 0)));
}

const QColor kResident(0x3b, 0x7d, 0xd8);
const QColor kStreamed(0xf2, 0xa3, 0x3a);
const QColor kWorking(0x7c, 0xb3, 0x42);
const QColor kReserve(0x9e, 0x9e, 0x9e);
const QColor kPinned(0x8e, 0x5b, 0xd6);
const QColor kProblem(0xb0, 0x00, 0x20);

}  // namespace

// ------------------------------------------------------------------------- bar

MemoryBar::MemoryBar(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QSize MemoryBar::sizeHint() const {
  return {320, fontMetrics().height() + 6};
}

void MemoryBar::setParts(QList<Part> parts, qint64 total) {
  parts_ = std::move(parts);
  total_ = total;
  QStringList tip;
  qint64 sum = 0;
  for (const Part& p : parts_) {
    tip << QStringLiteral("%1: %2").arg(p.name, bytes(p.bytes));
    sum += p.bytes;
  }
  tip << tr("Left: %1 of %2").arg(sum > total_ ? tr("none") : bytes(total_ - sum), bytes(total_));
  setToolTip(tip.join('\n'));
  update();
}

void MemoryBar::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QRectF frame = QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5);
  painter.fillRect(frame, palette().base());
  qint64 sum = 0;
  for (const Part& p : parts_) sum += std::max<qint64>(p.bytes, 0);
  // The scale fits whichever is larger: the whole or the parts (then the whole's end is
  // marked inside the bar).
  const double scale = frame.width() / static_cast<double>(std::max<qint64>({total_, sum, 1}));
  double x = frame.left();
  for (const Part& p : parts_) {
    const double w = static_cast<double>(std::max<qint64>(p.bytes, 0)) * scale;
    painter.fillRect(QRectF(x, frame.top(), w, frame.height()), p.color);
    x += w;
  }
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(frame);
  if (sum > total_) {
    const double end = frame.left() + static_cast<double>(total_) * scale;
    painter.setPen(QPen(kProblem, 3));
    painter.drawLine(QPointF(end, frame.top()), QPointF(end, frame.bottom()));
  }
}

// ------------------------------------------------------------------------- map

MemoryMapView::MemoryMapView(QWidget* parent) : QWidget(parent) {
  const auto spin = [this](int max) {
    auto* s = new QSpinBox;
    s->setRange(0, max);
    connect(s, &QSpinBox::valueChanged, this, &MemoryMapView::sizeChanged);
    return s;
  };
  width_ = spin(16384);
  height_ = spin(16384);
  frames_ = spin(1024);
  width_->setObjectName("planWidth");
  height_->setObjectName("planHeight");
  frames_->setObjectName("planFrames");
  width_->setSingleStep(64);
  height_->setSingleStep(64);
  size_label_ = new QLabel;
  frames_label_ = new QLabel;
  auto* size_row = new QHBoxLayout;
  size_row->addWidget(size_label_);
  size_row->addWidget(width_);
  size_row->addWidget(new QLabel(QStringLiteral("\u00d7")));
  size_row->addWidget(height_);
  size_row->addSpacing(12);
  size_row->addWidget(frames_label_);
  size_row->addWidget(frames_);
  size_row->addStretch();
  content_ = new QWidget;
  content_layout_ = new QVBoxLayout(content_);
  content_layout_->setContentsMargins(0, 0, 0, 0);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(size_row);
  layout->addWidget(content_);
  rebuild();
}

void MemoryMapView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) rebuild();
  QWidget::changeEvent(event);
}

void MemoryMapView::setSize(int width, int height, int frames) {
  const QSignalBlocker a(width_), b(height_), c(frames_);
  width_->setValue(width);
  height_->setValue(height);
  frames_->setValue(frames);
}
int MemoryMapView::planWidth() const {
  return width_->value();
}
int MemoryMapView::planHeight() const {
  return height_->value();
}
int MemoryMapView::planFrames() const {
  return frames_->value();
}

void MemoryMapView::setPlan(const kiln::MemoryPlan& plan) {
  plan_ = plan;
  error_.clear();
  rebuild();
}

void MemoryMapView::showError(const QString& message) {
  error_ = message;
  rebuild();
}

QString MemoryMapView::shownText() const {
  QStringList out;
  for (const QLabel* l : texts_) out << l->text();
  return out.join('\n');
}

QLabel* MemoryMapView::addText(const QString& s, const QColor& color) {
  auto* label = new QLabel(s);
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  if (color.isValid()) label->setStyleSheet(QStringLiteral("color: %1").arg(color.name()));
  content_layout_->addWidget(label);
  texts_ << label;
  return label;
}

void MemoryMapView::rebuild() {
  size_label_->setText(tr("Working memory for"));
  frames_label_->setText(tr("frames"));
  const QString native = tr("native");
  width_->setSpecialValueText(native);
  height_->setSpecialValueText(native);
  frames_->setSpecialValueText(native);
  width_->setToolTip(tr("The picture size the working memory is for; native: each model's own"));
  height_->setToolTip(width_->toolTip());
  frames_->setToolTip(tr("A video model's clip length; native: the model's own"));
  while (QLayoutItem* item = content_layout_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  device_bars_.clear();
  host_bars_.clear();
  texts_.clear();
  fits_ = true;
  if (!error_.isEmpty()) {
    fits_ = false;
    addText(tr("No map for these settings: %1").arg(error_), kProblem);
    return;
  }
  if (plan_.device.empty()) {
    addText(tr("The engine has not said yet what its device holds."));
    return;
  }
  const QString device = QString::fromStdString(plan_.device);
  if (!plan_.accelerator) {
    addText(tr("Kiln computes on the CPU (%1): the weights stay in host memory, so there is "
               "nothing to place.")
                .arg(device));
    return;
  }
  if (plan_.busy) {
    addText(tr("The engine is moving weights on %1 just now; the map follows in a moment.")
                .arg(device));
    return;
  }
  if (plan_.models.empty()) {
    addText(tr("No model is loaded on %1. The map shows each model here once a render has "
               "loaded it.")
                .arg(device));
    return;
  }
  for (const kiln::ModelMemoryPlan& m : plan_.models) addModel(m);
}

void MemoryMapView::addModel(const kiln::ModelMemoryPlan& m) {
  const QString device = QString::fromStdString(plan_.device);
  QString size = m.frames > 0
                     ? tr("%1 \u00d7 %2, %3 frames").arg(m.width).arg(m.height).arg(m.frames)
                     : tr("%1 \u00d7 %2").arg(m.width).arg(m.height);
  QLabel* title = addText(m.width > 0 ? tr("%1 at %2").arg(QString::fromStdString(m.model), size)
                                      : QString::fromStdString(m.model));
  QFont bold = title->font();
  bold.setBold(true);
  title->setFont(bold);

  auto* device_bar = new MemoryBar;
  device_bar->setObjectName("deviceBar");
  device_bar->setParts({{tr("Resident weights"), m.resident_bytes, kResident},
                        {tr("Largest streamed group"), m.streamed_bytes, kStreamed},
                        {tr("Working memory"), m.working_bytes, kWorking},
                        {tr("Working reserve"), m.reserve_bytes, kReserve}},
                       m.room_bytes);
  content_layout_->addWidget(device_bar);
  device_bars_ << device_bar;
  const QString streamed =
      m.largest_streamed.empty()
          ? bytes(m.streamed_bytes)
          : tr("%1 (%2)").arg(bytes(m.streamed_bytes), QString::fromStdString(m.largest_streamed));
  const QString parts = tr("%1: %2 resident weights, %3 largest streamed group, %4 working "
                           "memory, %5 working reserve")
                            .arg(device, bytes(m.resident_bytes), streamed, bytes(m.working_bytes),
                                 bytes(m.reserve_bytes));
  addText(m.left_bytes >= 0
              ? tr("%1; %2 left of %3").arg(parts, bytes(m.left_bytes), bytes(m.room_bytes))
              : tr("%1; %2 too little: Kiln may use %3")
                    .arg(parts, bytes(-m.left_bytes), bytes(m.room_bytes)),
          m.left_bytes >= 0 ? QColor() : kProblem);

  if (m.pinned_room_bytes >= 0) {
    auto* host_bar = new MemoryBar;
    host_bar->setObjectName("pinnedBar");
    host_bar->setParts({{tr("Pinned"), m.pinned_bytes, kPinned}}, m.pinned_room_bytes);
    content_layout_->addWidget(host_bar);
    host_bars_ << host_bar;
    addText(tr("Host memory: %1 of weights, %2 of them pinned (the settings allow %3 pinned)")
                .arg(bytes(m.host_bytes), bytes(m.pinned_bytes), bytes(m.pinned_room_bytes)));
  } else {
    addText(tr("Host memory: %1 of weights (this device has no pinned memory)")
                .arg(bytes(m.host_bytes)));
  }
  for (const kiln::PlannedComponent& c : m.components) {
    QString line =
        tr("%1 (%2, %3): %4")
            .arg(QString::fromStdString(c.name), QString::fromStdString(c.model_class),
                 bytes(c.weight_bytes), placementText(QString::fromStdString(c.placement)));
    QStringList amounts;
    if (c.resident_bytes > 0) amounts << tr("%1 resident").arg(bytes(c.resident_bytes));
    if (c.streamed_bytes > 0) amounts << tr("up to %1 streamed").arg(bytes(c.streamed_bytes));
    if (c.pinned_bytes > 0) amounts << tr("%1 pinned").arg(bytes(c.pinned_bytes));
    if (!amounts.isEmpty()) line += QStringLiteral(" \u2014 ") + amounts.join(QStringLiteral(", "));
    addText(line)->setIndent(12);
  }
  for (const std::string& p : m.problems) {
    fits_ = false;
    addText(tr("Does not fit: %1").arg(QString::fromStdString(p)), kProblem);
  }
  for (const std::string& n : m.notes)
    addText(QString::fromStdString(n), palette().color(QPalette::PlaceholderText));
}

}  // namespace kiln::ui
