#include "core/interrupt.h"

#include <algorithm>

#include "kiln/error.h"

namespace kiln::core {
namespace {

using Clock = std::chrono::steady_clock;

struct ThreadState {
  const CancelToken* token = nullptr;
  Clock::time_point last_check{};
  std::source_location last_where{};
  bool any_check = false;
  InterruptStats stats;
};

std::string place(const std::source_location& where) {
  const std::string file = where.file_name();
  const auto slash = file.find("/engine/");
  return (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" +
         std::to_string(where.line());
}

thread_local ThreadState t_state;

}  // namespace

InterruptScope::InterruptScope(const CancelToken& token) noexcept {
  t_state = {&token, Clock::now(), {}, false, {}};
}

InterruptScope::~InterruptScope() {
  t_state.token = nullptr;
}

InterruptStats InterruptScope::stats() const noexcept {
  return t_state.stats;
}

void checkInterrupt(std::source_location where) {
  ThreadState& s = t_state;
  if (s.token == nullptr) return;
  const Clock::time_point now = Clock::now();
  const double gap = std::chrono::duration<double>(now - s.last_check).count();
  if (gap > s.stats.longest_gap_seconds) {
    s.stats.longest_gap_seconds = gap;
    s.stats.longest_gap_from = s.any_check ? place(s.last_where) : "the start of the job";
    s.stats.longest_gap_to = place(where);
  }
  s.last_check = now;
  s.last_where = where;
  s.any_check = true;
  ++s.stats.checks;
  if (s.token->cancelled()) throw Error(ErrorKind::Cancelled, "the job was cancelled");
}

bool interruptRequested() noexcept {
  return t_state.token != nullptr && t_state.token->cancelled();
}

}  // namespace kiln::core
