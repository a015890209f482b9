// Settings that the OpenMP runtime reads only once, when the process starts.
#pragma once

#include <unistd.h>

#include <cstdlib>

namespace kiln::app {

// libtorch's OpenMP threads otherwise spin after every parallel region. When the GUI, the
// engine thread or another process then needs a core, the spinning team stalls the
// engine for a scheduler slice: on 2 cores the p99 latency of a cancel went from 78 ms
// (spinning) to 15 ms (passive) with no loss in step time (bench_interrupt). Re-executes
// the program once with OMP_WAIT_POLICY=passive unless the user chose a policy; if the
// re-execution fails, the program simply goes on.
inline void ensurePassiveOpenMpWait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "passive", 1);
  ::execv("/proc/self/exe", argv);
}

}  // namespace kiln::app
