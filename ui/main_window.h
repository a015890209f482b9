// Kiln's main window: a generate panel (model, prompts, settings, batch), a stage-aware
// progress line and the zoomable result view; docks for the queue, the gallery of past
// results, the log and the memory the engine holds. Rendering goes through app/'s
// EngineBridge; every text is set again when the language changes.
#pragma once

#include <QMainWindow>

#include <functional>
#include <memory>

#include "kiln/workflow.h"

class QAction;
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
class ParameterPanel;
class QueuePanel;
class SeedField;
class StageProgressBar;
class WorkflowEditor;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // Over the application's settings, or over `settings` (tests, portable installs).
  explicit MainWindow(QWidget* parent = nullptr);
  explicit MainWindow(std::unique_ptr<app::Settings> settings, QWidget* parent = nullptr);
  ~MainWindow() override;

  // For tests and automation: the controls of the generate panel (null when the template
  // does not expose that parameter) and the docks.
  ParameterPanel* parameterPanel() const { return panel_; }
  QComboBox* modelPicker() const;
  QLineEdit* modelEdit() const;
  QPlainTextEdit* promptEdit() const;
  QPlainTextEdit* negativeEdit() const;
  SeedField* seedSpin() const;
  QCheckBox* randomSeedCheck() const;
  QSpinBox* stepsSpin() const;
  QDoubleSpinBox* cfgSpin() const;
  QSpinBox* widthSpin() const;
  QSpinBox* heightSpin() const;
  QComboBox* samplerPicker() const;
  QSpinBox* batchSpin() const { return batch_; }
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
  // Help > First-Start Assistant: looks for model folders and GPUs again and applies what
  // the user chose (a changed device takes effect at the next start).
  void openFirstStartAssistant();
  // The status line under the buttons (the person's sentence; details go to the log).
  QLabel* statusLabel() const { return stage_; }
  // Help > About Kiln: what it is, and what --version prints.
  QString aboutText() const;
  // Fills the panel from a past result: its workflow becomes the template (values
  // included), or else its recorded settings fill the panel; false when it has neither.
  bool reuseResult(const app::ResultFile& result);
  void refreshModels();
  // The generate panel's template: its exposed parameters are the panel's (a workflow
  // exposing none gets the usual ones exposed). `source` names it for people.
  void setTemplate(kiln::Workflow workflow, const QString& source);
  // Opens a workflow file, a ComfyUI workflow or a picture carrying one as the template;
  // false (with the reason in the status line) when it cannot be used.
  bool openTemplate(const QString& path);
  QString templateSource() const { return template_source_; }
  // The workflow editor window (View > Workflow Editor), opened on the panel's workflow
  // the first time.
  WorkflowEditor* openWorkflowEditor();

 protected:
  void changeEvent(QEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void buildMenus();
  void retranslate();
  void applyDefaultWorkflow();
  void applyVideoWorkflow();
  void openTemplateDialog();
  void saveTemplateDialog();
  void onModelChanged(const QString& path);
  void saveResult();
  void showResult(const QString& path);
  bool showPicture(const QString& path);  // the picture and its parameters, status kept
  void updateButtons();
  void appendLog(const QString& line);
  // Shows a status made by `text` (called again when the language changes).
  void setStatus(std::function<QString()> text);
  // A problem: its first sentence in the status line, the whole message in the log.
  void showProblem(const QString& what, const QString& message);
  void rememberPanel();
  void onProgress(const QString& stage, qint64 done, qint64 total, const QString& unit,
                  double fraction, double eta_seconds, int image, int images);
  void onCancelled();
  void onFinished(const QImage& image, const QString& parameters, const QStringList& notices);
  void onFailed(const QString& message);

  std::unique_ptr<app::Settings> settings_;
  app::EngineBridge* bridge_ = nullptr;
  ParameterPanel* panel_ = nullptr;
  QLabel* template_label_ = nullptr;
  QString template_source_;
  QLabel* batch_label_ = nullptr;
  QSpinBox* batch_ = nullptr;
  bool loading_template_ = false;
  WorkflowEditor* editor_ = nullptr;  // model changes while loading keep the template's size
  QPushButton* generate_ = nullptr;
  QPushButton* save_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* skip_ = nullptr;
  StageProgressBar* progress_ = nullptr;
  QLabel* stage_ = nullptr;
  std::function<QString()> status_;
  QString language_;                  // the language setting in effect
  QList<QAction*> window_shortcuts_;  // kept from text fields that would take their keys
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
