#include "node_search.h"

#include <QKeyEvent>
#include <QLineEdit>
#include <QListWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "node_texts.h"

namespace kiln::ui {

NodeSearch::NodeSearch(const std::vector<kiln::NodeSchema>& schemas, QWidget* parent)
    : QFrame(parent, Qt::Popup), schemas_(schemas) {
  setFrameStyle(QFrame::StyledPanel | QFrame::Raised);
  setAttribute(Qt::WA_DeleteOnClose);
  field_ = new QLineEdit;
  field_->setPlaceholderText(tr("Search nodes"));
  field_->setClearButtonEnabled(true);
  list_ = new QListWidget;
  list_->setMinimumSize(260, 220);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(field_);
  layout->addWidget(list_);
  field_->installEventFilter(this);
  connect(field_, &QLineEdit::textChanged, this, &NodeSearch::filter);
  connect(list_, &QListWidget::itemActivated, this, &NodeSearch::choose);
  filter({});
}

void NodeSearch::filter(const QString& text) {
  const QString needle = text.trimmed();
  // Names that start with the text first, then names containing it, then types and
  // categories containing it.
  std::vector<std::pair<int, const kiln::NodeSchema*>> ranked;
  for (const auto& s : schemas_) {
    const QString name = QString::fromStdString(s.display_name),
                  type = QString::fromStdString(s.type),
                  category = QString::fromStdString(s.category);
    int rank = -1;
    if (needle.isEmpty() || name.startsWith(needle, Qt::CaseInsensitive))
      rank = 0;
    else if (name.contains(needle, Qt::CaseInsensitive))
      rank = 1;
    else if (type.contains(needle, Qt::CaseInsensitive))
      rank = 2;
    else if (category.contains(needle, Qt::CaseInsensitive))
      rank = 3;
    if (rank >= 0) ranked.push_back({rank, &s});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  list_->clear();
  for (const auto& [rank, s] : ranked) {
    auto* item = new QListWidgetItem(
        tr("%1  (%2)").arg(app::nodeText(s->display_name), app::nodeCategoryText(s->category)),
        list_);
    item->setData(Qt::UserRole, QString::fromStdString(s->type));
    item->setToolTip(QString::fromStdString(s->description));
  }
  list_->setCurrentRow(list_->count() > 0 ? 0 : -1);
}

std::vector<std::string> NodeSearch::matches() const {
  std::vector<std::string> types;
  for (int i = 0; i < list_->count(); ++i)
    types.push_back(list_->item(i)->data(Qt::UserRole).toString().toStdString());
  return types;
}

void NodeSearch::choose() {
  const QListWidgetItem* item = list_->currentItem();
  if (!item) return;
  const std::string type = item->data(Qt::UserRole).toString().toStdString();
  close();
  Q_EMIT chosen(type);
}

// Up and down move through the list while typing; Enter adds; Escape closes.
bool NodeSearch::eventFilter(QObject* watched, QEvent* event) {
  if (watched == field_ && event->type() == QEvent::KeyPress) {
    auto* key = static_cast<QKeyEvent*>(event);
    switch (key->key()) {
      case Qt::Key_Down:
        list_->setCurrentRow(std::min(list_->currentRow() + 1, list_->count() - 1));
        return true;
      case Qt::Key_Up:
        list_->setCurrentRow(std::max(list_->currentRow() - 1, 0));
        return true;
      case Qt::Key_Return:
      case Qt::Key_Enter:
        choose();
        return true;
      case Qt::Key_Escape:
        close();
        return true;
      default:
        break;
    }
  }
  return QFrame::eventFilter(watched, event);
}

}  // namespace kiln::ui
