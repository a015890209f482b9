// The Qt side of the engine: jobs run on the engine's own thread; its events come back
// to the GUI thread as queued signals only (progress at most every 30 ms), so the GUI
// never waits on the engine and a fast engine cannot flood the event loop.
#pragma once

#include <QImage>
#include <QList>
#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>
#include <vector>

#include "kiln/engine.h"

namespace kiln::app {

// One planned stage of a job, as the progress bar draws it.
struct PlannedStage {
  QString name;   // "Denoising"
  QString unit;   // "steps"
  qint64 total = 0;
  double expected_seconds = 0;
};

class EngineBridge : public QObject {
  Q_OBJECT

 public:
  explicit EngineBridge(QObject* parent = nullptr);
  ~EngineBridge() override;

  bool busy() const noexcept { return job_ != 0; }
  // Submits a render; ignored (returns false) while one runs.
  bool generate(const kiln::RenderParams& params);
  // Interrupts the running render; its end arrives as cancelled().
  void cancel();
  // New offload settings for the engine: loaded models are placed again when the next
  // job starts, without reloading. Throws kiln::Error for settings that cannot work.
  void setOffloadSettings(const kiln::OffloadSettings& settings) { engine_->setOffloadSettings(settings); }
  kiln::OffloadSettings offloadSettings() const { return engine_->offloadSettings(); }
  // Writes the last result (with its metadata) atomically. Returns an error message or "".
  QString saveLast(const QString& path) const;

 Q_SIGNALS:
  // `stage` names what runs now; `fraction` is the whole job's, `eta_seconds` < 0 unknown.
  void progress(const QString& stage, qint64 done, qint64 total, const QString& unit,
                double fraction, double eta_seconds);
  // The job's stages, before any runs; a stage's new name and size; a stage's own units.
  void planned(const QList<kiln::app::PlannedStage>& stages);
  void stageUpdated(int index, const QString& name, qint64 total);
  void stageProgress(int index, qint64 done, qint64 total);
  void finished(const QImage& image, const QString& parameters, const QStringList& notices);
  void failed(const QString& message);
  void cancelled();

 private:
  void onEvent(const kiln::Event& e);  // GUI thread

  std::unique_ptr<kiln::Engine> engine_;
  kiln::JobId job_ = 0;
  std::vector<kiln::Stage> stages_;
  kiln::Image last_;
  std::atomic<int64_t> last_progress_ns_{0};  // engine thread: when progress last went out
};

// Interleaved float RGB in [0, 1] -> QImage (RGB888).
QImage toQImage(const kiln::Image& image);

}  // namespace kiln::app
