// The workflow editor's canvas: a view of a WorkflowDocument. Nodes show their title and
// typed ports; dragging from an output to an input connects them (an incompatible input
// is shown refused while dragging, with the reason), dragging an input's link away
// disconnects it; nodes move, are selected, deleted (Del), copied and pasted (Ctrl+C/V),
// added from a categorised menu (right click) or a search popup (typing on the canvas,
// or a double click on empty space); the wheel zooms, a middle-button drag pans, Home
// frames everything. Every edit goes through the document, so each one can be undone.
#pragma once

#include <QGraphicsView>
#include <QMap>
#include <QPointer>
#include <QStringList>

#include <string>
#include <vector>

#include "kiln/workflow.h"

namespace kiln::app {
class WorkflowDocument;
}

class QLineEdit;

namespace kiln::ui {

class GroupItem;
class NodeItem;
class NodeSearch;

class NodeCanvas : public QGraphicsView {
  Q_OBJECT

 public:
  explicit NodeCanvas(app::WorkflowDocument* document, QWidget* parent = nullptr);
  ~NodeCanvas() override;

  app::WorkflowDocument* document() const { return doc_; }
  std::vector<std::string> selectedIds() const;
  void selectIds(const std::vector<std::string>& ids);
  // Where a node's port is drawn, in scene coordinates (for tests and automation).
  QPointF portPosition(const std::string& node, const std::string& port, bool output) const;
  QPointF nodePosition(const std::string& node) const;

  // The centre of a parameter's row on its node, in scene coordinates (null: none).
  QPointF paramPosition(const std::string& node, const std::string& param) const;
  // Edits a parameter in place, over its row (what a click on the row does); the editor
  // closes with Enter, Escape or a click elsewhere. Null when there is no such parameter.
  QWidget* editParam(const std::string& node, const std::string& param);
  QWidget* paramEditor() const { return param_editor_; }
  void closeParamEditor();

  // Groups: the one at `scene_pos` (-1: none), in its title bar only if `title_only`;
  // where one is drawn; grouping the selection (Ctrl+G; returns the group or -1),
  // ungrouping the selection's groups (Ctrl+Shift+G); renaming in place (a double click
  // on the title) with the editor it opens.
  int groupAt(const QPointF& scene_pos, bool title_only = false) const;
  QRectF groupRect(int group) const;
  int groupSelection();
  void ungroupSelection();
  QLineEdit* renameGroup(int group);

  // What the refused connection under the cursor says while dragging ("" otherwise).
  QString dragProblem() const { return drag_problem_; }
  void frameAll();
  // Opens the node search at `scene_pos` with `text` typed; the chosen type is added there.
  NodeSearch* openNodeSearch(const QPointF& scene_pos, const QString& text = {});
  void deleteSelection();
  void copySelection();
  void paste();
  // Shows `state` (queued, running, cached, done, failed + message) on a node while a
  // workflow runs; an empty state clears it.
  void setNodeState(const std::string& node, const QString& state, const QString& message = {});
  QString nodeState(const std::string& node) const {
    return states_.value(QString::fromStdString(node)).first;
  }
  // A running node's own progress (its stage's done of total), drawn as a bar on it.
  // Forgets the run states drawn on the nodes: those in `states` ("queued", ...), or all.
  void clearNodeStates(const QStringList& states = {});
  void setNodeProgress(const std::string& node, qint64 done, qint64 total);
  double nodeProgress(const std::string& node) const {
    return progress_.value(QString::fromStdString(node), -1);
  }
  // Marks the nodes a validation names, until the next edit.
  void showProblems(const std::vector<kiln::WorkflowProblem>& problems);
  QString nodeProblem(const std::string& node) const {
    return problems_.value(QString::fromStdString(node));
  }

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  struct PortHit {
    NodeItem* node = nullptr;
    std::string port;
    bool output = false;
    bool valid() const { return node != nullptr; }
  };
  void rebuild();
  PortHit portAt(const QPointF& scene_pos) const;

  app::WorkflowDocument* doc_;
  QMap<QString, NodeItem*> nodes_;
  std::vector<GroupItem*> groups_;
  QMap<QString, QPair<QString, QString>> states_;  // node -> (state, message)
  QMap<QString, QString> problems_;
  QMap<QString, double> progress_;  // running node -> fraction
  // A connection being dragged.
  PortHit drag_from_;
  QGraphicsPathItem* drag_line_ = nullptr;
  QString drag_problem_;
  // A move being dragged: where it started, per node.
  QMap<QString, QPointF> move_start_;
  bool panning_ = false;
  QPoint pan_last_;
  // A group being dragged by its title bar (-1: none), from where.
  int group_drag_ = -1;
  QPointF group_drag_start_;
  // A press on a parameter's row: a release without a drag edits it.
  struct PendingParam {
    std::string node, param;
    QPoint press;
  };
  PendingParam pending_param_;
  QPointer<QWidget> param_editor_;
  bool editing_param_ = false;  // the inline editor's own edit is going into the document
};

}  // namespace kiln::ui
