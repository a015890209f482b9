#include "core/interrupt.h"

#include <algorithm>

#include "kiln/error.h"

namespace kiln::core {
namespace {

using Clock = std::chrono::steady_clock;

struct ThreadState {
  const CancelToken* token = nullptr;
  Clock::time_point last_check{};
  InterruptStats stats;
};

thread_local ThreadState t_state;

}  // namespace

InterruptScope::InterruptScope(const CancelToken& token) noexcept {
  t_state = {&token, Clock::now(), {}};
}

InterruptScope::~InterruptScope() { t_state.token = nullptr; }

InterruptStats InterruptScope::stats() const noexcept { return t_state.stats; }

void checkInterrupt() {
  ThreadState& s = t_state;
  if (s.token == nullptr) return;
  const Clock::time_point now = Clock::now();
  s.stats.longest_gap_seconds = std::max(
      s.stats.longest_gap_seconds, std::chrono::duration<double>(now - s.last_check).count());
  s.last_check = now;
  ++s.stats.checks;
  if (s.token->cancelled()) throw Error(ErrorKind::Cancelled, "the job was cancelled");
}

bool interruptRequested() noexcept { return t_state.token != nullptr && t_state.token->cancelled(); }

}  // namespace kiln::core
