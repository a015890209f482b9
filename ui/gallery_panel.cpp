#include "gallery_panel.h"

#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QListWidget>
#include <QPixmap>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

namespace kiln::ui {

namespace {
constexpr int kThumb = 128;
constexpr int kResultRole = Qt::UserRole;  // the path
constexpr int kParametersRole = Qt::UserRole + 1;
constexpr int kWorkflowRole = Qt::UserRole + 2;
constexpr int kModifiedRole = Qt::UserRole + 3;
}  // namespace

GalleryPanel::GalleryPanel(QWidget* parent) : QWidget(parent) {
  list_ = new QListWidget;
  list_->setViewMode(QListView::IconMode);
  list_->setIconSize({kThumb, kThumb});
  list_->setGridSize({kThumb + 16, kThumb + 36});
  list_->setResizeMode(QListView::Adjust);
  list_->setMovement(QListView::Static);
  list_->setUniformItemSizes(true);
  list_->setWordWrap(true);
  show_ = new QPushButton;
  reuse_ = new QPushButton;
  refresh_ = new QPushButton;
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(show_);
  buttons->addWidget(reuse_);
  buttons->addStretch();
  buttons->addWidget(refresh_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(list_);
  layout->addLayout(buttons);
  thumbnail_timer_ = new QTimer(this);
  thumbnail_timer_->setInterval(0);
  connect(thumbnail_timer_, &QTimer::timeout, this, &GalleryPanel::loadThumbnails);
  connect(list_, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* item) { Q_EMIT showResult(item->data(kResultRole).toString()); });
  connect(show_, &QPushButton::clicked, this, [this] {
    if (const QListWidgetItem* item = list_->currentItem())
      Q_EMIT showResult(item->data(kResultRole).toString());
  });
  connect(reuse_, &QPushButton::clicked, this, &GalleryPanel::reuseSelected);
  connect(refresh_, &QPushButton::clicked, this, [this] { setFolder(folder_); });
  connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
    show_->setEnabled(row >= 0);
    reuse_->setEnabled(row >= 0 && !result(row).parameters.isEmpty());
  });
  retranslate();
  show_->setEnabled(false);
  reuse_->setEnabled(false);
}

void GalleryPanel::retranslate() {
  show_->setText(tr("Show"));
  show_->setToolTip(tr("Show the selected result in the viewer"));
  reuse_->setText(tr("Reuse settings"));
  reuse_->setToolTip(tr("Fill the generate panel with the selected result's prompt and settings"));
  refresh_->setText(tr("Refresh"));
  refresh_->setToolTip(tr("Read the output folder again"));
}

void GalleryPanel::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}

void GalleryPanel::setFolder(const QString& folder) {
  folder_ = folder;
  list_->clear();
  thumbnails_todo_.clear();
  for (const app::ResultFile& r : app::listResults(folder)) addItem(r, false);
}

void GalleryPanel::addResults(const QStringList& paths) {
  for (const QString& path : paths) addItem(app::readResult(path), true);
}

int GalleryPanel::count() const {
  return list_->count();
}

app::ResultFile GalleryPanel::result(int row) const {
  app::ResultFile r;
  const QListWidgetItem* item = list_->item(row);
  if (!item) return r;
  r.path = item->data(kResultRole).toString();
  r.parameters = item->data(kParametersRole).toString();
  r.workflow = item->data(kWorkflowRole).toString();
  r.modified = item->data(kModifiedRole).toDateTime();
  return r;
}

void GalleryPanel::reuseSelected() {
  const int row = list_->currentRow();
  if (row >= 0) Q_EMIT reuse(result(row));
}

// What tells pictures apart at a glance: the seed and the prompt's start (file names of
// one session all begin alike); the file name for pictures without settings.
QString GalleryPanel::caption(const app::ResultFile& r) {
  const std::optional<app::RecordedSettings> s = app::parseParametersText(r.parameters);
  if (!s) return QFileInfo(r.path).completeBaseName();
  QString prompt = s->prompt.simplified();
  if (prompt.size() > 28) prompt = prompt.left(27) + QChar(0x2026);
  return prompt.isEmpty() ? tr("seed %1").arg(s->seed) : tr("%1\nseed %2").arg(prompt).arg(s->seed);
}

void GalleryPanel::addItem(const app::ResultFile& r, bool first) {
  auto* item = new QListWidgetItem(caption(r));
  item->setData(kResultRole, r.path);
  item->setData(kParametersRole, r.parameters);
  item->setData(kWorkflowRole, r.workflow);
  item->setData(kModifiedRole, r.modified);
  item->setToolTip(r.parameters.isEmpty() ? r.path : r.path + "\n\n" + r.parameters);
  item->setSizeHint({kThumb + 16, kThumb + 36});
  if (first)
    list_->insertItem(0, item);
  else
    list_->addItem(item);
  thumbnails_todo_.push_back(item);
  thumbnail_timer_->start();
}

// A few thumbnails per turn of the event loop, so a large folder never stalls the window.
void GalleryPanel::loadThumbnails() {
  for (int n = 0; n < 2 && !thumbnails_todo_.isEmpty(); ++n) {
    QListWidgetItem* item = thumbnails_todo_.takeFirst();
    const QImage thumb = app::readThumbnail(item->data(kResultRole).toString(), kThumb);
    if (!thumb.isNull()) item->setIcon(QPixmap::fromImage(thumb));
  }
  if (thumbnails_todo_.isEmpty()) thumbnail_timer_->stop();
}

}  // namespace kiln::ui
