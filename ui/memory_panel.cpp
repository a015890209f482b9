#include "memory_panel.h"

#include <QEvent>
#include <QHeaderView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "engine_texts.h"
#include "kiln/units.h"

namespace kiln::ui {

namespace {
QString bytes(qint64 n) {
  return QString::fromStdString(kiln::formatBytes(n));
}
}  // namespace

MemoryPanel::MemoryPanel(QWidget* parent) : QWidget(parent) {
  tree_ = new QTreeWidget;
  tree_->setColumnCount(2);
  // Both columns share the dock's width (long component names used to push the values
  // out of view); what does not fit is elided, and the whole text is the tooltip.
  tree_->header()->setSectionResizeMode(QHeaderView::Stretch);
  tree_->setTextElideMode(Qt::ElideMiddle);
  tree_->setRootIsDecorated(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(tree_);
  showMemory(memory_);
}

void MemoryPanel::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) showMemory(memory_);
  QWidget::changeEvent(event);
}

void MemoryPanel::showMemory(const app::MemorySnapshot& m) {
  memory_ = m;
  tree_->setHeaderLabels({tr("What"), tr("Memory")});
  tree_->clear();
  const auto row = [&](QTreeWidgetItem* parent, const QString& what, const QString& value) {
    auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree_);
    item->setText(0, what);
    item->setText(1, value);
    item->setToolTip(0, what);
    item->setToolTip(1, value);
    return item;
  };
  row(nullptr, tr("Device"), m.device.isEmpty() ? tr("not known yet") : m.device);
  if (m.device_total > 0) {
    row(nullptr, tr("Device memory in use"),
        tr("%1 of %2 (peak %3)")
            .arg(bytes(m.device_allocated), bytes(m.device_total), bytes(m.device_peak)));
    // What the allocator holds beyond the live tensors is free for Kiln's next tensors,
    // not used: shown apart so it is never mistaken for use.
    if (m.device_reserved > m.device_allocated)
      row(nullptr, tr("Reserved by the allocator"),
          tr("%1 (%2 of it cached for reuse)")
              .arg(bytes(m.device_reserved), bytes(m.device_reserved - m.device_allocated)));
  }
  row(nullptr, tr("Pinned host memory"),
      tr("%1 (peak %2)").arg(bytes(m.pinned), bytes(m.pinned_peak)));
  QTreeWidgetItem* models =
      row(nullptr, tr("Loaded models: %1").arg(m.cached_models),
          tr("%1, %2 on the device")
              .arg(bytes(m.cached_model_bytes), bytes(m.cached_model_device_bytes)));
  // "unet (UNetModel, 4.22 MiB, fp32, not quantized): group-block, ..." -> component | placement
  for (const QString& line : m.placements) {
    const qsizetype colon = line.indexOf("): ");
    if (colon > 0)
      row(models, line.left(colon + 1), placementText(line.mid(colon + 3)));
    else
      row(models, line, {});
  }
  models->setExpanded(true);
  row(nullptr, tr("Running job"), bytes(m.job_bytes));
  row(nullptr, tr("Cached node results"),
      tr("%1 in %2 entries").arg(bytes(m.node_cache_bytes)).arg(m.node_cache_entries));
  if (m.resident > 0) row(nullptr, tr("Kiln's resident memory"), bytes(m.resident));
}

}  // namespace kiln::ui
