// An engine on a simulated device (or any device) that runs jobs one at a time and keeps
// every event, for tests that drive the engine as the app does.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/engine.h"

namespace kiln::testing {

// An engine on a simulated device that keeps two models and runs jobs one at a time.
class SimEngine {
 public:
  explicit SimEngine(const std::string& device, int cached_models = 2) {
    kiln::EngineOptions o;
    o.device = device;
    o.cached_models = cached_models;
    o.sink = [this](const kiln::Event& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(e);
      changed_.notify_all();
    };
    engine_ = std::make_unique<kiln::Engine>(std::move(o));
  }
  kiln::Engine& engine() { return *engine_; }
  // The job's last event (finished, failed or cancelled).
  kiln::Event run(kiln::Job job) {
    const kiln::JobId id = engine_->submit(std::move(job));
    std::unique_lock<std::mutex> lock(mutex_);
    kiln::Event end;
    changed_.wait_for(lock, std::chrono::seconds(300), [&] {
      for (const auto& e : events_)
        if (e.job == id &&
            (e.type == kiln::EventType::JobFinished || e.type == kiln::EventType::JobFailed ||
             e.type == kiln::EventType::JobCancelled)) {
          end = e;
          return true;
        }
      return false;
    });
    return end;
  }
  bool logged(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::any_of(events_.begin(), events_.end(), [&](const kiln::Event& e) {
      return e.type == kiln::EventType::Log && e.message.find(text) != std::string::npos;
    });
  }
  // Log lines outside any job (the engine's own, between jobs) holding every one of `parts`.
  int loggedIdle(const std::vector<std::string>& parts) {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(
        std::count_if(events_.begin(), events_.end(), [&](const kiln::Event& e) {
          return e.job == 0 && e.type == kiln::EventType::Log &&
                 std::all_of(parts.begin(), parts.end(), [&](const std::string& p) {
                   return e.message.find(p) != std::string::npos;
                 });
        }));
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<kiln::Event> events_;
  std::unique_ptr<kiln::Engine> engine_;
};

}  // namespace kiln::testing
