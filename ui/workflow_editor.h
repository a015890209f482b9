// The workflow editor window: the node canvas, a side panel with the selected node's
// parameters (made from its schema, each one can be shown in the generate panel), and
// File actions: new, open (Kiln or ComfyUI workflows, pictures carrying either, also by
// dropping them on the window), save, save as; Edit: undo and redo; Run renders through
// the shared engine bridge with each node's state shown on the canvas; "Use in Generate
// Panel" hands the workflow to the main window as its template.
#pragma once

#include <QMainWindow>

#include <memory>

#include "kiln/workflow.h"

class QCheckBox;
class QLabel;

namespace kiln::app {
class EngineBridge;
class Settings;
class WorkflowDocument;
}  // namespace kiln::app

namespace kiln::ui {

class NodeCanvas;
class ParameterPanel;

class WorkflowEditor : public QMainWindow {
  Q_OBJECT

 public:
  WorkflowEditor(app::EngineBridge* bridge, app::Settings& settings, QWidget* parent = nullptr);
  ~WorkflowEditor() override;

  app::WorkflowDocument* document() const { return doc_.get(); }
  NodeCanvas* canvas() const { return canvas_; }
  ParameterPanel* nodePanel() const { return panel_; }
  QString statusText() const;

  // Runs the workflow (false, with the problems marked on the nodes, when it cannot run).
  bool run();
  bool open(const QString& path);
  // The exposed-in-generate-panel box of the node panel's parameter.
  QCheckBox* exposeBox(const std::string& param) const;

 Q_SIGNALS:
  void useAsTemplate(const kiln::Workflow& workflow);

 protected:
  void changeEvent(QEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void retranslate();
  void showSelectedNode();
  void updateTitle();
  bool saveAs();
  bool save();

  app::EngineBridge* bridge_;
  app::Settings& settings_;
  std::unique_ptr<app::WorkflowDocument> doc_;
  NodeCanvas* canvas_ = nullptr;
  ParameterPanel* panel_ = nullptr;
  QWidget* expose_box_ = nullptr;
  QLabel* node_title_ = nullptr;
  QLabel* status_ = nullptr;
  std::string panel_node_;  // the node the side panel shows
  bool editing_ = false;    // the side panel is writing into the document
  bool running_ = false;
  std::string running_node_;  // the node whose stage runs now
};

}  // namespace kiln::ui
