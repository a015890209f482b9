#include "job_display.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

#include "kiln/units.h"

namespace kiln::cli {
namespace {

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

QJsonObject stageToJson(const Stage& s) {
  return {{"kind", stageKindName(s.kind)},
          {"name", q(s.name)},
          {"unit", q(s.unit)},
          {"total", qint64(s.total)},
          {"image", s.image},
          {"expected_seconds", s.expected_seconds}};
}

std::string formatEta(double seconds) {
  if (seconds < 0) return "";
  const auto s = static_cast<long long>(std::lround(seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

}  // namespace

QByteArray eventToJson(const Event& e) {
  QJsonObject o{{"event", eventTypeName(e.type)}, {"job", qint64(e.job)}};
  switch (e.type) {
    case EventType::StagePlanned: {
      QJsonArray stages;
      for (const auto& s : e.stages) stages.append(stageToJson(s));
      o["stages"] = stages;
      o["eta_seconds"] = e.eta_seconds;
      break;
    }
    case EventType::StageStarted:
    case EventType::Progress:
    case EventType::StageFinished:
      o["stage"] = e.stage;
      o["done"] = qint64(e.done);
      o["total"] = qint64(e.total);
      o["unit"] = q(e.unit);
      o["fraction"] = e.fraction;
      o["eta_seconds"] = e.eta_seconds;
      break;
    case EventType::StageUpdated:
      o["stage"] = e.stage;
      if (!e.stages.empty()) o["update"] = stageToJson(e.stages.front());
      o["fraction"] = e.fraction;
      o["eta_seconds"] = e.eta_seconds;
      break;
    case EventType::Preview:
      o["stage"] = e.stage;
      o["step"] = qint64(e.done);
      o["width"] = e.image.width;
      o["height"] = e.image.height;
      break;
    case EventType::JobFinished: {
      QJsonArray paths, notices;
      for (const auto& p : e.output_paths) paths.append(q(p));
      for (const auto& n : e.notices) notices.append(q(n));
      o["images"] = static_cast<int>(e.outputs.size());
      o["paths"] = paths;
      o["notices"] = notices;
      break;
    }
    case EventType::JobFailed:
    case EventType::JobCancelled:
      o["error"] = errorKindName(e.error);
      o["stage"] = e.stage;
      o["message"] = q(e.message);
      break;
    case EventType::Log:
      o["message"] = q(e.message);
      break;
    case EventType::NodeState:
      o["node"] = q(e.node);
      o["state"] = nodeStateName(e.node_state);
      if (!e.message.empty()) o["message"] = q(e.message);
      break;
    case EventType::MemoryStats:
      o["cached_model_bytes"] = qint64(e.memory.cached_model_bytes);
      o["cached_models"] = e.memory.cached_models;
      o["job_bytes"] = qint64(e.memory.job_bytes);
      o["resident_bytes"] = qint64(e.memory.resident_bytes);
      break;
    case EventType::JobQueued:
    case EventType::JobStarted:
    case EventType::Invalid:
      break;
  }
  return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

void ProgressDisplay::handle(const Event& e) {
  if (mode_ == Mode::Silent) return;
  if (e.type == EventType::StagePlanned) stages_ = e.stages;
  const bool staged = e.stage >= 0 && e.stage < static_cast<int>(stages_.size());
  bool renamed = false;
  if (e.type == EventType::StageUpdated && staged && !e.stages.empty()) {
    renamed = stages_[static_cast<std::size_t>(e.stage)].name != e.stages.front().name;
    stages_[static_cast<std::size_t>(e.stage)] = e.stages.front();
  }
  if (e.type == EventType::Log) {
    endLine();
    std::fprintf(out_, "%s\n", e.message.c_str());
    return;
  }
  if (mode_ == Mode::Live) {
    if (staged && (e.type == EventType::StageStarted || e.type == EventType::Progress)) drawLive(e);
    return;
  }
  if (!staged) return;
  const Stage& s = stages_[static_cast<std::size_t>(e.stage)];
  if (e.type == EventType::StageStarted || (e.type == EventType::StageUpdated && renamed))
    std::fprintf(out_, "%s...\n", s.name.c_str());
  if (e.type == EventType::Progress && e.unit == "steps")
    std::fprintf(out_, "%s %lld/%lld\n", s.name.c_str(), static_cast<long long>(e.done),
                 static_cast<long long>(e.total));
}

void ProgressDisplay::drawLive(const Event& e) {
  const auto now = std::chrono::steady_clock::now();
  const bool last = e.type == EventType::Progress && e.done == e.total;
  if (e.type == EventType::Progress && !last && now - last_draw_ < std::chrono::milliseconds(50))
    return;
  last_draw_ = now;
  const Stage& s = stages_[static_cast<std::size_t>(e.stage)];
  std::string line = s.name;
  if (e.total > 0)
    line +=
        " " + formatProgressAmount(e.type == EventType::StageStarted ? 0 : e.done, e.total, s.unit);
  char pct[16];
  std::snprintf(pct, sizeof pct, "%3.0f%%", 100.0 * e.fraction);
  line += std::string("  ") + pct;
  const std::string eta = formatEta(e.eta_seconds);
  if (!eta.empty()) line += "  ETA " + eta;
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
  line_open_ = true;
}

void ProgressDisplay::endLine() {
  if (!line_open_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  line_open_ = false;
}

}  // namespace kiln::cli
