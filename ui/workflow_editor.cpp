#include "workflow_editor.h"

#include "engine_texts.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QScrollArea>
#include <QStatusBar>
#include <QUndoStack>
#include <QVBoxLayout>

#include "engine_bridge.h"
#include "node_canvas.h"
#include "parameter_panel.h"
#include "settings.h"
#include "workflow_document.h"

namespace kiln::ui {

WorkflowEditor::WorkflowEditor(app::EngineBridge* bridge, app::Settings& settings, QWidget* parent)
    : QMainWindow(parent),
      bridge_(bridge),
      settings_(settings),
      doc_(std::make_unique<app::WorkflowDocument>(kiln::builtinNodeSchemas())) {
  canvas_ = new NodeCanvas(doc_.get());
  setCentralWidget(canvas_);
  auto* side = new QWidget;
  auto* layout = new QVBoxLayout(side);
  node_title_ = new QLabel;
  node_title_->setWordWrap(true);
  panel_ = new ParameterPanel;
  expose_box_ = new QWidget;
  new QVBoxLayout(expose_box_);
  layout->addWidget(node_title_);
  layout->addWidget(panel_);
  layout->addWidget(expose_box_);
  layout->addStretch();
  auto* scroll = new QScrollArea;
  scroll->setWidget(side);
  scroll->setWidgetResizable(true);
  auto* dock = new QDockWidget;
  dock->setObjectName("node");
  dock->setWidget(scroll);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  status_ = new QLabel;
  statusBar()->addWidget(status_, 1);
  setAcceptDrops(true);
  // As large as suits the graph, never past the screen it opens on.
  QSize size(1400, 850);
  if (const QScreen* screen = parent ? parent->screen() : QGuiApplication::primaryScreen())
    size = size.boundedTo(screen->availableGeometry().size() * 0.9);
  resize(size);
  dock->setMinimumWidth(340);  // the side panel's values and checkboxes fit

  connect(canvas_->scene(), &QGraphicsScene::selectionChanged, this,
          &WorkflowEditor::showSelectedNode);
  connect(doc_.get(), &app::WorkflowDocument::changed, this, [this] {
    if (!editing_) showSelectedNode();          // undo, redo, or another view changed it
    if (!running_) canvas_->clearNodeStates();  // the states were of the graph before the change
    updateTitle();
  });
  connect(doc_->undoStack(), &QUndoStack::cleanChanged, this, &WorkflowEditor::updateTitle);
  connect(panel_, &ParameterPanel::valueEdited, this,
          [this](const std::string& node, const std::string& param) {
            editing_ = true;
            if (!doc_->setParam(node, param, panel_->value(node, param)))
              status_->setText(doc_->lastError());
            editing_ = false;
          });
  connect(bridge_, &app::EngineBridge::nodeState, this,
          [this](const QString& node, const QString& state, const QString& message) {
            if (!running_) return;
            canvas_->setNodeState(node.toStdString(), state, message);
            if (state == "running") running_node_ = node.toStdString();
          });
  // The running node's stage reports its own progress: drawn on that node.
  connect(bridge_, &app::EngineBridge::stageProgress, this, [this](int, qint64 done, qint64 total) {
    if (running_ && !running_node_.empty()) canvas_->setNodeProgress(running_node_, done, total);
  });
  connect(bridge_, &app::EngineBridge::finished, this, [this] {
    if (running_) status_->setText(tr("Done"));
    running_ = false;
  });
  // Nodes the run never reached are no longer waiting for it.
  connect(bridge_, &app::EngineBridge::failed, this, [this](const QString& message) {
    if (running_) {
      status_->setText(tr("Failed: %1").arg(message.section('\n', 0, 0)));
      canvas_->clearNodeStates({"queued", "running"});
    }
    running_ = false;
  });
  connect(bridge_, &app::EngineBridge::cancelled, this, [this] {
    if (running_) {
      status_->setText(tr("Stopped"));
      canvas_->clearNodeStates({"queued", "running"});
    }
    running_ = false;
  });
  connect(bridge_, &app::EngineBridge::progress, this,
          [this](const QString& stage, qint64 done, qint64 total, const QString& unit,
                 double fraction, double) {
            if (running_)
              status_->setText(tr("%1 %2 · %3%")
                                   .arg(stageText(stage), progressAmountText(done, total, unit))
                                   .arg(std::lround(fraction * 100)));
          });
  retranslate();
  showSelectedNode();
}

WorkflowEditor::~WorkflowEditor() = default;

QString WorkflowEditor::statusText() const {
  return status_->text();
}

void WorkflowEditor::buildMenus() {
  menuBar()->clear();
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&New"), QKeySequence::New, this, [this] {
    doc_->setWorkflow({});
    canvas_->frameAll();
  });
  file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open workflow"), QString(),
                                                      tr("Workflows and pictures (*.json *.png)"));
    if (!path.isEmpty()) open(path);
  });
  file->addAction(tr("&Save"), QKeySequence::Save, this, [this] { save(); });
  file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this, [this] { saveAs(); });
  file->addSeparator();
  file->addAction(tr("Use in &Generate Panel"), this,
                  [this] { Q_EMIT useAsTemplate(doc_->workflow()); });
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = doc_->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = doc_->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);
  edit->addSeparator();
  edit->addAction(tr("&Copy"), QKeySequence::Copy, canvas_, &NodeCanvas::copySelection);
  edit->addAction(tr("&Paste"), QKeySequence::Paste, canvas_, &NodeCanvas::paste);
  edit->addAction(tr("&Delete"), QKeySequence::Delete, canvas_, &NodeCanvas::deleteSelection);
  edit->addSeparator();
  edit->addAction(tr("&Group Selection"), QKeySequence(Qt::CTRL | Qt::Key_G), this,
                  [this] { canvas_->groupSelection(); });
  edit->addAction(tr("U&ngroup"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G), canvas_,
                  &NodeCanvas::ungroupSelection);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Frame All"), QKeySequence(Qt::Key_Home), canvas_, &NodeCanvas::frameAll);
  QMenu* workflow = menuBar()->addMenu(tr("&Workflow"));
  workflow->addAction(tr("&Run"), QKeySequence(Qt::CTRL | Qt::Key_Return), this, [this] { run(); });
  workflow->addAction(tr("&Interrupt"), QKeySequence(Qt::Key_Escape), bridge_,
                      &app::EngineBridge::cancel);
}

void WorkflowEditor::retranslate() {
  buildMenus();
  updateTitle();
  showSelectedNode();
}

void WorkflowEditor::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QMainWindow::changeEvent(event);
}

void WorkflowEditor::updateTitle() {
  const QString name =
      doc_->path().isEmpty() ? tr("Untitled workflow") : QFileInfo(doc_->path()).fileName();
  setWindowTitle(tr("%1%2 — Kiln workflow editor").arg(name, doc_->isModified() ? "*" : ""));
}

// The side panel: every parameter of the one selected node, and whether each is shown
// in the generate panel.
void WorkflowEditor::showSelectedNode() {
  if (editing_) return;  // the panel's own edit: its editors stay as they are
  const std::vector<std::string> selected = canvas_->selectedIds();
  const kiln::WorkflowNode* node =
      selected.size() == 1 ? doc_->workflow().node(selected.front()) : nullptr;
  const kiln::NodeSchema* schema = node ? doc_->schema(node->type) : nullptr;
  qDeleteAll(expose_box_->findChildren<QCheckBox*>(Qt::FindDirectChildrenOnly));
  if (!schema) {
    panel_node_.clear();
    panel_->setWorkflow({});
    panel_->hide();
    node_title_->setText(selected.empty()
                             ? tr("Select a node to edit its parameters.")
                             : tr("%n nodes selected", "", static_cast<int>(selected.size())));
    return;
  }
  panel_node_ = node->id;
  kiln::Workflow view = doc_->workflow();
  view.exposed.clear();
  for (const kiln::ParamSpec& p : schema->params)
    view.exposed.push_back({node->id, p.name, p.display_name});
  panel_->setWorkflow(view);
  panel_->show();
  node_title_->setText(QStringLiteral("<b>%1</b><br>%2")
                           .arg(QString::fromStdString(schema->display_name).toHtmlEscaped(),
                                QString::fromStdString(schema->description).toHtmlEscaped()));
  for (const kiln::ParamSpec& p : schema->params) {
    auto* box = new QCheckBox(
        tr("Show %1 in the generate panel").arg(QString::fromStdString(p.display_name)),
        expose_box_);
    box->setObjectName(QString::fromStdString(p.name));
    const auto& exposed = doc_->workflow().exposed;
    box->setChecked(std::any_of(exposed.begin(), exposed.end(), [&](const kiln::ExposedParam& e) {
      return e.node == node->id && e.param == p.name;
    }));
    const std::string id = node->id, param = p.name;
    connect(box, &QCheckBox::toggled, this, [this, id, param](bool on) {
      editing_ = true;
      doc_->setExposed(id, param, on);
      editing_ = false;
    });
    expose_box_->layout()->addWidget(box);
  }
}

QCheckBox* WorkflowEditor::exposeBox(const std::string& param) const {
  return expose_box_->findChild<QCheckBox*>(QString::fromStdString(param),
                                            Qt::FindDirectChildrenOnly);
}

bool WorkflowEditor::open(const QString& path) {
  if (!doc_->open(path)) {
    status_->setText(tr("Cannot open %1: %2").arg(QFileInfo(path).fileName(), doc_->lastError()));
    return false;
  }
  canvas_->frameAll();
  status_->setText(tr("Opened %1").arg(QFileInfo(path).fileName()));
  updateTitle();
  return true;
}

bool WorkflowEditor::saveAs() {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Save workflow"), doc_->path().isEmpty() ? "workflow.json" : doc_->path(),
      tr("Kiln workflows (*.json)"));
  if (path.isEmpty()) return false;
  if (!doc_->save(path)) {
    QMessageBox::warning(this, tr("Saving failed"), doc_->lastError());
    return false;
  }
  updateTitle();
  return true;
}

bool WorkflowEditor::save() {
  if (doc_->path().isEmpty()) return saveAs();
  if (!doc_->save(doc_->path())) {
    QMessageBox::warning(this, tr("Saving failed"), doc_->lastError());
    return false;
  }
  return true;
}

bool WorkflowEditor::run() {
  const std::vector<kiln::WorkflowProblem> problems = doc_->problems();
  if (!problems.empty()) {
    canvas_->showProblems(problems);
    status_->setText(
        tr("The workflow cannot run: %1").arg(QString::fromStdString(problems.front().message)));
    return false;
  }
  for (const auto& n : doc_->workflow().nodes) canvas_->setNodeState(n.id, {});
  running_node_.clear();
  app::GenerateRequest r;
  r.workflow = std::make_shared<kiln::Workflow>(doc_->workflow());
  r.output_folder = settings_.outputFolder();
  r.output_name = settings_.value("general/file_name_template").toString();
  running_ = true;
  status_->setText(tr("Queued"));
  bridge_->enqueue(r);
  return true;
}

void WorkflowEditor::dragEnterEvent(QDragEnterEvent* event) {
  for (const QUrl& url : event->mimeData()->urls()) {
    const QString path = url.toLocalFile();
    if (path.endsWith(".json", Qt::CaseInsensitive) || path.endsWith(".png", Qt::CaseInsensitive)) {
      event->acceptProposedAction();
      return;
    }
  }
}

void WorkflowEditor::dropEvent(QDropEvent* event) {
  for (const QUrl& url : event->mimeData()->urls())
    if (open(url.toLocalFile())) {
      event->acceptProposedAction();
      return;
    }
}

void WorkflowEditor::closeEvent(QCloseEvent* event) {
  if (doc_->isModified() && isVisible() && !testAttribute(Qt::WA_DontShowOnScreen)) {
    const auto answer =
        QMessageBox::question(this, tr("Unsaved changes"), tr("Save the changes to this workflow?"),
                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel || (answer == QMessageBox::Save && !save())) {
      event->ignore();
      return;
    }
  }
  event->accept();
}

}  // namespace kiln::ui
