#include "engine_bridge.h"

#include <chrono>
#include <cmath>

#include "kiln/error.h"
#include "kiln/image_io.h"

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

EngineBridge::EngineBridge(QObject* parent) : QObject(parent) {
  kiln::EngineOptions options;
  options.sink = [this](const kiln::Event& e) {
    // Engine thread: thin out progress, then hand the event to the GUI thread.
    if (e.type == kiln::EventType::Progress && e.done != e.total) {
      const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
      if (now - last_progress_ns_.load() < 30'000'000) return;
      last_progress_ns_ = now;
    }
    if (e.type == kiln::EventType::MemoryStats || e.type == kiln::EventType::Preview) return;
    QMetaObject::invokeMethod(this, [this, e] { onEvent(e); }, Qt::QueuedConnection);
  };
  options.timings_path = kiln::defaultTimingsPath();
  engine_ = std::make_unique<kiln::Engine>(std::move(options));
}

// Destroying the engine cancels its job and joins its thread before this object goes.
EngineBridge::~EngineBridge() { engine_.reset(); }

bool EngineBridge::generate(const kiln::RenderParams& params) {
  if (busy()) return false;
  kiln::Job job;
  job.params = params;
  try {
    job_ = engine_->submit(job);
  } catch (const kiln::Error& e) {
    const QString message = QString::fromUtf8(e.what());
    QMetaObject::invokeMethod(this, [this, message] { Q_EMIT failed(message); }, Qt::QueuedConnection);
    return true;
  }
  return true;
}

void EngineBridge::cancel() {
  if (busy()) engine_->cancel(job_);
}

void EngineBridge::onEvent(const kiln::Event& e) {
  if (e.job != job_) return;
  const auto stageName = [&](int i) {
    return i >= 0 && i < static_cast<int>(stages_.size()) ? QString::fromStdString(stages_[static_cast<std::size_t>(i)].name)
                                                         : QString();
  };
  switch (e.type) {
    case kiln::EventType::StagePlanned: {
      stages_ = e.stages;
      QList<PlannedStage> plan;
      for (const auto& s : stages_)
        plan.push_back({QString::fromStdString(s.name), QString::fromStdString(s.unit), s.total, s.expected_seconds});
      Q_EMIT planned(plan);
      break;
    }
    case kiln::EventType::StageUpdated:
      if (e.stage >= 0 && e.stage < static_cast<int>(stages_.size()) && !e.stages.empty()) {
        stages_[static_cast<std::size_t>(e.stage)] = e.stages.front();
        Q_EMIT stageUpdated(e.stage, QString::fromStdString(e.stages.front().name), e.stages.front().total);
      }
      break;
    case kiln::EventType::StageStarted:
    case kiln::EventType::Progress:
      Q_EMIT stageProgress(e.stage, e.type == kiln::EventType::StageStarted ? 0 : e.done, e.total);
      Q_EMIT progress(stageName(e.stage), e.type == kiln::EventType::StageStarted ? 0 : e.done, e.total,
                      QString::fromStdString(e.unit), e.fraction, e.eta_seconds);
      break;
    case kiln::EventType::JobFinished: {
      job_ = 0;
      last_ = e.outputs.at(0);
      QStringList notices;
      for (const auto& n : e.notices) notices << QString::fromStdString(n);
      Q_EMIT finished(toQImage(last_), QString::fromStdString(last_.text.at("parameters")), notices);
      break;
    }
    case kiln::EventType::JobFailed:
      job_ = 0;
      Q_EMIT failed(QString::fromStdString(e.message));
      break;
    case kiln::EventType::JobCancelled:
      job_ = 0;
      Q_EMIT cancelled();
      break;
    default:
      break;
  }
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
