// Turns a job's stage progress into events with the overall fraction and ETA, and
// records how long each finished stage took (see StageTimings).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "nodes/run_environment.h"
#include "nodes/stage_timings.h"

namespace kiln::nodes {

class ProgressTracker {
 public:
  ProgressTracker(RunEnvironment& env, TimingKey base) : env_(env), base_(std::move(base)) {}

  // Adds a stage to the plan; `pixels` (when not 0) is the size its timing is keyed by
  // instead of the picture's (a tile's, for tiled VAE work). Returns its index.
  int add(StageKind kind, std::string name, std::string unit, int64_t total, int image,
          int64_t expected_units, int64_t pixels = 0);
  void plan();  // sends StagePlanned
  void start(int i);
  // Progress events at most every 10 ms, and always for the first and the last unit.
  void progress(int i, int64_t done, int64_t total);
  void finish(int i);
  // A stage's plan changed (its name, its unit count, the size its timing is keyed by, what
  // its units are when `unit` is not empty): sends StageUpdated with the new stage.
  void update(int i, std::string name, int64_t total, int64_t pixels = 0, std::string unit = {});
  // Stages that will not run (a skipped batch) stop counting towards the whole.
  void drop(int from);
  // The model a workflow loaded, once known: the timings of the stages still to come are
  // looked up for its family and compute dtype.
  void setModel(std::string family, std::string dtype);
  // What a stage's units are, where it turns out to count something else (its expected
  // time is kept).
  void setUnit(int i, std::string unit);
  // A stage that several pieces of work share, one after the other: what the next piece
  // reports as done of its own total counts from `before` of the stage's `total` units.
  void share(int i, int64_t before, int64_t total);

  int current() const noexcept { return current_; }
  const Stage& stage(int i) const { return stages_[static_cast<std::size_t>(i)]; }
  int size() const noexcept { return static_cast<int>(stages_.size()); }

 private:
  using Clock = std::chrono::steady_clock;
  TimingKey keyOf(int i) const;
  double expectedTotal() const;
  double expectedDone() const;
  double remainingExpected() const { return std::max(0.0, expectedTotal() - expectedDone()); }
  void fill(Event& e);

  RunEnvironment& env_;
  TimingKey base_;
  std::vector<Stage> stages_;
  void estimate(int i);          // the stage's expected time from the timings
  std::vector<int64_t> pixels_;  // per stage, 0: the picture's
  std::vector<int64_t> expected_units_;
  // Per stage: its expected time is the built-in guess, never measured on this machine,
  // so no time left is given until it has finished ("estimating").
  std::vector<bool> guessed_;
  std::vector<double> fraction_done_;
  std::vector<std::pair<int64_t, int64_t>> shared_;  // per stage: (before, total); total 0: not
  double last_fraction_ = 0;                         // the fraction sent last
  int current_ = -1;
  Clock::time_point job_start_ = Clock::now(), stage_start_ = Clock::now(), last_progress_{};
};

}  // namespace kiln::nodes
