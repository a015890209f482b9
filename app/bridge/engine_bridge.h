// The Qt side of the engine: jobs run on the engine's own thread; its events come back
// to the GUI thread as queued signals only (progress at most every 30 ms), so the GUI
// never waits on the engine and a fast engine cannot flood the event loop.
//
// The bridge keeps its own queue of requests and hands the engine one job at a time, so
// pending requests can be cancelled and reordered until they start.
#pragma once

#include <QElapsedTimer>
#include <QImage>
#include <QList>
#include <QObject>
#include <QStringList>
#include <QThreadPool>

#include <atomic>
#include <memory>
#include <vector>

#include "kiln/engine.h"

namespace kiln::app {

// One planned stage of a job, as the progress bar draws it.
struct PlannedStage {
  QString name;  // "Denoising"
  QString unit;  // "steps"
  qint64 total = 0;
  double expected_seconds = 0;
};

// What the engine holds, for the memory dock.
struct MemorySnapshot {
  QString device;  // "cpu", "sim:8.00 GiB", "cuda:0"
  qint64 device_total = 0, device_allocated = 0, device_reserved = 0, device_peak = 0;
  qint64 pinned = 0, pinned_peak = 0;
  qint64 cached_model_bytes = 0, cached_model_device_bytes = 0;
  int cached_models = 0;
  qint64 job_bytes = 0, resident = 0;
  qint64 node_cache_bytes = 0;
  int node_cache_entries = 0;
  // One line per loaded component: "unet (UNetModel, 1.64 GiB, BFloat16): group-block ..."
  QStringList placements;
};
MemorySnapshot toSnapshot(const kiln::MemoryStats& stats);

// One request: `batch` images, image i with seed + i. With a workflow, the workflow runs
// `batch` times (every SEED parameter + i; SaveImage nodes write into the output folder
// with `output_name` as their prefix); without one, `params` is rendered.
struct GenerateRequest {
  kiln::RenderParams params;
  std::shared_ptr<const kiln::Workflow> workflow;
  int batch = 1;
  // Saved into `output_folder` under `output_name`, a file name template ({seed} ... see
  // expandNameTemplate) filled in when each image starts. Renders: "<name>.png" (image i
  // of a batch "<name>-<i>.png", "_2" ... added instead of overwriting); workflows:
  // SaveImage's "<name>-00001.png" numbering. No folder: renders are not saved.
  QString output_folder;
  QString output_name;
};

struct QueueItem {
  quint64 id = 0;
  QString label;  // the prompt's start, the image count and the seed
  bool running = false;
};

class EngineBridge : public QObject {
  Q_OBJECT

 public:
  // An engine on `device` ("cpu", "cuda:N", "sim:SIZE"). Throws kiln::Error for a device
  // this build cannot use.
  explicit EngineBridge(QObject* parent = nullptr) : EngineBridge(QStringLiteral("cpu"), parent) {}
  explicit EngineBridge(const QString& device, QObject* parent = nullptr);
  ~EngineBridge() override;

  // True while a request runs or waits.
  bool busy() const noexcept { return job_ != 0 || !pending_.isEmpty(); }
  bool running() const noexcept { return job_ != 0; }
  // Queues a request; it starts when the ones before it have ended. Returns its id.
  quint64 enqueue(const GenerateRequest& request);
  bool generate(const kiln::RenderParams& params) {
    return enqueue({params, nullptr, 1, {}, {}}) != 0;
  }
  // Interrupts the running request; its end arrives as cancelled(), then the next starts.
  void cancel();
  // Finishes the running request's current image and drops the rest of its batch;
  // returns how many images were dropped (-1: not known here, the engine logs it).
  int skip();
  // Removes a pending request or interrupts the running one; false when unknown.
  bool cancelItem(quint64 id);
  // Interrupts the running request and drops every pending one.
  void cancelAll();
  // Moves a pending request `delta` places (negative: sooner); false when it cannot move.
  bool moveItem(quint64 id, int delta);
  QList<QueueItem> queue() const;
  int waiting() const noexcept {
    return static_cast<int>(pending_.size());
  }  // requests not started yet

  // New offload settings: loaded models are placed again at once when idle (else when
  // the next job starts), without reloading; memoryChanged() reports the new placement.
  // Throws kiln::Error for settings that cannot work.
  void setOffloadSettings(const kiln::OffloadSettings& settings) {
    engine_->setOffloadSettings(settings);
  }
  // The model folders from Preferences: their embeddings folders (<root>/embeddings,
  // <root>/models/embeddings) serve the prompts of the jobs started from now on.
  void setModelFolders(const QStringList& folders);
  kiln::OffloadSettings offloadSettings() const { return engine_->offloadSettings(); }
  MemorySnapshot memory() const { return toSnapshot(engine_->memoryStats()); }
  // The memory map of the loaded models under settings not yet applied (Engine::planMemory;
  // quick, any thread). Throws kiln::Error for settings that cannot work.
  kiln::MemoryPlan planMemory(const kiln::MemoryPlanRequest& request) const {
    return engine_->planMemory(request);
  }
  // Reads the memory figures off the GUI thread; memoryChanged() brings them. Does
  // nothing while an earlier request is still out.
  void requestMemory();
  // Writes the last result (with its metadata) atomically. Returns an error message or "".
  QString saveLast(const QString& path) const;

 Q_SIGNALS:
  // `stage` names what runs now (in the engine's words); `fraction` and `eta_seconds`
  // (< 0: not known yet) are the whole request's, over all `images` of its batch, of
  // which `image` (from 0) runs now.
  void progress(const QString& stage, qint64 done, qint64 total, const QString& unit,
                double fraction, double eta_seconds, int image, int images);
  // The job's stages, before any runs; a stage's new name and size; a stage's own units.
  void planned(const QList<kiln::app::PlannedStage>& stages);
  void stageUpdated(int index, const QString& name, qint64 total);
  void stageProgress(int index, qint64 done, qint64 total);
  void started(quint64 id);
  // A request ended with images (the first one shown; `paths` of the saved files).
  void finished(const QImage& image, const QString& parameters, const QStringList& notices);
  void saved(const QStringList& paths);
  void failed(const QString& message);
  void cancelled();
  void queueChanged();
  // A workflow node's state in the running request: "queued", "running", "cached",
  // "done", "failed" (with the message).
  void nodeState(const QString& node, const QString& state, const QString& message);
  void logMessage(const QString& line);
  void memoryChanged(const kiln::app::MemorySnapshot& memory);

 private:
  struct Pending {
    quint64 id = 0;
    GenerateRequest request;
    int run = 0;        // a workflow request's image now due
    bool skip = false;  // a workflow request's later images are dropped
  };
  struct BatchProgress {
    double fraction = 0, eta_seconds = -1;
    int image = 0, images = 1;
  };
  BatchProgress batchProgress(double fraction, double eta_seconds) const;
  void onEvent(const kiln::Event& e);  // GUI thread
  void startNext();
  void log(const QString& line);

  std::unique_ptr<kiln::Engine> engine_;
  std::vector<std::string> embedding_dirs_;  // from the model folders in Preferences
  QList<Pending> pending_;
  quint64 next_id_ = 1;
  Pending running_;  // id 0: none
  QString running_label_;
  kiln::JobId job_ = 0;
  std::vector<kiln::Stage> stages_;
  QElapsedTimer image_clock_;          // since the running image started
  std::vector<double> image_seconds_;  // the running request's finished images
  kiln::Image last_;
  std::atomic<int64_t> last_progress_ns_{0};  // engine thread: when progress last went out
  QThreadPool memory_pool_;                   // one thread reading memory figures
  std::atomic<bool> memory_requested_{false};
};

// Interleaved float RGB in [0, 1] -> QImage (RGB888).
QImage toQImage(const kiln::Image& image);

}  // namespace kiln::app
