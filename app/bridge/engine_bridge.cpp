#include "engine_bridge.h"

#include <QDateTime>
#include <QDir>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kiln/comfy_import.h"
#include "kiln/error.h"
#include "kiln/image_io.h"
#include "kiln/video_io.h"
#include "output_names.h"
#include "template_workflow.h"

namespace kiln::app {

QImage toQImage(const kiln::Image& image) {
  QImage out(image.width, image.height, QImage::Format_RGB888);
  for (int y = 0; y < image.height; ++y) {
    uchar* row = out.scanLine(y);
    for (int x = 0; x < image.width * 3; ++x) {
      const float v = image.pixels[static_cast<std::size_t>(y) * image.width * 3 + x];
      row[x] = static_cast<uchar>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
    }
  }
  return out;
}

MemorySnapshot toSnapshot(const kiln::MemoryStats& m) {
  MemorySnapshot s;
  s.device = QString::fromStdString(m.device);
  s.device_total = m.device_total_bytes;
  s.device_allocated = m.device_allocated_bytes;
  s.device_reserved = m.device_reserved_bytes;
  s.device_peak = m.device_peak_bytes;
  s.pinned = m.pinned_bytes;
  s.pinned_peak = m.pinned_peak_bytes;
  s.cached_model_bytes = m.cached_model_bytes;
  s.cached_model_device_bytes = m.cached_model_device_bytes;
  s.cached_models = m.cached_models;
  s.job_bytes = m.job_bytes;
  s.resident = m.resident_bytes;
  s.node_cache_bytes = m.node_cache_bytes;
  s.node_cache_entries = m.node_cache_entries;
  for (const auto& line : m.placements) s.placements << QString::fromStdString(line);
  return s;
}

EngineBridge::EngineBridge(const QString& device, QObject* parent) : QObject(parent) {
  kiln::EngineOptions options;
  options.sink = [this](const kiln::Event& e) {
    // Engine thread: thin out progress, then hand the event to the GUI thread.
    if (e.type == kiln::EventType::Progress && e.done != e.total) {
      const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
      if (now - last_progress_ns_.load() < 30'000'000) return;
      last_progress_ns_ = now;
    }
    if (e.type == kiln::EventType::Preview) return;
    QMetaObject::invokeMethod(
        this, [this, e] { onEvent(e); }, Qt::QueuedConnection);
  };
  options.timings_path = kiln::defaultTimingsPath();
  options.write_image = [](const std::string& path, const kiln::Image& image) {
    kiln::writeImage(path, image);
  };
  options.write_video = [](const std::string& path, const std::vector<kiln::Image>& frames,
                           const kiln::VideoWriteOptions& o) { kiln::writeVideo(path, frames, o); };
  // Everything kiln-cli's engine has: LoadImage and LoadMask read pictures too.
  options.read_image = [](const std::string& path) { return kiln::readImage(path); };
  options.device = device.toStdString();
  // Embeddings come from the model folders in Preferences (setModelFolders), per job.
  memory_pool_.setMaxThreadCount(1);
  engine_ = std::make_unique<kiln::Engine>(std::move(options));
}

void EngineBridge::setModelFolders(const QStringList& folders) {
  kiln::ModelFolders roots;
  for (const QString& f : folders) roots.roots.push_back(f.toStdString());
  embedding_dirs_ = kiln::embeddingFolders(roots);
}

// Destroying the engine cancels its job and joins its thread before this object goes.
EngineBridge::~EngineBridge() {
  memory_pool_.waitForDone();
  engine_.reset();
}

void EngineBridge::requestMemory() {
  if (memory_requested_.exchange(true)) return;
  memory_pool_.start([this] {
    const MemorySnapshot snapshot = toSnapshot(engine_->memoryStats());
    QMetaObject::invokeMethod(
        this,
        [this, snapshot] {
          memory_requested_ = false;
          Q_EMIT memoryChanged(snapshot);
        },
        Qt::QueuedConnection);
  });
}

quint64 EngineBridge::enqueue(const GenerateRequest& request) {
  const quint64 id = next_id_++;
  pending_.push_back({id, request});
  Q_EMIT queueChanged();
  if (job_ == 0) startNext();
  return id;
}

namespace {

QString labelOf(const GenerateRequest& r, int run = 0) {
  const kiln::RenderParams p = r.workflow ? roleParams(*r.workflow, run) : r.params;
  const std::string& text = p.prompt.text;
  const int64_t seed = p.sampling.seed;
  QString prompt = QString::fromStdString(text).simplified();
  if (prompt.size() > 40) prompt = prompt.left(39) + QChar(0x2026);
  if (prompt.isEmpty()) prompt = EngineBridge::tr("(no prompt)");
  if (r.batch > 1 && r.workflow)
    return EngineBridge::tr("%1 · image %2 of %3 · seed %4")
        .arg(prompt)
        .arg(run + 1)
        .arg(r.batch)
        .arg(seed);
  return r.batch > 1
             ? EngineBridge::tr("%1 · %2 images · seed %3").arg(prompt).arg(r.batch).arg(seed)
             : EngineBridge::tr("%1 · seed %2").arg(prompt).arg(seed);
}

}  // namespace

// Hands the engine the first pending request (GUI thread, when nothing runs).
void EngineBridge::startNext() {
  while (job_ == 0 && !pending_.isEmpty()) {
    const Pending next = pending_.takeFirst();
    const GenerateRequest& r = next.request;
    kiln::Job job;
    stages_.clear();
    try {
      if (!r.output_folder.isEmpty() && !QDir().mkpath(r.output_folder))
        throw kiln::Error(kiln::ErrorKind::InvalidArgument, "cannot create the output folder '" +
                                                                r.output_folder.toStdString() +
                                                                "': choose another in Preferences");
      if (r.workflow) {
        const QString name = expandNameTemplate(r.output_name, roleParams(*r.workflow, next.run),
                                                QDateTime::currentDateTime());
        job.workflow = std::make_shared<const kiln::Workflow>(
            prepareRun(*r.workflow, engine_->nodeSchemas(), next.run, name));
        job.output_dir = r.output_folder.toStdString();
        job.params.prompt.embedding_dirs = embedding_dirs_;
      } else {
        job.params = r.params;
        job.params.prompt.embedding_dirs.insert(job.params.prompt.embedding_dirs.end(),
                                                embedding_dirs_.begin(), embedding_dirs_.end());
        job.batch = r.batch;
        if (!r.output_folder.isEmpty())
          job.output_path = uniqueOutputPath(r.output_folder,
                                             expandNameTemplate(r.output_name, r.params,
                                                                QDateTime::currentDateTime()),
                                             r.batch)
                                .toStdString();
      }
      job_ = engine_->submit(job);
      if (next.run == 0) image_seconds_.clear();  // a new request: its own pace
      image_clock_.start();
      running_ = next;
      running_label_ = labelOf(r, next.run);
      log(tr("Started %1").arg(running_label_));
      Q_EMIT started(next.id);
    } catch (const kiln::Error& e) {
      const QString message = QString::fromUtf8(e.what());
      log(tr("Refused %1: %2").arg(labelOf(r, next.run), message));
      Q_EMIT failed(message);
    }
  }
  Q_EMIT queueChanged();
}

void EngineBridge::cancel() {
  if (job_ != 0) engine_->cancel(job_);
}

int EngineBridge::skip() {
  if (job_ == 0) return -1;
  if (!running_.request.workflow) {
    engine_->skip(job_);  // the engine says how many it dropped, in the log
    return -1;
  }
  running_.skip = true;  // this image ends as it would, the rest go
  const int dropped = running_.request.batch - running_.run - 1;
  log(tr("Skip: %1 finishes, %n later image(s) of its batch dropped", "", dropped)
          .arg(running_label_));
  return dropped;
}

bool EngineBridge::cancelItem(quint64 id) {
  if (id != 0 && id == running_.id) {
    cancel();
    return true;
  }
  for (qsizetype i = 0; i < pending_.size(); ++i)
    if (pending_[i].id == id) {
      log(tr("Removed %1 from the queue").arg(labelOf(pending_[i].request)));
      pending_.removeAt(i);
      Q_EMIT queueChanged();
      return true;
    }
  return false;
}

void EngineBridge::cancelAll() {
  if (!pending_.isEmpty()) log(tr("Removed %1 waiting requests").arg(pending_.size()));
  pending_.clear();
  cancel();
  Q_EMIT queueChanged();
}

bool EngineBridge::moveItem(quint64 id, int delta) {
  for (qsizetype i = 0; i < pending_.size(); ++i) {
    if (pending_[i].id != id) continue;
    const qsizetype to = std::clamp<qsizetype>(i + delta, 0, pending_.size() - 1);
    if (to == i) return false;
    pending_.move(i, to);
    Q_EMIT queueChanged();
    return true;
  }
  return false;
}

QList<QueueItem> EngineBridge::queue() const {
  QList<QueueItem> items;
  if (job_ != 0) items.push_back({running_.id, running_label_, true});
  for (const Pending& p : pending_) items.push_back({p.id, labelOf(p.request, p.run), false});
  return items;
}

void EngineBridge::log(const QString& line) {
  Q_EMIT logMessage(line);
}

void EngineBridge::onEvent(const kiln::Event& e) {
  // Not the running job's: the engine's own messages and memory reports still count.
  if (e.job != job_ || job_ == 0) {
    if (e.type == kiln::EventType::Log) log(QString::fromStdString(e.message));
    if (e.type == kiln::EventType::MemoryStats) Q_EMIT memoryChanged(toSnapshot(e.memory));
    return;
  }
  const auto stageName = [&](int i) {
    return i >= 0 && i < static_cast<int>(stages_.size())
               ? QString::fromStdString(stages_[static_cast<std::size_t>(i)].name)
               : QString();
  };
  const auto ended = [this](bool finished) {
    job_ = 0;
    // A workflow request's next image waits first in line.
    if (finished && running_.request.workflow && !running_.skip &&
        running_.run + 1 < running_.request.batch) {
      Pending next = running_;
      ++next.run;
      pending_.push_front(next);
    }
    running_ = Pending{};
    running_label_.clear();
    // The queue shows the end at once (busy() is already false), not one event later.
    Q_EMIT queueChanged();
    // The next request starts once this signal's receivers have seen the end.
    QMetaObject::invokeMethod(
        this, [this] { startNext(); }, Qt::QueuedConnection);
  };
  switch (e.type) {
    case kiln::EventType::Log:
      log(QString::fromStdString(e.message));
      break;
    case kiln::EventType::MemoryStats:
      Q_EMIT memoryChanged(toSnapshot(e.memory));
      break;
    case kiln::EventType::NodeState:
      Q_EMIT nodeState(QString::fromStdString(e.node),
                       QString::fromLatin1(kiln::nodeStateName(e.node_state)),
                       QString::fromStdString(e.message));
      break;
    case kiln::EventType::StagePlanned: {
      stages_ = e.stages;
      QList<PlannedStage> plan;
      for (const auto& s : stages_)
        plan.push_back({QString::fromStdString(s.name), QString::fromStdString(s.unit), s.total,
                        s.expected_seconds});
      Q_EMIT planned(plan);
      break;
    }
    case kiln::EventType::StageUpdated:
      if (e.stage >= 0 && e.stage < static_cast<int>(stages_.size()) && !e.stages.empty()) {
        stages_[static_cast<std::size_t>(e.stage)] = e.stages.front();
        Q_EMIT stageUpdated(e.stage, QString::fromStdString(e.stages.front().name),
                            e.stages.front().total);
      }
      break;
    case kiln::EventType::StageStarted:
    case kiln::EventType::Progress: {
      Q_EMIT stageProgress(e.stage, e.type == kiln::EventType::StageStarted ? 0 : e.done, e.total);
      const BatchProgress whole = batchProgress(e.fraction, e.eta_seconds);
      Q_EMIT progress(stageName(e.stage), e.type == kiln::EventType::StageStarted ? 0 : e.done,
                      e.total, QString::fromStdString(e.unit), whole.fraction, whole.eta_seconds,
                      whole.image, whole.images);
      break;
    }
    case kiln::EventType::JobFinished: {
      image_seconds_.push_back(static_cast<double>(image_clock_.elapsed()) / 1000.0);
      log(tr("Finished %1").arg(running_label_));
      ended(true);
      if (e.outputs.empty()) {
        Q_EMIT failed(
            tr("the workflow ran but made no picture: give it a SaveImage or PreviewImage node"));
        break;
      }
      last_ = e.outputs.front();
      QStringList notices, paths;
      for (const auto& n : e.notices) notices << QString::fromStdString(n);
      for (const auto& p : e.output_paths) {
        paths << QString::fromStdString(p);
        log(tr("Saved %1").arg(paths.back()));
      }
      if (!paths.isEmpty()) Q_EMIT saved(paths);
      const auto parameters = last_.text.find("parameters");
      Q_EMIT finished(
          toQImage(last_),
          parameters == last_.text.end() ? QString() : QString::fromStdString(parameters->second),
          notices);
      break;
    }
    case kiln::EventType::JobFailed:
      log(tr("Failed %1: %2").arg(running_label_, QString::fromStdString(e.message)));
      ended(false);
      Q_EMIT failed(QString::fromStdString(e.message));
      break;
    case kiln::EventType::JobCancelled:
      log(tr("Stopped %1 (%2)").arg(running_label_, QString::fromStdString(e.message)));
      ended(false);
      Q_EMIT cancelled();
      break;
    default:
      break;
  }
}

// A workflow request's batch runs one job per image: the fraction and the time left cover
// the whole batch, the images to come at the pace of those done (or of this one so far).
EngineBridge::BatchProgress EngineBridge::batchProgress(double fraction, double eta_seconds) const {
  const int images = running_.request.workflow ? std::max(1, running_.request.batch) : 1;
  const int image = running_.request.workflow ? running_.run : 0;
  BatchProgress p{fraction, eta_seconds, image, images};
  if (images == 1) return p;
  const int after = running_.skip ? 0 : images - image - 1;
  p.fraction = (image + fraction) / images;
  double per_image = -1;
  if (!image_seconds_.empty()) {
    per_image = 0;
    for (double s : image_seconds_) per_image += s;
    per_image /= static_cast<double>(image_seconds_.size());
  } else if (eta_seconds >= 0) {
    per_image = static_cast<double>(image_clock_.elapsed()) / 1000.0 + eta_seconds;
  }
  p.eta_seconds = eta_seconds < 0 || per_image < 0 ? -1 : eta_seconds + after * per_image;
  return p;
}

QString EngineBridge::saveLast(const QString& path) const {
  if (last_.empty()) return tr("There is no image to save yet.");
  try {
    kiln::writeImage(path.toStdString(), last_);
    return {};
  } catch (const kiln::Error& e) {
    return QString::fromUtf8(e.what());
  }
}

}  // namespace kiln::app
