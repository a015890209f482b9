// The canvas's node search: a small popup with a text field and the node types whose
// name, type or category contain what was typed (best matches first); Enter or a click
// adds the chosen one. Typing on the canvas opens it with the first letter.
#pragma once

#include <QFrame>

#include <vector>

#include "kiln/workflow.h"

class QLineEdit;
class QListWidget;

namespace kiln::ui {

class NodeSearch : public QFrame {
  Q_OBJECT

 public:
  explicit NodeSearch(const std::vector<kiln::NodeSchema>& schemas, QWidget* parent = nullptr);

  QLineEdit* field() const { return field_; }
  QListWidget* list() const { return list_; }
  // The node types listed now, best first.
  std::vector<std::string> matches() const;

 Q_SIGNALS:
  void chosen(const std::string& type);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void filter(const QString& text);
  void choose();

  std::vector<kiln::NodeSchema> schemas_;
  QLineEdit* field_ = nullptr;
  QListWidget* list_ = nullptr;
};

}  // namespace kiln::ui
