// What kiln-cli's commands that run jobs share: the device and memory options, an engine
// whose events are shown (or printed as JSON) until the job ends, Ctrl+C as cancel, and
// the memory report.
#pragma once

#include <QCommandLineParser>
#include <QString>

#include <cstdint>
#include <string>

#include "job_display.h"
#include "kiln/engine.h"

namespace kiln::cli {

// Bad usage: the command prints it and exits with 2.
struct UsageError {
  QString message;
};

int toInt(const QCommandLineParser& p, const QString& name, int fallback);

// The user's pictures folder (XDG_PICTURES_DIR, else ~/Pictures), where results go by default.
QString picturesFolder();

// Memory settings shared with Preferences.
struct MemorySettings {
  std::string device = "cpu";
  int64_t device_budget_bytes = 0;
  int64_t host_budget_bytes = 0;
  OffloadSettings offload;
};

// --device, --device-budget, --host-budget, the offload options, --memory-report,
// --quiet and --json-events.
void addSessionOptions(QCommandLineParser& p);
// Throws UsageError.
MemorySettings parseMemory(const QCommandLineParser& p);

void printMemoryReport(const MemoryStats& m);

// Runs the job on an engine, showing its events until it ends; Ctrl+C cancels it.
// Returns the job's last event. Throws kiln::Error for a job the engine refuses.
Event runJob(const Job& job, const MemorySettings& memory, ProgressDisplay::Mode mode, bool json,
             bool memory_report);

}  // namespace kiln::cli
