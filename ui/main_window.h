// Kiln's main window: a generate panel (model, prompts, settings), a stage-aware progress
// line and the result view. Rendering goes through app/'s EngineBridge.
#pragma once

#include <QMainWindow>

#include <memory>

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace kiln::app {
class EngineBridge;
class Settings;
}

namespace kiln::ui {

class StageProgressBar;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // For tests and automation: the controls of the generate panel.
  QLineEdit* modelEdit() const { return model_; }
  QPlainTextEdit* promptEdit() const { return prompt_; }
  QSpinBox* stepsSpin() const { return steps_; }
  QSpinBox* widthSpin() const { return width_; }
  QSpinBox* heightSpin() const { return height_; }
  QPushButton* generateButton() const { return generate_; }
  QPushButton* stopButton() const { return stop_; }
  StageProgressBar* progressBar() const { return progress_; }
  bool hasResult() const { return has_result_; }
  QString statusText() const;

 private:
  void applyDefaultWorkflow();
  void browseModel();
  void startGenerate();
  void saveResult();
  void onProgress(const QString& stage, qint64 done, qint64 total, const QString& unit,
                  double fraction, double eta_seconds);
  void onCancelled();
  void onFinished(const QImage& image, const QString& parameters, const QStringList& notices);
  void onFailed(const QString& message);

  app::EngineBridge* bridge_ = nullptr;
  std::unique_ptr<app::Settings> settings_;
  QLineEdit* model_ = nullptr;
  QPlainTextEdit* prompt_ = nullptr;
  QPlainTextEdit* negative_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QSpinBox* steps_ = nullptr;
  QDoubleSpinBox* cfg_ = nullptr;
  QSpinBox* width_ = nullptr;
  QSpinBox* height_ = nullptr;
  QPushButton* generate_ = nullptr;
  QPushButton* save_ = nullptr;
  QPushButton* stop_ = nullptr;
  StageProgressBar* progress_ = nullptr;
  QLabel* stage_ = nullptr;
  QLabel* image_ = nullptr;
  QLabel* parameters_ = nullptr;
  bool has_result_ = false;
};

}  // namespace kiln::ui
