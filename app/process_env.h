// Settings that the OpenMP runtime reads only once, when the process starts.
#pragma once

#include <unistd.h>

#include <cstdlib>

namespace kiln::app {

// libtorch's OpenMP threads (libgomp) spin for a long while after every parallel region.
// When the GUI, the engine thread or another process then needs a core, the spinning
// team stalls the engine for a scheduler slice. Measured on 2 cores (bench_interrupt,
// test_starter_model): spinning by default, cancel p99 78 ms and 82 s for the starter
// test; fully passive, 15 ms but 139 s; a short spin (GOMP_SPINCOUNT=20000), 19 ms and
// 101 s. Re-executes the program once with the short spin unless the user chose a wait
// policy or spin count; if the re-execution fails, the program simply goes on.
inline void ensureShortOpenMpSpin(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  ::setenv("GOMP_SPINCOUNT", "20000", 1);
  ::execv("/proc/self/exe", argv);
}

}  // namespace kiln::app
