#include "main_window.h"

#include <QAction>
#include <QCheckBox>
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
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRandomGenerator>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "appearance.h"
#include "engine_bridge.h"
#include "gallery_panel.h"
#include "image_view.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "kiln/workflow.h"
#include "memory_panel.h"
#include "model_list.h"
#include "output_names.h"
#include "preferences_dialog.h"
#include "queue_panel.h"
#include "result_files.h"
#include "settings.h"
#include "stage_progress_bar.h"

namespace kiln::ui {

namespace {

// The engine's samplers, as the Sampler node lists them.
QStringList engineSamplers() {
  for (const kiln::NodeSchema& s : kiln::builtinNodeSchemas())
    if (s.type == "Sampler")
      if (const kiln::ParamSpec* p = s.param("sampler_name")) {
        QStringList names;
        for (const auto& c : p->choices) names << QString::fromStdString(c);
        return names;
      }
  return {};
}

QDockWidget* makeDock(const QString& object_name, QWidget* content) {
  auto* dock = new QDockWidget;
  dock->setObjectName(object_name);
  dock->setWidget(content);
  return dock;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : MainWindow(nullptr, parent) {}

MainWindow::MainWindow(std::unique_ptr<app::Settings> settings, QWidget* parent)
    : QMainWindow(parent), settings_(settings ? std::move(settings) : std::make_unique<app::Settings>()) {
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

  // The generate panel.
  auto* panel = new QWidget;
  auto* form = new QFormLayout;
  const auto addRow = [&](QWidget* field) {
    auto* label = new QLabel;
    label->setBuddy(field);
    form->addRow(label, field);
    form_labels_.push_back(label);
  };
  const auto addRowLayout = [&](QLayout* field) {
    auto* label = new QLabel;
    form->addRow(label, field);
    form_labels_.push_back(label);
  };
  auto* model_row = new QHBoxLayout;
  model_ = new QComboBox;
  model_->setEditable(true);
  model_->setInsertPolicy(QComboBox::NoInsert);
  model_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  model_->setMinimumContentsLength(24);
  browse_ = new QPushButton;
  model_row->addWidget(model_, 1);
  model_row->addWidget(browse_);
  addRowLayout(model_row);
  prompt_ = new QPlainTextEdit;
  negative_ = new QPlainTextEdit;
  prompt_->setMaximumHeight(90);
  negative_->setMaximumHeight(60);
  addRow(prompt_);
  addRow(negative_);
  sampler_ = new QComboBox;
  sampler_->addItems(engineSamplers());
  addRow(sampler_);
  auto* seed_row = new QHBoxLayout;
  seed_ = new QSpinBox;
  seed_->setRange(0, 2147483647);
  random_seed_ = new QCheckBox;
  seed_row->addWidget(seed_, 1);
  seed_row->addWidget(random_seed_);
  addRowLayout(seed_row);
  steps_ = new QSpinBox;
  steps_->setRange(1, 1000);
  steps_->setValue(20);
  cfg_ = new QDoubleSpinBox;
  cfg_->setRange(0.0, 100.0);
  cfg_->setSingleStep(0.5);
  cfg_->setValue(7.0);
  width_ = new QSpinBox;
  height_ = new QSpinBox;
  for (QSpinBox* s : {width_, height_}) {
    s->setRange(0, 4096);
    s->setSingleStep(8);
  }
  batch_ = new QSpinBox;
  batch_->setRange(1, 100);
  for (QWidget* w : std::initializer_list<QWidget*>{steps_, cfg_, width_, height_, batch_}) addRow(w);
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
  panel_layout->addLayout(form);
  panel_layout->addLayout(buttons);
  panel_layout->addWidget(save_);
  panel_layout->addStretch();

  // The result.
  auto* result = new QWidget;
  auto* result_layout = new QVBoxLayout(result);
  stage_ = new QLabel;
  progress_ = new StageProgressBar;  // one segment per planned stage, sized by expected time
  view_ = new ImageView;
  parameters_ = new QLabel;
  parameters_->setWordWrap(true);
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
  retranslate();
  stage_->setText(tr("Idle"));
  resize(1280, 820);
  refreshModels();
  applyDefaultWorkflow();
  gallery_->setFolder(settings_->outputFolder());
  updateButtons();

  connect(browse_, &QPushButton::clicked, this, &MainWindow::browseModel);
  connect(generate_, &QPushButton::clicked, this, &MainWindow::startGenerate);
  connect(save_, &QPushButton::clicked, this, &MainWindow::saveResult);
  connect(stop_, &QPushButton::clicked, bridge_, &app::EngineBridge::cancel);
  connect(skip_, &QPushButton::clicked, bridge_, &app::EngineBridge::skip);
  connect(random_seed_, &QCheckBox::toggled, seed_, &QWidget::setDisabled);
  auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this);
  connect(escape, &QShortcut::activated, bridge_, &app::EngineBridge::cancel);
  for (const auto key : {Qt::Key_Return, Qt::Key_Enter}) {
    auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | key), this);
    connect(shortcut, &QShortcut::activated, this, &MainWindow::startGenerate);
  }
  connect(bridge_, &app::EngineBridge::progress, this, &MainWindow::onProgress);
  connect(bridge_, &app::EngineBridge::planned, progress_, &StageProgressBar::setPlan);
  connect(bridge_, &app::EngineBridge::stageUpdated, progress_, &StageProgressBar::updateStage);
  connect(bridge_, &app::EngineBridge::stageProgress, progress_, &StageProgressBar::setStageProgress);
  connect(bridge_, &app::EngineBridge::started, this, [this] {
    progress_->clear();
    stage_->setText(tr("Starting…"));
  });
  connect(bridge_, &app::EngineBridge::finished, this, &MainWindow::onFinished);
  connect(bridge_, &app::EngineBridge::failed, this, &MainWindow::onFailed);
  connect(bridge_, &app::EngineBridge::cancelled, this, &MainWindow::onCancelled);
  connect(bridge_, &app::EngineBridge::queueChanged, this, &MainWindow::updateButtons);
  connect(bridge_, &app::EngineBridge::logMessage, this, &MainWindow::appendLog);
  connect(bridge_, &app::EngineBridge::saved, gallery_, &GalleryPanel::addResults);
  connect(bridge_, &app::EngineBridge::memoryChanged, memory_, &MemoryPanel::showMemory);
  connect(gallery_, &GalleryPanel::showResult, this, &MainWindow::showResult);
  connect(gallery_, &GalleryPanel::reuse, this, [this](const app::ResultFile& r) { reuseResult(r); });
  // The memory dock follows the engine live while it is shown; the figures are read off
  // the GUI thread.
  auto* memory_timer = new QTimer(this);
  connect(memory_timer, &QTimer::timeout, this, [this] {
    if (memory_dock_->isVisible()) bridge_->requestMemory();
  });
  memory_timer->start(500);
  bridge_->requestMemory();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
  menuBar()->clear();
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* save = file->addAction(tr("&Save Image As…"), this, &MainWindow::saveResult);
  save->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* preferences = edit->addAction(tr("&Preferences…"), this, &MainWindow::openPreferences);
  preferences->setShortcut(QKeySequence::Preferences);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("Zoom &In"), QKeySequence::ZoomIn, this, [this] { view_->zoomBy(1.25); });
  view->addAction(tr("Zoom &Out"), QKeySequence::ZoomOut, this, [this] { view_->zoomBy(1 / 1.25); });
  view->addAction(tr("&Fit to Window"), QKeySequence(Qt::CTRL | Qt::Key_0), view_, &ImageView::fitToWindow);
  view->addAction(tr("&Actual Pixels"), QKeySequence(Qt::CTRL | Qt::Key_1), view_, &ImageView::actualSize);
  view->addSeparator();
  for (QDockWidget* dock : {queue_dock_, gallery_dock_, log_dock_, memory_dock_}) view->addAction(dock->toggleViewAction());
}

void MainWindow::retranslate() {
  setWindowTitle(tr("Kiln"));
  const QStringList labels{tr("Model"), tr("Prompt"), tr("Negative prompt"), tr("Sampler"), tr("Seed"),
                           tr("Steps"), tr("CFG scale"), tr("Width"), tr("Height"), tr("Batch count")};
  for (qsizetype i = 0; i < form_labels_.size() && i < labels.size(); ++i) form_labels_[i]->setText(labels[i]);
  model_->lineEdit()->setPlaceholderText(tr("A .safetensors checkpoint or a diffusers folder"));
  model_->setToolTip(tr("Checkpoints found in the model folders of Preferences; type or browse for any other"));
  browse_->setText(tr("Browse…"));
  prompt_->setPlaceholderText(tr("What to render"));
  negative_->setPlaceholderText(tr("What to avoid"));
  random_seed_->setText(tr("Random"));
  random_seed_->setToolTip(tr("A new seed for every Generate; untick to keep the seed"));
  for (QSpinBox* s : {width_, height_}) {
    s->setSpecialValueText(tr("Model's native size"));
    s->setToolTip(tr("0: the size the model was trained at"));
  }
  batch_->setToolTip(tr("Images rendered one after another, seed, seed + 1, …"));
  generate_->setText(tr("Generate"));
  generate_->setToolTip(tr("Render with these settings (Ctrl+Enter); while a render runs, queue another"));
  stop_->setText(tr("Interrupt"));
  stop_->setToolTip(tr("Interrupt the render (Esc)"));
  skip_->setText(tr("Skip"));
  skip_->setToolTip(tr("Finish the current image and drop the rest of its batch"));
  save_->setText(tr("Save As…"));
  queue_dock_->setWindowTitle(tr("Queue"));
  gallery_dock_->setWindowTitle(tr("Gallery"));
  log_dock_->setWindowTitle(tr("Log"));
  memory_dock_->setWindowTitle(tr("Memory"));
  buildMenus();
}

void MainWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QMainWindow::changeEvent(event);
}

QLineEdit* MainWindow::modelEdit() const { return model_->lineEdit(); }

void MainWindow::refreshModels() {
  const QString current = model_->currentText();
  QStringList roots = settings_->modelFolders();
  const QList<app::ModelChoice> found = app::findCheckpoints(roots);
  const QSignalBlocker block(model_);
  model_->clear();
  try {
    model_->addItem(tr("Kiln starter model"), QString::fromStdString(kiln::starterModelPath()));
  } catch (const kiln::Error&) {
    // Not installed: the picker offers the model folders' checkpoints only.
  }
  for (const app::ModelChoice& m : found) model_->addItem(m.name, m.path);
  for (int i = 0; i < model_->count(); ++i) model_->setItemData(i, model_->itemData(i), Qt::ToolTipRole);
  model_->setEditText(current);
}

// The default workflow, with the starter model chosen when it is installed.
void MainWindow::applyDefaultWorkflow() {
  const kiln::RenderParams d = kiln::defaultRenderParams();
  if (model_->count() > 0 && model_->itemText(0) == tr("Kiln starter model")) {
    model_->setCurrentIndex(0);
  } else {
    stage_->setText(tr("The starter model is missing. Choose a model."));
  }
  prompt_->setPlainText(QString::fromStdString(d.prompt));
  seed_->setValue(static_cast<int>(d.seed));
  steps_->setValue(d.steps);
  cfg_->setValue(d.cfg_scale);
  width_->setValue(d.width);
  height_->setValue(d.height);
}

QString MainWindow::statusText() const { return stage_->text(); }

void MainWindow::appendLog(const QString& line) {
  log_->appendPlainText(QDateTime::currentDateTime().toString("HH:mm:ss  ") + line);
}

void MainWindow::browseModel() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), QString(),
                                                    tr("Checkpoints (*.safetensors)"));
  if (!path.isEmpty()) model_->setEditText(path);
}

void MainWindow::startGenerate() {
  // A picked entry shows its name; its path is in the item data.
  QString model = model_->currentText().trimmed();
  const int picked = model_->findText(model);
  if (picked >= 0) model = model_->itemData(picked).toString();
  if (model.isEmpty()) {
    stage_->setText(tr("Choose a model first: a .safetensors checkpoint or a diffusers folder."));
    return;
  }
  if ((width_->value() == 0) != (height_->value() == 0)) {
    stage_->setText(tr("Set both width and height, or both to the model's native size."));
    return;
  }
  if (random_seed_->isChecked()) seed_->setValue(static_cast<int>(QRandomGenerator::global()->bounded(2147483647)));
  app::GenerateRequest r;
  kiln::RenderParams& p = r.params;
  p.model_path = model.toStdString();
  p.prompt = prompt_->toPlainText().toStdString();
  p.negative_prompt = negative_->toPlainText().toStdString();
  p.seed = seed_->value();
  p.steps = steps_->value();
  p.cfg_scale = cfg_->value();
  p.width = width_->value();
  p.height = height_->value();
  p.vae_tiling = settings_->vaeTiling();
  p.tile_size = settings_->tileSize();
  p.tile_overlap = settings_->tileOverlap();
  p.lora_mode = settings_->loraMode();
  r.batch = batch_->value();
  r.output_folder = settings_->outputFolder();
  r.output_name = app::expandNameTemplate(settings_->value("general/file_name_template").toString(), p,
                                          QDateTime::currentDateTime());
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

void MainWindow::showResult(const QString& path) {
  QImageReader reader(path);
  const QImage image = reader.read();
  if (image.isNull()) {
    stage_->setText(tr("Cannot show %1: %2").arg(path, reader.errorString()));
    return;
  }
  view_->setImage(image);
  parameters_->setText(app::readPngText(path).value("parameters"));
  stage_->setText(QFileInfo(path).fileName());
}

bool MainWindow::reuseResult(const app::ResultFile& result) {
  const std::optional<app::RecordedSettings> s = app::parseParametersText(result.parameters);
  if (!s) {
    stage_->setText(tr("%1 records no settings to reuse").arg(QFileInfo(result.path).fileName()));
    return false;
  }
  prompt_->setPlainText(s->prompt);
  negative_->setPlainText(s->negative_prompt);
  random_seed_->setChecked(false);  // the recorded seed, kept
  seed_->setValue(static_cast<int>(s->seed));
  steps_->setValue(s->steps);
  cfg_->setValue(s->cfg_scale);
  width_->setValue(s->width);
  height_->setValue(s->height);
  // The model by its recorded name, when the picker knows it.
  for (int i = 0; i < model_->count(); ++i) {
    const QString path = model_->itemData(i).toString();
    if (QFileInfo(path).completeBaseName() == s->model || model_->itemText(i) == s->model) {
      model_->setCurrentIndex(i);
      break;
    }
  }
  stage_->setText(tr("Settings of %1 reused").arg(QFileInfo(result.path).fileName()));
  return true;
}

void MainWindow::openPreferences() {
  PreferencesDialog dialog(*settings_, bridge_, this);
  connect(&dialog, &PreferencesDialog::applied, this, &MainWindow::applySettings);
  dialog.exec();
}

void MainWindow::applySettings() {
  setTheme(settings_->value("appearance/theme").toString());
  const QString language = settings_->value("appearance/language").toString();
  if (!setLanguage(language)) appendLog(tr("No translation for '%1': the interface stays in English").arg(language));
  if (gallery_->folder() != settings_->outputFolder()) gallery_->setFolder(settings_->outputFolder());
  refreshModels();
}

void MainWindow::onProgress(const QString& stage, qint64 done, qint64 total, const QString& unit,
                            double fraction, double eta_seconds) {
  QString text = total > 1 ? tr("%1 %2/%3 %4").arg(stage).arg(done).arg(total).arg(unit) : stage;
  text += tr(" · %1%").arg(std::lround(fraction * 100));
  if (eta_seconds >= 0.5) text += tr(" · about %1 s left").arg(std::lround(eta_seconds));
  const int waiting = static_cast<int>(bridge_->queue().size()) - 1;
  if (waiting > 0) text += tr(" · %1 waiting").arg(waiting);
  stage_->setText(text);
}

void MainWindow::onFinished(const QImage& image, const QString& parameters,
                            const QStringList& notices) {
  view_->setImage(image);
  parameters_->setText(parameters);
  stage_->setText(notices.isEmpty() ? tr("Done") : tr("Done. Note: %1").arg(notices.join("; ")));
  save_->setEnabled(true);
  progress_->finish();
  has_result_ = true;
  updateButtons();
}

void MainWindow::onFailed(const QString& message) {
  stage_->setText(tr("Failed: %1").arg(message));
  progress_->clear();
  updateButtons();
}

void MainWindow::onCancelled() {
  stage_->setText(tr("Stopped"));
  progress_->clear();
  updateButtons();
}

}  // namespace kiln::ui
