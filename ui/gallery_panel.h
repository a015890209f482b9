// The gallery dock: the results in the output folder, newest first, as thumbnails with
// their recorded settings; a result can be shown again or its settings reused.
#pragma once

#include <QList>
#include <QWidget>

#include "result_files.h"

class QListWidget;
class QListWidgetItem;
class QPushButton;
class QTimer;

namespace kiln::ui {

class GalleryPanel : public QWidget {
  Q_OBJECT

 public:
  explicit GalleryPanel(QWidget* parent = nullptr);

  // Lists the folder's results (thumbnails arrive a few at a time, off the hot path).
  void setFolder(const QString& folder);
  QString folder() const { return folder_; }
  // New results written by a job: listed first.
  void addResults(const QStringList& paths);
  QListWidget* list() const { return list_; }
  int count() const;
  app::ResultFile result(int row) const;
  int pendingThumbnails() const { return static_cast<int>(thumbnails_todo_.size()); }
  void reuseSelected();

 Q_SIGNALS:
  void showResult(const QString& path);
  void reuse(const kiln::app::ResultFile& result);

 protected:
  void changeEvent(QEvent* event) override;

 public:
  // A result's caption under its thumbnail.
  static QString caption(const app::ResultFile& result);

 private:
  void retranslate();
  void addItem(const app::ResultFile& result, bool first);
  void loadThumbnails();

  QString folder_;
  QListWidget* list_ = nullptr;
  QPushButton* show_ = nullptr;
  QPushButton* reuse_ = nullptr;
  QPushButton* refresh_ = nullptr;
  QTimer* thumbnail_timer_ = nullptr;
  QList<QListWidgetItem*> thumbnails_todo_;
};

}  // namespace kiln::ui
