// How kiln-cli shows a job's events: a live one-line progress display on a terminal
// (stage, units done, overall percent, ETA), plain lines elsewhere, and JSON lines for
// scripts (--json-events).
#pragma once

#include <QByteArray>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "kiln/engine.h"

namespace kiln::cli {

// One compact JSON object per event; previews carry their size, not their pixels.
QByteArray eventToJson(const Event& e);

class ProgressDisplay {
 public:
  enum class Mode { Invalid = 0, Live, Lines, Silent };
  ProgressDisplay(std::FILE* out, Mode mode) : out_(out), mode_(mode) {}
  ~ProgressDisplay() { endLine(); }

  void handle(const Event& e);
  // Ends the live line so that the next message starts on its own line.
  void endLine();

 private:
  void drawLive(const Event& e);

  std::FILE* out_ = nullptr;
  Mode mode_ = Mode::Invalid;
  std::vector<Stage> stages_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace kiln::cli
