#include "nodes/progress_tracker.h"

#include <algorithm>

namespace kiln::nodes {

TimingKey ProgressTracker::keyOf(int i) const {
  TimingKey key = base_;
  key.kind = stages_[static_cast<std::size_t>(i)].kind;
  if (pixels_[static_cast<std::size_t>(i)] > 0) key.pixels = pixels_[static_cast<std::size_t>(i)];
  return key;
}

int ProgressTracker::add(StageKind kind, std::string name, std::string unit, int64_t total,
                         int image, int64_t expected_units, int64_t pixels) {
  Stage s;
  s.kind = kind;
  s.name = std::move(name);
  s.unit = std::move(unit);
  s.total = total;
  s.image = image;
  stages_.push_back(std::move(s));
  pixels_.push_back(pixels);
  fraction_done_.push_back(0);
  shared_.emplace_back(0, 0);
  expected_units_.push_back(expected_units);
  guessed_.push_back(false);
  const int i = static_cast<int>(stages_.size()) - 1;
  estimate(i);
  return i;
}

void ProgressTracker::estimate(int i) {
  const auto k = static_cast<std::size_t>(i);
  stages_[k].expected_seconds = env_.timings ? env_.timings->secondsPerUnit(keyOf(i)) *
                                                   static_cast<double>(expected_units_[k])
                                             : 1.0;
  guessed_[k] = env_.timings && !env_.timings->known(keyOf(i));
}

void ProgressTracker::setModel(std::string family, std::string dtype) {
  base_.family = std::move(family);
  base_.dtype = std::move(dtype);
  for (int i = 0; i < size(); ++i)
    if (fraction_done_[static_cast<std::size_t>(i)] < 1.0 && i != current_) estimate(i);
}

void ProgressTracker::setUnit(int i, std::string unit) {
  stages_[static_cast<std::size_t>(i)].unit = std::move(unit);
}

void ProgressTracker::plan() {
  Event e;
  e.type = EventType::StagePlanned;
  e.stages = stages_;
  e.eta_seconds = remainingExpected();
  for (std::size_t k = 0; k < stages_.size(); ++k)
    if (guessed_[k]) e.eta_seconds = -1;
  env_.emit(std::move(e));
  job_start_ = Clock::now();
}

void ProgressTracker::start(int i) {
  current_ = i;
  stage_start_ = Clock::now();
  Event e;
  e.type = EventType::StageStarted;
  e.stage = i;
  e.total = stages_[static_cast<std::size_t>(i)].total;
  e.unit = stages_[static_cast<std::size_t>(i)].unit;
  fill(e);
  env_.emit(std::move(e));
}

void ProgressTracker::share(int i, int64_t before, int64_t total) {
  shared_[static_cast<std::size_t>(i)] = {before, total};
}

void ProgressTracker::progress(int i, int64_t done, int64_t total) {
  Stage& s = stages_[static_cast<std::size_t>(i)];
  if (const auto [before, whole] = shared_[static_cast<std::size_t>(i)]; whole > 0) {
    done = std::min(before + done, whole);
    total = whole;
  }
  s.total = total;
  fraction_done_[static_cast<std::size_t>(i)] =
      total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0)
                : 0.0;
  const auto now = Clock::now();
  if (done != total && done != 1 && now - last_progress_ < std::chrono::milliseconds(10)) return;
  last_progress_ = now;
  Event e;
  e.type = EventType::Progress;
  e.stage = i;
  e.done = done;
  e.total = total;
  e.unit = s.unit;
  fill(e);
  env_.emit(std::move(e));
}

void ProgressTracker::finish(int i) {
  Stage& s = stages_[static_cast<std::size_t>(i)];
  fraction_done_[static_cast<std::size_t>(i)] = 1.0;
  const double seconds = std::chrono::duration<double>(Clock::now() - stage_start_).count();
  if (env_.timings) {
    env_.timings->record(keyOf(i), s.total, seconds);
    // Stages still to come that were guessed may now have this measurement. (Their
    // weights stay as planned, so the overall fraction never runs backwards.)
    for (int k = i + 1; k < size(); ++k)
      if (guessed_[static_cast<std::size_t>(k)])
        guessed_[static_cast<std::size_t>(k)] = !env_.timings->known(keyOf(k));
  }
  Event e;
  e.type = EventType::StageFinished;
  e.stage = i;
  e.done = s.total;
  e.total = s.total;
  e.unit = s.unit;
  fill(e);
  env_.emit(std::move(e));
  current_ = -1;
}

void ProgressTracker::update(int i, std::string name, int64_t total, int64_t pixels,
                             std::string unit) {
  Stage& s = stages_[static_cast<std::size_t>(i)];
  s.name = std::move(name);
  if (!unit.empty()) s.unit = std::move(unit);
  s.total = total;
  pixels_[static_cast<std::size_t>(i)] = pixels;
  expected_units_[static_cast<std::size_t>(i)] = total;
  if (env_.timings) estimate(i);
  Event e;
  e.type = EventType::StageUpdated;
  e.stage = i;
  e.stages = {s};
  e.total = total;
  e.unit = s.unit;
  fill(e);
  env_.emit(std::move(e));
}

void ProgressTracker::drop(int from) {
  for (std::size_t k = static_cast<std::size_t>(from); k < stages_.size(); ++k) {
    stages_[k].expected_seconds = 0;
    guessed_[k] = false;
  }
}

double ProgressTracker::expectedTotal() const {
  double t = 0;
  for (const auto& s : stages_) t += s.expected_seconds;
  return t;
}

double ProgressTracker::expectedDone() const {
  double t = 0;
  for (std::size_t k = 0; k < stages_.size(); ++k)
    t += stages_[k].expected_seconds * fraction_done_[k];
  return t;
}

void ProgressTracker::fill(Event& e) {
  const double total = expectedTotal();
  const double done = expectedDone();
  // Never backwards, also when the stages' weights change (a workflow's model, once known).
  e.fraction = std::max(last_fraction_, total > 0 ? std::clamp(done / total, 0.0, 1.0) : 0.0);
  last_fraction_ = e.fraction;
  // Scale the remaining expectation by how this run compares with it so far.
  const double elapsed = std::chrono::duration<double>(Clock::now() - job_start_).count();
  const double speed = done > 0.05 * total && done > 0 ? std::clamp(elapsed / done, 0.2, 5.0) : 1.0;
  e.eta_seconds = std::max(0.0, total - done) * speed;
  // A stage still to finish that was never timed here makes any figure a guess.
  for (std::size_t k = 0; k < stages_.size(); ++k)
    if (guessed_[k] && fraction_done_[k] < 1.0) e.eta_seconds = -1;
}

}  // namespace kiln::nodes
