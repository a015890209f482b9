#include "main_window.h"

#include "preferences_dialog.h"
#include "settings.h"
#include "stage_progress_bar.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>

#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QVBoxLayout>

#include <cmath>

#include "engine_bridge.h"
#include "kiln/error.h"
#include "kiln/render.h"

namespace kiln::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), bridge_(new app::EngineBridge(this)) {
  setWindowTitle(tr("Kiln"));
  auto* panel = new QWidget;
  auto* form = new QFormLayout;
  auto* model_row = new QHBoxLayout;
  model_ = new QLineEdit;
  model_->setPlaceholderText(tr("A .safetensors checkpoint or a diffusers folder"));
  auto* browse = new QPushButton(tr("Browse…"));
  model_row->addWidget(model_);
  model_row->addWidget(browse);
  form->addRow(tr("Model"), model_row);
  prompt_ = new QPlainTextEdit;
  prompt_->setPlaceholderText(tr("What to render"));
  negative_ = new QPlainTextEdit;
  negative_->setPlaceholderText(tr("What to avoid"));
  prompt_->setMaximumHeight(90);
  negative_->setMaximumHeight(60);
  form->addRow(tr("Prompt"), prompt_);
  form->addRow(tr("Negative prompt"), negative_);
  seed_ = new QSpinBox;
  seed_->setRange(0, 2147483647);
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
    s->setSpecialValueText(tr("Model's native size"));
    s->setToolTip(tr("0: the size the model was trained at"));
  }
  form->addRow(tr("Seed"), seed_);
  form->addRow(tr("Steps"), steps_);
  form->addRow(tr("CFG scale"), cfg_);
  form->addRow(tr("Width"), width_);
  form->addRow(tr("Height"), height_);
  generate_ = new QPushButton(tr("Generate"));
  generate_->setToolTip(tr("Render with these settings (Ctrl+Enter)"));
  save_ = new QPushButton(tr("Save As…"));
  save_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  stop_ = new QPushButton(tr("Stop"));
  stop_->setToolTip(tr("Interrupt the render (Esc)"));
  stop_->setEnabled(false);
  buttons->addWidget(generate_);
  buttons->addWidget(stop_);
  buttons->addWidget(save_);
  auto* panel_layout = new QVBoxLayout(panel);
  panel_layout->addLayout(form);
  panel_layout->addLayout(buttons);
  panel_layout->addStretch();

  auto* view = new QWidget;
  auto* view_layout = new QVBoxLayout(view);
  stage_ = new QLabel(tr("Idle"));
  progress_ = new StageProgressBar;  // one segment per planned stage, sized by expected time
  image_ = new QLabel;
  image_->setAlignment(Qt::AlignCenter);
  image_->setMinimumSize(256, 256);
  auto* scroll = new QScrollArea;
  scroll->setWidget(image_);
  scroll->setWidgetResizable(true);
  parameters_ = new QLabel;
  parameters_->setWordWrap(true);
  parameters_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  view_layout->addWidget(stage_);
  view_layout->addWidget(progress_);
  view_layout->addWidget(scroll, 1);
  view_layout->addWidget(parameters_);

  auto* split = new QSplitter;
  split->addWidget(panel);
  split->addWidget(view);
  split->setStretchFactor(1, 1);
  setCentralWidget(split);

  // Preferences: the stored memory settings reach the engine at start and on Apply.
  settings_ = std::make_unique<app::Settings>();
  try {
    bridge_->setOffloadSettings(settings_->offload());
  } catch (const kiln::Error& e) {
    stage_->setText(tr("Memory settings ignored: %1").arg(e.what()));
  }
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* preferences = edit->addAction(tr("&Preferences…"));
  preferences->setShortcut(QKeySequence::Preferences);
  connect(preferences, &QAction::triggered, this, [this] {
    PreferencesDialog dialog(*settings_, bridge_, this);
    dialog.exec();
  });
  resize(1100, 700);

  applyDefaultWorkflow();

  connect(browse, &QPushButton::clicked, this, &MainWindow::browseModel);
  connect(generate_, &QPushButton::clicked, this, &MainWindow::startGenerate);
  connect(save_, &QPushButton::clicked, this, &MainWindow::saveResult);
  connect(stop_, &QPushButton::clicked, bridge_, &app::EngineBridge::cancel);
  auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this);
  connect(escape, &QShortcut::activated, bridge_, &app::EngineBridge::cancel);
  auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
  connect(shortcut, &QShortcut::activated, this, &MainWindow::startGenerate);
  connect(bridge_, &app::EngineBridge::progress, this, &MainWindow::onProgress);
  connect(bridge_, &app::EngineBridge::planned, progress_, &StageProgressBar::setPlan);
  connect(bridge_, &app::EngineBridge::stageUpdated, progress_, &StageProgressBar::updateStage);
  connect(bridge_, &app::EngineBridge::stageProgress, progress_, &StageProgressBar::setStageProgress);
  connect(bridge_, &app::EngineBridge::finished, this, &MainWindow::onFinished);
  connect(bridge_, &app::EngineBridge::failed, this, &MainWindow::onFailed);
  connect(bridge_, &app::EngineBridge::cancelled, this, &MainWindow::onCancelled);
}

MainWindow::~MainWindow() = default;

// The default workflow, with the starter model chosen when it is installed.
void MainWindow::applyDefaultWorkflow() {
  const kiln::RenderParams d = kiln::defaultRenderParams();
  try {
    model_->setText(QString::fromStdString(kiln::starterModelPath()));
  } catch (const kiln::Error& e) {
    stage_->setText(tr("The starter model is missing (%1). Choose a model.").arg(e.what()));
  }
  prompt_->setPlainText(QString::fromStdString(d.prompt));
  seed_->setValue(static_cast<int>(d.seed));
  steps_->setValue(d.steps);
  cfg_->setValue(d.cfg_scale);
  width_->setValue(d.width);
  height_->setValue(d.height);
}

QString MainWindow::statusText() const {
  return stage_->text();
}

void MainWindow::browseModel() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), QString(),
                                                    tr("Checkpoints (*.safetensors)"));
  if (!path.isEmpty()) model_->setText(path);
}

void MainWindow::startGenerate() {
  if (bridge_->busy()) return;
  if (model_->text().trimmed().isEmpty()) {
    stage_->setText(tr("Choose a model first: a .safetensors checkpoint or a diffusers folder."));
    return;
  }
  kiln::RenderParams p;
  p.model_path = model_->text().trimmed().toStdString();
  p.prompt = prompt_->toPlainText().toStdString();
  p.negative_prompt = negative_->toPlainText().toStdString();
  p.seed = seed_->value();
  p.steps = steps_->value();
  p.cfg_scale = cfg_->value();
  p.width = width_->value();
  p.height = height_->value();
  if ((p.width == 0) != (p.height == 0)) {
    stage_->setText(tr("Set both width and height, or both to the model's native size."));
    return;
  }
  generate_->setEnabled(false);
  stop_->setEnabled(true);
  progress_->clear();
  stage_->setText(tr("Starting…"));
  bridge_->generate(p);
}

void MainWindow::saveResult() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save image"), "kiln.png", tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  const QString error = bridge_->saveLast(path);
  if (!error.isEmpty()) QMessageBox::warning(this, tr("Saving failed"), error);
}

void MainWindow::onProgress(const QString& stage, qint64 done, qint64 total, const QString& unit,
                            double fraction, double eta_seconds) {
  QString text = total > 1 ? tr("%1 %2/%3 %4").arg(stage).arg(done).arg(total).arg(unit) : stage;
  text += tr(" · %1%").arg(std::lround(fraction * 100));
  if (eta_seconds >= 0.5) text += tr(" · about %1 s left").arg(std::lround(eta_seconds));
  stage_->setText(text);
}

void MainWindow::onFinished(const QImage& image, const QString& parameters,
                            const QStringList& notices) {
  image_->setPixmap(QPixmap::fromImage(image));
  parameters_->setText(parameters);
  stage_->setText(notices.isEmpty() ? tr("Done") : tr("Done. Note: %1").arg(notices.join("; ")));
  generate_->setEnabled(true);
  stop_->setEnabled(false);
  save_->setEnabled(true);
  progress_->finish();
  has_result_ = true;
}

void MainWindow::onFailed(const QString& message) {
  stage_->setText(tr("Failed: %1").arg(message));
  progress_->clear();
  generate_->setEnabled(true);
  stop_->setEnabled(false);
}

void MainWindow::onCancelled() {
  stage_->setText(tr("Stopped"));
  progress_->clear();
  generate_->setEnabled(true);
  stop_->setEnabled(false);
}

}  // namespace kiln::ui
