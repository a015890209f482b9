// The queue dock: the running request and the waiting ones, in order; cancel one,
// cancel all, and move waiting ones up or down.
#pragma once

#include <QWidget>

class QListWidget;
class QPushButton;

namespace kiln::app {
class EngineBridge;
}

namespace kiln::ui {

class QueuePanel : public QWidget {
  Q_OBJECT

 public:
  explicit QueuePanel(app::EngineBridge* bridge, QWidget* parent = nullptr);

  QListWidget* list() const { return list_; }
  // Acting on the selected row.
  void cancelSelected();
  void moveSelected(int delta);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void refresh();
  void retranslate();
  quint64 selectedId() const;

  app::EngineBridge* bridge_;
  QListWidget* list_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* cancel_all_ = nullptr;
  QPushButton* up_ = nullptr;
  QPushButton* down_ = nullptr;
};

}  // namespace kiln::ui
