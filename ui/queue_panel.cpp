#include "queue_panel.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "engine_bridge.h"

namespace kiln::ui {

QueuePanel::QueuePanel(app::EngineBridge* bridge, QWidget* parent)
    : QWidget(parent), bridge_(bridge) {
  list_ = new QListWidget;
  list_->setWordWrap(true);  // long prompts wrap instead of being cut off
  list_->setTextElideMode(Qt::ElideMiddle);
  cancel_ = new QPushButton;
  cancel_all_ = new QPushButton;
  up_ = new QPushButton;
  down_ = new QPushButton;
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {up_, down_, cancel_, cancel_all_}) buttons->addWidget(b);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(list_);
  layout->addLayout(buttons);
  retranslate();
  connect(cancel_, &QPushButton::clicked, this, &QueuePanel::cancelSelected);
  connect(cancel_all_, &QPushButton::clicked, bridge_, &app::EngineBridge::cancelAll);
  connect(up_, &QPushButton::clicked, this, [this] { moveSelected(-1); });
  connect(down_, &QPushButton::clicked, this, [this] { moveSelected(1); });
  connect(bridge_, &app::EngineBridge::queueChanged, this, &QueuePanel::refresh);
  connect(list_, &QListWidget::currentRowChanged, this, [this] { refresh(); });
  refresh();
}

void QueuePanel::retranslate() {
  cancel_->setText(tr("Cancel"));
  cancel_->setToolTip(tr("Remove the selected request, or stop it if it is running"));
  cancel_all_->setText(tr("Cancel all"));
  cancel_all_->setToolTip(tr("Stop the running request and remove every waiting one"));
  up_->setText(tr("Up"));
  up_->setToolTip(tr("Run the selected request sooner"));
  down_->setText(tr("Down"));
  down_->setToolTip(tr("Run the selected request later"));
  refresh();
}

void QueuePanel::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}

quint64 QueuePanel::selectedId() const {
  const QListWidgetItem* item = list_->currentItem();
  return item ? item->data(Qt::UserRole).toULongLong() : 0;
}

void QueuePanel::cancelSelected() {
  if (const quint64 id = selectedId()) bridge_->cancelItem(id);
}

void QueuePanel::moveSelected(int delta) {
  const quint64 id = selectedId();
  if (id && bridge_->moveItem(id, delta)) {
    for (int i = 0; i < list_->count(); ++i)
      if (list_->item(i)->data(Qt::UserRole).toULongLong() == id) list_->setCurrentRow(i);
  }
}

void QueuePanel::refresh() {
  const quint64 selected = selectedId();
  const QList<app::QueueItem> items = bridge_->queue();
  const QSignalBlocker block(list_);
  list_->clear();
  bool selected_waits = false;
  for (const app::QueueItem& q : items) {
    auto* item = new QListWidgetItem(q.running ? tr("Running: %1").arg(q.label) : q.label, list_);
    item->setData(Qt::UserRole, q.id);
    item->setToolTip(item->text());  // the whole entry where the dock is narrow
    if (q.running) {
      QFont bold = item->font();
      bold.setBold(true);
      item->setFont(bold);
    }
    if (q.id == selected) {
      list_->setCurrentItem(item);
      selected_waits = !q.running;
    }
  }
  cancel_->setEnabled(list_->currentItem() != nullptr);
  cancel_all_->setEnabled(!items.isEmpty());
  up_->setEnabled(selected_waits);
  down_->setEnabled(selected_waits);
}

}  // namespace kiln::ui
