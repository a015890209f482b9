// Kiln's main window: a generate panel (model, prompts, settings, batch), a stage-aware
// progress line and the zoomable result view; docks for the queue, the gallery of past
// results, the log and the memory the engine holds. Rendering goes through app/'s
// EngineBridge; every text is set again when the language changes.
#pragma once

#include <QMainWindow>

#include <memory>

class QCheckBox;
class QComboBox;
class QDockWidget;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace kiln::app {
class EngineBridge;
class Settings;
struct ResultFile;
}  // namespace kiln::app

namespace kiln::ui {

class GalleryPanel;
class ImageView;
class MemoryPanel;
class QueuePanel;
class StageProgressBar;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // Over the application's settings, or over `settings` (tests, portable installs).
  explicit MainWindow(QWidget* parent = nullptr);
  explicit MainWindow(std::unique_ptr<app::Settings> settings, QWidget* parent = nullptr);
  ~MainWindow() override;

  // For tests and automation: the controls of the generate panel and the docks.
  QComboBox* modelPicker() const { return model_; }
  QLineEdit* modelEdit() const;
  QPlainTextEdit* promptEdit() const { return prompt_; }
  QPlainTextEdit* negativeEdit() const { return negative_; }
  QSpinBox* seedSpin() const { return seed_; }
  QCheckBox* randomSeedCheck() const { return random_seed_; }
  QSpinBox* stepsSpin() const { return steps_; }
  QDoubleSpinBox* cfgSpin() const { return cfg_; }
  QSpinBox* widthSpin() const { return width_; }
  QSpinBox* heightSpin() const { return height_; }
  QSpinBox* batchSpin() const { return batch_; }
  QComboBox* samplerPicker() const { return sampler_; }
  QPushButton* generateButton() const { return generate_; }
  QPushButton* stopButton() const { return stop_; }
  QPushButton* skipButton() const { return skip_; }
  StageProgressBar* progressBar() const { return progress_; }
  ImageView* imageView() const { return view_; }
  GalleryPanel* gallery() const { return gallery_; }
  QueuePanel* queuePanel() const { return queue_; }
  MemoryPanel* memoryPanel() const { return memory_; }
  QPlainTextEdit* logView() const { return log_; }
  app::EngineBridge* bridge() const { return bridge_; }
  app::Settings& settings() const { return *settings_; }
  bool hasResult() const { return has_result_; }
  QString statusText() const;

  // Queues a render of the panel's settings (Generate, Ctrl+Enter).
  void startGenerate();
  // Opens Preferences; applying them re-places the loaded models, switches language and
  // theme and re-reads the output folder.
  void openPreferences();
  // Re-reads the settings after Preferences stored them.
  void applySettings();
  // Fills the panel from a past result's recorded settings; false when it has none.
  bool reuseResult(const app::ResultFile& result);
  void refreshModels();

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void buildMenus();
  void retranslate();
  void applyDefaultWorkflow();
  void browseModel();
  void saveResult();
  void showResult(const QString& path);
  void updateButtons();
  void appendLog(const QString& line);
  void onProgress(const QString& stage, qint64 done, qint64 total, const QString& unit,
                  double fraction, double eta_seconds);
  void onCancelled();
  void onFinished(const QImage& image, const QString& parameters, const QStringList& notices);
  void onFailed(const QString& message);

  std::unique_ptr<app::Settings> settings_;
  app::EngineBridge* bridge_ = nullptr;
  QComboBox* model_ = nullptr;
  QPushButton* browse_ = nullptr;
  QPlainTextEdit* prompt_ = nullptr;
  QPlainTextEdit* negative_ = nullptr;
  QComboBox* sampler_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QCheckBox* random_seed_ = nullptr;
  QSpinBox* steps_ = nullptr;
  QDoubleSpinBox* cfg_ = nullptr;
  QSpinBox* width_ = nullptr;
  QSpinBox* height_ = nullptr;
  QSpinBox* batch_ = nullptr;
  QList<QLabel*> form_labels_;  // in the order retranslate() names them
  QPushButton* generate_ = nullptr;
  QPushButton* save_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* skip_ = nullptr;
  StageProgressBar* progress_ = nullptr;
  QLabel* stage_ = nullptr;
  ImageView* view_ = nullptr;
  QLabel* parameters_ = nullptr;
  QDockWidget* queue_dock_ = nullptr;
  QDockWidget* gallery_dock_ = nullptr;
  QDockWidget* log_dock_ = nullptr;
  QDockWidget* memory_dock_ = nullptr;
  QueuePanel* queue_ = nullptr;
  GalleryPanel* gallery_ = nullptr;
  MemoryPanel* memory_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  bool has_result_ = false;
};

}  // namespace kiln::ui
