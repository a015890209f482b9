// Cooperative interruption. A job owns a CancelToken; the engine thread runs the job
// inside an InterruptScope, and model code calls checkInterrupt() at every block, layer,
// tensor and tile boundary. Code that runs outside a scope (the trainer, plain render())
// pays one thread-local read per check and is never interrupted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <source_location>
#include <string>

namespace kiln::core {

class CancelToken {
 public:
  void cancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

// What the checks on one thread have seen since the scope began.
struct InterruptStats {
  int64_t checks = 0;
  double longest_gap_seconds = 0;                // the longest time between two consecutive checks
  std::string longest_gap_from, longest_gap_to;  // "file:line" of the checks around it
};

// Makes `token` the current thread's token until destruction (scopes do not nest).
class InterruptScope {
 public:
  explicit InterruptScope(const CancelToken& token) noexcept;
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  InterruptStats stats() const noexcept;
};

// Throws kiln::Error(Cancelled) when the current thread's token has been cancelled.
void checkInterrupt(std::source_location where = std::source_location::current());

// True when the current thread runs inside a scope whose token has been cancelled.
bool interruptRequested() noexcept;

}  // namespace kiln::core
