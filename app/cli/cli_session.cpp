#include "cli_session.h"

#include <QDir>
#include <QStandardPaths>

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>

#include "kiln/comfy_import.h"
#include "kiln/image_io.h"
#include "kiln/units.h"
#include "kiln/video_io.h"

namespace kiln::cli {
namespace {

// Set by SIGINT; the event loop below turns it into a cancel of the job.
volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void onInterrupt(int) {
  g_interrupted = 1;
}

// Installs the Ctrl+C handler for its lifetime (no SA_RESTART, so waits wake up).
class InterruptHandler {
 public:
  InterruptHandler() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = onInterrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &previous_);
  }
  ~InterruptHandler() { ::sigaction(SIGINT, &previous_, nullptr); }
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;

 private:
  struct sigaction previous_ {};
};

// Events cross from the engine thread to this one through a queue.
class EventQueue {
 public:
  void push(Event e) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(e));
    ready_.notify_one();
  }
  std::optional<Event> pop(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!ready_.wait_for(lock, wait, [&] { return !events_.empty(); })) return std::nullopt;
    Event e = std::move(events_.front());
    events_.pop_front();
    return e;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Event> events_;
};

OffloadMode toMode(const QCommandLineParser& p, const QString& name) {
  const OffloadMode m = parseOffloadMode(p.value(name).toStdString());
  if (m == OffloadMode::Invalid)
    throw UsageError{"--" + name +
                     " must be none, model, group-block, group-leaf or balanced, got '" +
                     p.value(name) + "'"};
  return m;
}

std::vector<std::string> toList(const QCommandLineParser& p, const QString& name) {
  std::vector<std::string> out;
  for (const QString& item : p.value(name).split(',', Qt::SkipEmptyParts))
    out.push_back(item.trimmed().toStdString());
  return out;
}

int64_t toBytes(const QCommandLineParser& p, const QString& name) {
  if (!p.isSet(name)) return 0;
  const auto bytes = parseBytes(p.value(name).toStdString());
  if (!bytes)
    throw UsageError{"--" + name + " needs a size like 6G or 512MiB, got '" + p.value(name) + "'"};
  return *bytes;
}

}  // namespace

int toInt(const QCommandLineParser& p, const QString& name, int fallback) {
  if (!p.isSet(name)) return fallback;
  bool ok = false;
  const int v = p.value(name).toInt(&ok);
  if (!ok) throw UsageError{"--" + name + " needs a whole number, got '" + p.value(name) + "'"};
  return v;
}

QString picturesFolder() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
  return dir.isEmpty() ? QDir::homePath() + "/Pictures" : dir;
}

void addSessionOptions(QCommandLineParser& p) {
  p.addOptions({
      {"device",
       "Where to compute: cpu (default), cuda:N where this build has GPU support, or sim:BYTES, a "
       "simulated accelerator of that capacity (for example sim:6G).",
       "device"},
      {"device-budget", "Most device memory Kiln may use (default: all of it).", "bytes"},
      {"host-budget", "Most host memory cached models may hold (default: no limit).", "bytes"},
      {"offload",
       "How weights move between host and device memory: none (resident, default), model, "
       "group-block, group-leaf or balanced.",
       "mode"},
      {"offload-text-encoder", "Offload mode of every text encoder only.", "mode"},
      {"offload-unet", "Offload mode of the denoiser only (the UNet; a video model's transformer).",
       "mode"},
      {"offload-vae", "Offload mode of the VAE only.", "mode"},
      {"blocks-per-group", "Blocks moved together in group-block mode (default 1).", "n"},
      {"streams", "Prefetch the next group while the current one runs."},
      {"record-stream", "Record tensors on the side stream (needs --streams)."},
      {"never", "Components or model classes never offloaded (comma-separated, e.g. vae).", "list"},
      {"always", "Components or model classes always offloaded (comma-separated).", "list"},
      {"vae-threshold", "A VAE larger than this leaves the device after each call (default 1G).",
       "bytes"},
      {"pin",
       "Offloaded weights in pinned host memory: on (default), off, or per-group (one group at a "
       "time).",
       "mode"},
      {"pin-reserve", "Host memory pinning leaves free (default 2G).", "bytes"},
      {"memory-report", "Print the device's peak memory and where the weights are when done."},
      {"quiet", "Print nothing but errors."},
      {"json-events", "Print the job's events as JSON lines on standard output (for scripts)."},
  });
}

MemorySettings parseMemory(const QCommandLineParser& p) {
  MemorySettings m;
  if (p.isSet("device")) m.device = p.value("device").toStdString();
  m.device_budget_bytes = toBytes(p, "device-budget");
  m.host_budget_bytes = toBytes(p, "host-budget");
  OffloadSettings& o = m.offload;
  if (p.isSet("offload")) o.mode = toMode(p, "offload");
  for (const char* component : {"text-encoder", "unet", "vae"}) {
    const QString option = QString("offload-") + component;
    if (p.isSet(option))
      o.per_component[QString(component).replace('-', '_').toStdString()] = toMode(p, option);
  }
  o.blocks_per_group = toInt(p, "blocks-per-group", 1);
  o.streams = p.isSet("streams");
  o.record_stream = p.isSet("record-stream");
  if (p.isSet("never")) o.never = toList(p, "never");
  if (p.isSet("always")) o.always = toList(p, "always");
  if (p.isSet("vae-threshold")) o.vae_resident_threshold_bytes = toBytes(p, "vae-threshold");
  if (p.isSet("pin")) {
    o.pin = parsePinMode(p.value("pin").toStdString());
    if (o.pin == PinMode::Invalid)
      throw UsageError{"--pin must be on, off or per-group, got '" + p.value("pin") + "'"};
  }
  if (p.isSet("pin-reserve")) o.pin_reserve_bytes = toBytes(p, "pin-reserve");
  try {
    o.validate();
  } catch (const Error& e) {
    throw UsageError{QString::fromStdString(e.what())};
  }
  return m;
}

// What --memory-report prints when the job has ended.
void printMemoryReport(const MemoryStats& m) {
  std::fprintf(stderr, "memory: device %s, peak %s allocated of %s", m.device.c_str(),
               formatBytes(m.device_peak_bytes).c_str(), formatBytes(m.device_total_bytes).c_str());
  std::fprintf(stderr, "; now %s allocated, %s reserved\n",
               formatBytes(m.device_allocated_bytes).c_str(),
               formatBytes(m.device_reserved_bytes).c_str());
  std::fprintf(stderr, "memory: pinned host memory peak %s, now %s\n",
               formatBytes(m.pinned_peak_bytes).c_str(), formatBytes(m.pinned_bytes).c_str());
  std::fprintf(stderr, "memory: model weights %s (%s of them on the device), %d model(s) cached\n",
               formatBytes(m.cached_model_bytes).c_str(),
               formatBytes(m.cached_model_device_bytes).c_str(), m.cached_models);
  for (const auto& line : m.placements) std::fprintf(stderr, "memory: %s\n", line.c_str());
}

// Runs the job on an engine, showing its events until it ends; Ctrl+C cancels it.
Event runJob(const Job& job, const MemorySettings& memory, ProgressDisplay::Mode mode, bool json,
             bool memory_report) {
  EventQueue queue;
  EngineOptions options;
  options.device = memory.device;
  options.device_budget_bytes = memory.device_budget_bytes;
  options.host_budget_bytes = memory.host_budget_bytes;
  options.offload = memory.offload;
  options.sink = [&queue](const Event& e) { queue.push(e); };
  options.write_image = [](const std::string& path, const Image& image) {
    writeImage(path, image);
  };
  options.read_image = [](const std::string& path) { return readImage(path); };
  options.write_video = [](const std::string& path, const std::vector<Image>& frames,
                           const VideoWriteOptions& o) { writeVideo(path, frames, o); };
  options.timings_path = defaultTimingsPath();
  options.embedding_dirs = embeddingFolders(defaultModelFolders());
  // Kept while the engine lives, so --memory-report sees the weights' placement.
  options.cached_models = 1;
  Engine engine(std::move(options));
  ProgressDisplay display(stderr, mode);
  InterruptHandler interrupt;
  const JobId id = engine.submit(job);
  bool cancel_sent = false;
  for (;;) {
    if (g_interrupted && !cancel_sent) {
      engine.cancel(id);
      cancel_sent = true;
    }
    std::optional<Event> e = queue.pop(std::chrono::milliseconds(50));
    if (!e || e->job != id) continue;
    if (json) {
      std::fputs(eventToJson(*e).constData(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    }
    display.handle(*e);
    if (e->type == EventType::JobFinished || e->type == EventType::JobFailed ||
        e->type == EventType::JobCancelled) {
      display.endLine();
      if (memory_report) printMemoryReport(engine.memoryStats());
      return std::move(*e);
    }
  }
}

}  // namespace kiln::cli
