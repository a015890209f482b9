#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QImageReader>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "appearance.h"
#include "engine_bridge.h"
#include "engine_texts.h"
#include "first_start_wizard.h"
#include "gallery_panel.h"
#include "image_view.h"
#include "kiln/build_info.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "kiln/units.h"
#include "kiln/workflow.h"
#include "memory_panel.h"
#include "model_list.h"
#include "node_canvas.h"
#include "number_fields.h"
#include "output_names.h"
#include "parameter_panel.h"
#include "preferences_dialog.h"
#include "queue_panel.h"
#include "result_files.h"
#include "settings.h"
#include "stage_progress_bar.h"
#include "template_workflow.h"
#include "workflow_document.h"
#include "workflow_editor.h"
#include "workflow_files.h"

namespace kiln::ui {

namespace {

QDockWidget* makeDock(const QString& object_name, QWidget* content) {
  auto* dock = new QDockWidget;
  dock->setObjectName(object_name);
  dock->setWidget(content);
  return dock;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : MainWindow(nullptr, parent) {}

MainWindow::MainWindow(std::unique_ptr<app::Settings> settings, QWidget* parent)
    : QMainWindow(parent),
      settings_(settings ? std::move(settings) : std::make_unique<app::Settings>()) {
  setTheme(settings_->value("appearance/theme").toString());  // the stored theme from the start
  log_ = new QPlainTextEdit;
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  // The device from Preferences; one this build cannot use falls back to the CPU.
  try {
    bridge_ = new app::EngineBridge(settings_->device(), this);
  } catch (const kiln::Error& e) {
    bridge_ = new app::EngineBridge(this);
    appendLog(tr("Computing on the CPU: %1").arg(QString::fromUtf8(e.what())));
  }
  bridge_->setModelFolders(settings_->modelFolders());
  language_ = settings_->value("appearance/language").toString();  // applied when Kiln starts

  // The generate panel: the template workflow's exposed parameters, then the batch.
  auto* panel = new QWidget;
  template_label_ = new QLabel;
  template_label_->setWordWrap(true);
  panel_ = new ParameterPanel;
  auto* batch_row = new QFormLayout;
  batch_ = new QSpinBox;
  batch_->setRange(1, 100);
  batch_label_ = new QLabel;
  batch_label_->setBuddy(batch_);
  batch_row->addRow(batch_label_, batch_);
  generate_ = new QPushButton;
  save_ = new QPushButton;
  save_->setEnabled(false);
  stop_ = new QPushButton;
  skip_ = new QPushButton;
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(generate_, 1);
  buttons->addWidget(stop_);
  buttons->addWidget(skip_);
  auto* panel_layout = new QVBoxLayout(panel);
  panel_layout->addWidget(template_label_);
  panel_layout->addWidget(panel_);
  panel_layout->addLayout(batch_row);
  panel_layout->addLayout(buttons);
  panel_layout->addWidget(save_);
  panel_layout->addStretch();

  // The result.
  auto* result = new QWidget;
  auto* result_layout = new QVBoxLayout(result);
  stage_ = new QLabel;
  // Long messages wrap (and are cut at the width) instead of widening the window; the
  // whole text is in the log.
  stage_->setWordWrap(true);
  stage_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  stage_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  progress_ = new StageProgressBar;  // one segment per planned stage, sized by expected time
  view_ = new ImageView;
  parameters_ = new QLabel;
  parameters_->setWordWrap(true);
  parameters_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  parameters_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  result_layout->addWidget(stage_);
  result_layout->addWidget(progress_);
  result_layout->addWidget(view_, 1);
  result_layout->addWidget(parameters_);

  auto* split = new QSplitter;
  split->addWidget(panel);
  split->addWidget(result);
  split->setStretchFactor(1, 1);
  setCentralWidget(split);

  // The docks.
  queue_ = new QueuePanel(bridge_);
  gallery_ = new GalleryPanel;
  memory_ = new MemoryPanel;
  queue_dock_ = makeDock("queue", queue_);
  memory_dock_ = makeDock("memory", memory_);
  gallery_dock_ = makeDock("gallery", gallery_);
  log_dock_ = makeDock("log", log_);
  addDockWidget(Qt::RightDockWidgetArea, queue_dock_);
  addDockWidget(Qt::RightDockWidgetArea, memory_dock_);
  addDockWidget(Qt::BottomDockWidgetArea, gallery_dock_);
  addDockWidget(Qt::BottomDockWidgetArea, log_dock_);
  tabifyDockWidget(gallery_dock_, log_dock_);
  gallery_dock_->raise();

  // Stored memory settings reach the engine at start.
  try {
    bridge_->setOffloadSettings(settings_->offload());
  } catch (const kiln::Error& e) {
    appendLog(tr("Memory settings ignored: %1").arg(QString::fromUtf8(e.what())));
  }
  setStatus([] { return tr("Idle"); });
  view_->setSmoothScaling(settings_->value("appearance/smooth_scaling").toBool());
  resize(1280, 820);
  refreshModels();
  applyDefaultWorkflow();  // sets every text (retranslate) with the template
  // The panel as it was when Kiln last closed.
  const QString remembered = settings_->value("session/workflow").toString();
  if (!remembered.isEmpty()) {
    try {
      const QString source = settings_->value("session/workflow_source").toString();
      setTemplate(kiln::parseWorkflow(remembered.toStdString()),
                  source.isEmpty() ? QStringLiteral("default") : source);
      if (QCheckBox* random = randomSeedCheck())
        random->setChecked(settings_->value("session/random_seed").toBool());
    } catch (const kiln::Error& e) {
      appendLog(tr("The last session's settings cannot be restored: %1")
                    .arg(QString::fromUtf8(e.what())));
    }
  }
  gallery_->setFolder(settings_->outputFolder());
  updateButtons();

  connect(panel_, &ParameterPanel::modelChanged, this, &MainWindow::onModelChanged);
  connect(generate_, &QPushButton::clicked, this, &MainWindow::startGenerate);
  connect(save_, &QPushButton::clicked, this, &MainWindow::saveResult);
  connect(stop_, &QPushButton::clicked, bridge_, &app::EngineBridge::cancel);
  connect(skip_, &QPushButton::clicked, this, [this] {
    const int dropped = bridge_->skip();
    if (dropped >= 0)
      setStatus([dropped] {
        return tr("Skipped: this image finishes, %n later image(s) dropped", "", dropped);
      });
  });
  auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this);
  connect(escape, &QShortcut::activated, bridge_, &app::EngineBridge::cancel);
  for (const auto key : {Qt::Key_Return, Qt::Key_Enter}) {
    auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | key), this);
    connect(shortcut, &QShortcut::activated, this, &MainWindow::startGenerate);
  }
  connect(bridge_, &app::EngineBridge::progress, this, &MainWindow::onProgress);
  connect(bridge_, &app::EngineBridge::planned, progress_, &StageProgressBar::setPlan);
  connect(bridge_, &app::EngineBridge::stageUpdated, progress_, &StageProgressBar::updateStage);
  connect(bridge_, &app::EngineBridge::stageProgress, progress_,
          &StageProgressBar::setStageProgress);
  connect(bridge_, &app::EngineBridge::started, this, [this] {
    progress_->clear();
    setStatus([] { return tr("Starting…"); });
  });
  connect(bridge_, &app::EngineBridge::finished, this, &MainWindow::onFinished);
  connect(bridge_, &app::EngineBridge::failed, this, &MainWindow::onFailed);
  connect(bridge_, &app::EngineBridge::cancelled, this, &MainWindow::onCancelled);
  connect(bridge_, &app::EngineBridge::queueChanged, this, &MainWindow::updateButtons);
  connect(bridge_, &app::EngineBridge::logMessage, this, &MainWindow::appendLog);
  connect(bridge_, &app::EngineBridge::saved, gallery_, &GalleryPanel::addResults);
  connect(bridge_, &app::EngineBridge::memoryChanged, memory_, &MemoryPanel::showMemory);
  connect(gallery_, &GalleryPanel::showResult, this, &MainWindow::showResult);
  connect(gallery_, &GalleryPanel::reuse, this,
          [this](const app::ResultFile& r) { reuseResult(r); });
  // The memory dock follows the engine live while it is shown; the figures are read off
  // the GUI thread.
  auto* memory_timer = new QTimer(this);
  connect(memory_timer, &QTimer::timeout, this, [this] {
    if (memory_dock_->isVisible()) bridge_->requestMemory();
  });
  memory_timer->start(500);
  bridge_->requestMemory();
  // Window shortcuts win over text fields that would take their keys (Ctrl+E, Ctrl+,).
  qApp->installEventFilter(this);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride) {
    const QKeySequence pressed(static_cast<QKeyEvent*>(event)->keyCombination());
    for (const QAction* action : window_shortcuts_)
      if (action->shortcut() == pressed) {
        event->ignore();  // not the text field's: the shortcut map triggers the action
        return true;
      }
  }
  return QMainWindow::eventFilter(watched, event);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  rememberPanel();
  QMainWindow::closeEvent(event);
}

void MainWindow::rememberPanel() {
  settings_->set("session/workflow",
                 QString::fromStdString(kiln::workflowToJson(panel_->workflow())));
  settings_->set("session/workflow_source", template_source_);
  if (const QCheckBox* random = randomSeedCheck())
    settings_->set("session/random_seed", random->isChecked());
}

void MainWindow::setStatus(std::function<QString()> text) {
  status_ = std::move(text);
  stage_->setText(status_());
  stage_->setToolTip(stage_->text());
}

void MainWindow::showProblem(const QString& what, const QString& message) {
  appendLog(tr("%1: %2").arg(what, message));
  // A person's sentence: the message's first line, without a parser's own words.
  QString sentence = message.section('\n', 0, 0).trimmed();
  if (message.contains(QLatin1String("json.exception")) ||
      message.contains(QLatin1String("does not parse")))
    sentence =
        tr("This file is not a workflow: it is not JSON and carries no workflow in its metadata");
  if (sentence.size() > 300) sentence = sentence.left(299) + QChar(0x2026);
  setStatus([what, sentence] { return tr("%1: %2").arg(what, sentence); });
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
  menuBar()->clear();
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open Workflow…"), this, &MainWindow::openTemplateDialog);
  open->setShortcut(QKeySequence::Open);
  file->addAction(tr("Save &Workflow As…"), this, &MainWindow::saveTemplateDialog);
  file->addAction(tr("&Default Workflow"), this, &MainWindow::applyDefaultWorkflow);
  file->addAction(tr("Default &Video Workflow"), this, &MainWindow::applyVideoWorkflow);
  file->addSeparator();
  QAction* save = file->addAction(tr("&Save Image As…"), this, &MainWindow::saveResult);
  save->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* preferences = edit->addAction(tr("&Preferences…"), this, &MainWindow::openPreferences);
  // The platform's Preferences key where it has one (none on Linux desktops), else Ctrl+,.
  preferences->setShortcut(QKeySequence::keyBindings(QKeySequence::Preferences)
                               .value(0, QKeySequence(Qt::CTRL | Qt::Key_Comma)));
  QMenu* view = menuBar()->addMenu(tr("&View"));
  QAction* editor = view->addAction(tr("&Workflow Editor"), QKeySequence(Qt::CTRL | Qt::Key_E),
                                    this, [this] { openWorkflowEditor(); });
  for (QAction* a : {preferences, editor}) a->setShortcutContext(Qt::ApplicationShortcut);
  window_shortcuts_ = {preferences, editor};
  view->addSeparator();
  view->addAction(tr("Zoom &In"), QKeySequence::ZoomIn, this, [this] { view_->zoomBy(1.25); });
  view->addAction(tr("Zoom &Out"), QKeySequence::ZoomOut, this,
                  [this] { view_->zoomBy(1 / 1.25); });
  view->addAction(tr("&Fit to Window"), QKeySequence(Qt::CTRL | Qt::Key_0), view_,
                  &ImageView::fitToWindow);
  view->addAction(tr("&Actual Pixels"), QKeySequence(Qt::CTRL | Qt::Key_1), view_,
                  &ImageView::actualSize);
  QAction* smooth = view->addAction(tr("&Smooth Scaling"));
  smooth->setObjectName("smoothScaling");
  smooth->setCheckable(true);
  smooth->setChecked(view_->smoothScaling());
  smooth->setToolTip(tr("Interpolate enlarged pictures instead of showing their pixels as blocks"));
  connect(smooth, &QAction::toggled, this, [this](bool on) {
    view_->setSmoothScaling(on);
    settings_->set("appearance/smooth_scaling", on);
  });
  view->addSeparator();
  for (QDockWidget* dock : {queue_dock_, gallery_dock_, log_dock_, memory_dock_})
    view->addAction(dock->toggleViewAction());
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&First-Start Assistant…"), this, &MainWindow::openFirstStartAssistant);
  help->addAction(tr("&About Kiln"), this,
                  [this] { QMessageBox::about(this, tr("About Kiln"), aboutText()); });
}

QString MainWindow::aboutText() const {
  return tr("<p><b>Kiln %1</b></p><p>Local image and video generation with diffusion models.</p>")
             .arg(QString::fromStdString(buildInfo().version)) +
         "<pre>" + QString::fromStdString(versionText("kiln")).toHtmlEscaped() + "</pre>";
}

void MainWindow::openFirstStartAssistant() {
  const QString device = settings_->device();
  std::unique_ptr<FirstStartWizard> wizard(FirstStartWizard::detect(*settings_, this));
  if (wizard->exec() != QDialog::Accepted) return;
  try {
    bridge_->setOffloadSettings(settings_->offload());
  } catch (const kiln::Error& e) {
    appendLog(QString::fromUtf8(e.what()));
  }
  refreshModels();
  if (settings_->device() != device)
    appendLog(tr("The device changes to %1 when Kiln starts again").arg(settings_->device()));
}

void MainWindow::retranslate() {
  setWindowTitle(tr("Kiln"));
  batch_label_->setText(tr("Batch count"));
  batch_->setToolTip(tr("Images rendered one after another, seed, seed + 1, …"));
  template_label_->setText(tr("Workflow: %1")
                               .arg(template_source_ == "default" ? tr("text to image (built in)")
                                    : template_source_ == "video" ? tr("text to video (built in)")
                                    : template_source_ == "flux"
                                        ? tr("FLUX.1 text to image (built in)")
                                        : template_source_));
  generate_->setText(tr("Generate"));
  generate_->setToolTip(
      tr("Render with these settings (Ctrl+Enter); while a render runs, queue another"));
  stop_->setText(tr("Interrupt"));
  stop_->setToolTip(tr("Interrupt the render (Esc)"));
  skip_->setText(tr("Skip"));
  skip_->setToolTip(tr("Finish the current image and drop the rest of its batch"));
  save_->setText(tr("Save As…"));
  queue_dock_->setWindowTitle(tr("Queue"));
  gallery_dock_->setWindowTitle(tr("Gallery"));
  log_dock_->setWindowTitle(tr("Log"));
  memory_dock_->setWindowTitle(tr("Memory"));
  if (status_) setStatus(status_);
  buildMenus();
}

void MainWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QMainWindow::changeEvent(event);
}

QComboBox* MainWindow::modelPicker() const {
  return qobject_cast<QComboBox*>(panel_->roleEditor(app::PanelRole::Model));
}
QLineEdit* MainWindow::modelEdit() const {
  QComboBox* picker = modelPicker();
  return picker ? picker->lineEdit() : nullptr;
}
QPlainTextEdit* MainWindow::promptEdit() const {
  return qobject_cast<QPlainTextEdit*>(panel_->roleEditor(app::PanelRole::Prompt));
}
QPlainTextEdit* MainWindow::negativeEdit() const {
  return qobject_cast<QPlainTextEdit*>(panel_->roleEditor(app::PanelRole::Negative));
}
SeedField* MainWindow::seedSpin() const {
  return qobject_cast<SeedField*>(panel_->roleEditor(app::PanelRole::Seed));
}
QCheckBox* MainWindow::randomSeedCheck() const {
  return panel_->randomSeed();
}
QSpinBox* MainWindow::stepsSpin() const {
  return qobject_cast<QSpinBox*>(panel_->roleEditor(app::PanelRole::Steps));
}
QDoubleSpinBox* MainWindow::cfgSpin() const {
  return qobject_cast<QDoubleSpinBox*>(panel_->roleEditor(app::PanelRole::Cfg));
}
QSpinBox* MainWindow::widthSpin() const {
  return qobject_cast<QSpinBox*>(panel_->roleEditor(app::PanelRole::Width));
}
QSpinBox* MainWindow::heightSpin() const {
  return qobject_cast<QSpinBox*>(panel_->roleEditor(app::PanelRole::Height));
}
QComboBox* MainWindow::samplerPicker() const {
  return qobject_cast<QComboBox*>(panel_->roleEditor(app::PanelRole::Sampler));
}

void MainWindow::refreshModels() {
  panel_->setModels(app::findCheckpoints(settings_->modelFolders()));
  bridge_->setModelFolders(settings_->modelFolders());
}

void MainWindow::setTemplate(kiln::Workflow workflow, const QString& source) {
  app::exposeCommonParameters(workflow);
  loading_template_ = true;
  panel_->setWorkflow(workflow);
  loading_template_ = false;
  template_source_ = source;
  retranslate();
}

// The built-in text-to-image workflow with the starter model.
void MainWindow::applyDefaultWorkflow() {
  setTemplate(app::defaultTemplate(), "default");
  // A new picture at every Generate, as other tools do; untick Random to keep a seed.
  if (QCheckBox* random = randomSeedCheck()) random->setChecked(true);
  setStatus([] { return tr("Default workflow"); });
  try {
    (void)kiln::starterModelPath();
  } catch (const kiln::Error&) {
    setStatus([] { return tr("The starter model is missing. Choose a model."); });
  }
}

// The built-in text-to-video workflow: a clip of the video model the artist picks.
void MainWindow::applyVideoWorkflow() {
  setTemplate(app::videoTemplate(), "video");
  if (QCheckBox* random = randomSeedCheck()) random->setChecked(true);
  setStatus([] { return tr("Video workflow: choose a video model (Wan 2.1)"); });
}

bool MainWindow::openTemplate(const QString& path) {
  try {
    app::LoadedWorkflow loaded = app::loadWorkflowFile(path, settings_->modelFolders());
    for (const QString& note : loaded.notes)
      appendLog(tr("%1: %2").arg(QFileInfo(path).fileName(), note));
    const std::vector<kiln::WorkflowProblem> problems =
        kiln::validateWorkflow(loaded.workflow, kiln::builtinNodeSchemas());
    if (!problems.empty()) {
      const QString text = QString::fromStdString(kiln::describeProblems(problems));
      showProblem(tr("%1 cannot run").arg(QFileInfo(path).fileName()), text);
      return false;
    }
    setTemplate(std::move(loaded.workflow), QFileInfo(path).fileName());
    const QString name = QFileInfo(path).fileName();
    setStatus([name] { return tr("Opened %1").arg(name); });
    return true;
  } catch (const kiln::Error& e) {
    showProblem(tr("Cannot open %1").arg(QFileInfo(path).fileName()), QString::fromUtf8(e.what()));
    return false;
  } catch (const std::bad_alloc&) {  // a file no memory holds: said, never a crash
    showProblem(tr("Cannot open %1").arg(QFileInfo(path).fileName()),
                tr("there is not enough memory to read it"));
    return false;
  } catch (const std::exception& e) {
    showProblem(tr("Cannot open %1").arg(QFileInfo(path).fileName()), QString::fromUtf8(e.what()));
    return false;
  }
}

void MainWindow::openTemplateDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open workflow"), settings_->outputFolder(),
                                   tr("Workflows and pictures (*.json *.png)"));
  if (!path.isEmpty()) openTemplate(path);
}

void MainWindow::saveTemplateDialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save workflow"), "workflow.json",
                                                    tr("Kiln workflows (*.json)"));
  if (path.isEmpty()) return;
  QSaveFile file(path);
  const std::string text = kiln::workflowToJson(panel_->workflow());
  if (!file.open(QIODevice::WriteOnly) ||
      file.write(text.data(), static_cast<qint64>(text.size())) < 0 || !file.commit())
    QMessageBox::warning(this, tr("Saving failed"),
                         tr("Cannot write %1: %2").arg(path, file.errorString()));
}

WorkflowEditor* MainWindow::openWorkflowEditor() {
  if (!editor_) {
    editor_ = new WorkflowEditor(bridge_, *settings_, this);
    editor_->setWindowFlag(Qt::Window);
    // Opened in the middle of the screen Kiln is on, whole (its size fits the screen).
    QRect frame(QPoint(), editor_->size());
    frame.moveCenter(screen()->availableGeometry().center());
    editor_->move(frame.topLeft());
    editor_->document()->setWorkflow(panel_->workflow());
    connect(editor_, &WorkflowEditor::useAsTemplate, this, [this](const kiln::Workflow& w) {
      setTemplate(w, tr("workflow editor"));
      raise();
      activateWindow();
    });
  }
  editor_->show();
  editor_->canvas()->frameAll();
  editor_->raise();
  return editor_;
}

// A newly picked model brings its own picture size.
void MainWindow::onModelChanged(const QString& path) {
  if (loading_template_) return;
  QString file = path;
  if (file.isEmpty()) {
    try {
      file = QString::fromStdString(kiln::starterModelPath());
    } catch (const kiln::Error&) {
      return;
    }
  }
  // The built-in templates follow the model: FLUX.1's (guidance, no negative prompt) for a
  // FLUX model, the default one for the others; the prompt and seed stay.
  const bool builtin = template_source_ == "default" || template_source_ == "flux";
  if (builtin && !path.isEmpty()) {
    const bool flux = kiln::modelFamily(file.toStdString()) == "flux1";
    if (flux != (template_source_ == "flux")) {
      // After the editor that changed has returned: the new template replaces the editors.
      const kiln::RenderParams kept = app::roleParams(panel_->workflow(), 0);
      QTimer::singleShot(0, this, [this, flux, kept, path, file] {
        setTemplate(flux ? app::fluxTemplate(file.toStdString()) : app::defaultTemplate(),
                    flux ? "flux" : "default");
        loading_template_ = true;
        panel_->setRoleValue(app::PanelRole::Model, path.toStdString());
        panel_->setRoleValue(app::PanelRole::Prompt, kept.prompt.text);
        panel_->setRoleValue(app::PanelRole::Seed, kept.sampling.seed);
        loading_template_ = false;
        setStatus([flux] { return flux ? tr("FLUX.1 workflow") : tr("Default workflow"); });
        if (!flux) onModelChanged(path);  // the model's native size
      });
      return;
    }
  }
  const QSize size = app::nativeSize(file);
  if (!size.isValid()) return;
  panel_->setRoleValue(app::PanelRole::Width, int64_t{size.width()});
  panel_->setRoleValue(app::PanelRole::Height, int64_t{size.height()});
}

QString MainWindow::statusText() const {
  return stage_->text();
}

void MainWindow::appendLog(const QString& line) {
  log_->appendPlainText(QDateTime::currentDateTime().toString("HH:mm:ss  ") + line);
}

void MainWindow::startGenerate() {
  panel_->drawRandomSeeds();
  rememberPanel();
  app::GenerateRequest r;
  auto workflow = std::make_shared<kiln::Workflow>(panel_->workflow());
  app::applyNodeDefaults(*workflow,
                         {kiln::vaeTilingName(settings_->vaeTiling()), settings_->tileSize(),
                          settings_->tileOverlap(), kiln::loraModeName(settings_->loraMode())});
  r.workflow = std::move(workflow);
  r.batch = batch_->value();
  r.output_folder = settings_->outputFolder();
  r.output_name = settings_->value("general/file_name_template").toString();
  bridge_->enqueue(r);
  updateButtons();
}

void MainWindow::updateButtons() {
  const bool running = bridge_->running();
  stop_->setEnabled(running);
  skip_->setEnabled(running);
  // Interrupt is what matters while a render runs.
  stop_->setDefault(running);
  QFont font = stop_->font();
  font.setBold(running);
  stop_->setFont(font);
}

void MainWindow::saveResult() {
  if (!save_->isEnabled()) return;
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save image"), "kiln.png", tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  const QString error = bridge_->saveLast(path);
  if (!error.isEmpty()) QMessageBox::warning(this, tr("Saving failed"), error);
}

bool MainWindow::showPicture(const QString& path) {
  QImageReader reader(path);
  const QImage image = reader.read();
  if (image.isNull()) {
    showProblem(tr("Cannot show %1").arg(QFileInfo(path).fileName()), reader.errorString());
    return false;
  }
  view_->setImage(image);
  parameters_->setText(app::readPngText(path).value("parameters"));
  return true;
}

void MainWindow::showResult(const QString& path) {
  if (!showPicture(path)) return;
  const QString name = QFileInfo(path).fileName();
  setStatus([name] { return name; });
}

bool MainWindow::reuseResult(const app::ResultFile& result) {
  const QString name = QFileInfo(result.path).fileName();
  if (!result.workflow.isEmpty()) {
    try {
      app::LoadedWorkflow loaded =
          app::loadWorkflowText(result.workflow.toStdString(), settings_->modelFolders());
      setTemplate(std::move(loaded.workflow), name);
      if (QCheckBox* random = randomSeedCheck())
        random->setChecked(false);  // the seed it was made with
      showPicture(result.path);
      setStatus([name] { return tr("Workflow of %1 reopened").arg(name); });
      return true;
    } catch (const kiln::Error& e) {
      appendLog(tr("The workflow in %1 cannot be read (%2); using its recorded settings")
                    .arg(name, QString::fromUtf8(e.what())));
    }
  }
  const std::optional<app::RecordedSettings> s = app::parseParametersText(result.parameters);
  if (!s) {
    setStatus([name] { return tr("%1 records no settings to reuse").arg(name); });
    return false;
  }
  // The model by its recorded name, when the picker knows it (first: it sets the size).
  if (QComboBox* picker = modelPicker())
    for (int i = 0; i < picker->count(); ++i) {
      const QString path = picker->itemData(i).toString();
      if ((!path.isEmpty() && QFileInfo(path).completeBaseName() == s->model) ||
          picker->itemText(i) == s->model) {
        picker->setCurrentIndex(i);
        break;
      }
    }
  panel_->setRoleValue(app::PanelRole::Prompt, s->prompt.toStdString());
  panel_->setRoleValue(app::PanelRole::Negative, s->negative_prompt.toStdString());
  if (QCheckBox* random = randomSeedCheck()) random->setChecked(false);  // the recorded seed, kept
  panel_->setRoleValue(app::PanelRole::Seed, int64_t{s->seed});
  panel_->setRoleValue(app::PanelRole::Steps, int64_t{s->steps});
  panel_->setRoleValue(app::PanelRole::Cfg, s->cfg_scale);
  if (s->width > 0 && s->height > 0) {
    panel_->setRoleValue(app::PanelRole::Width, int64_t{s->width});
    panel_->setRoleValue(app::PanelRole::Height, int64_t{s->height});
  }
  showPicture(result.path);
  setStatus([name] { return tr("Settings of %1 reused").arg(name); });
  return true;
}

void MainWindow::openPreferences() {
  PreferencesDialog dialog(*settings_, bridge_, this);
  // The memory map's working memory is for the size the Generate panel holds.
  const auto* frames = qobject_cast<QSpinBox*>(panel_->roleEditor(app::PanelRole::Frames));
  dialog.setPlanSize(widthSpin() ? widthSpin()->value() : 0,
                     heightSpin() ? heightSpin()->value() : 0, frames ? frames->value() : 0);
  connect(&dialog, &PreferencesDialog::applied, this, &MainWindow::applySettings);
  dialog.exec();
}

void MainWindow::applySettings() {
  setTheme(settings_->value("appearance/theme").toString());
  const QString language = settings_->value("appearance/language").toString();
  // Only a changed language is switched (and a missing translation said once).
  if (language != language_) {
    language_ = language;
    if (!setLanguage(language))
      appendLog(tr("No translation for '%1': the interface stays in English").arg(language));
  }
  if (gallery_->folder() != settings_->outputFolder())
    gallery_->setFolder(settings_->outputFolder());
  refreshModels();
}

void MainWindow::onProgress(const QString& stage, qint64 done, qint64 total, const QString& unit,
                            double fraction, double eta_seconds, int image, int images) {
  QString text = total > 1
                     ? tr("%1 %2").arg(stageText(stage), progressAmountText(done, total, unit))
                     : stageText(stage);
  if (images > 1) text = tr("Image %1 of %2 · %3").arg(image + 1).arg(images).arg(text);
  text += tr(" · %1%").arg(std::lround(fraction * 100));
  // Stages never timed on this machine (a model's first render) give no time yet.
  if (eta_seconds < 0)
    text += tr(" · estimating the time left");
  else if (eta_seconds >= 0.5)
    text += tr(" · about %1 s left").arg(std::lround(eta_seconds));
  const int waiting = bridge_->waiting();
  if (waiting > 0) text += tr(" · %1 waiting").arg(waiting);
  status_ = nullptr;  // the next progress event says it again, in the language of the moment
  stage_->setText(text);
  stage_->setToolTip(text);
}

void MainWindow::onFinished(const QImage& image, const QString& parameters,
                            const QStringList& notices) {
  view_->setImage(image);
  parameters_->setText(parameters);
  if (notices.isEmpty())
    setStatus([] { return tr("Done"); });
  else
    setStatus([notices] { return tr("Done. Note: %1").arg(notices.join("; ")); });
  save_->setEnabled(true);
  progress_->finish();
  has_result_ = true;
  updateButtons();
}

void MainWindow::onFailed(const QString& message) {
  showProblem(tr("Failed"), message);
  progress_->clear();
  updateButtons();
}

void MainWindow::onCancelled() {
  setStatus([] { return tr("Stopped"); });
  progress_->clear();
  updateButtons();
}

}  // namespace kiln::ui
