// Runs one job's stages on the calling thread: plans them, reports each stage's progress
// with the calibrated overall fraction and ETA, checks the non-finite guards, saves
// without leaving partial files. Interruption comes from the thread's InterruptScope.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "kiln/engine.h"

namespace kiln::memory {
class Device;
class ModelCache;
}  // namespace kiln::memory

namespace kiln::jobs {

class StageTimings;

struct RunEnvironment {
  memory::ModelCache* cache = nullptr;  // null: load for this job only
  memory::Device* device = nullptr;     // null: the CPU
  OffloadSettings offload;
  StageTimings* timings = nullptr;
  std::function<void(Event)> emit;  // the job id is filled in by the caller
  std::function<void(const std::string& path, const Image& image)> write_image;
  const std::atomic<bool>* skip = nullptr;  // finish the current image, drop the rest
  std::atomic<int64_t>* job_bytes = nullptr;
};

struct JobResult {
  std::vector<Image> images;
  std::vector<std::string> paths;
  std::vector<std::string> notices;
  std::string model_family;
};

// A Log event carrying `message` (shown to the user as it is).
Event logEvent(std::string message);

// True when the caller gave an image (even an empty, malformed one, which validation refuses).
bool hasImage(const Image& image);

// "%g": how numbers appear in messages and in the A1111 parameters text.
std::string formatNumber(double v);

// Throws kiln::Error(InvalidArgument) for parameters that can never work.
void validateJob(const Job& job);

// Throws kiln::Error (Cancelled when interrupted) or whatever libtorch throws (see
// rethrowAsError). `failed_stage` receives the index of the stage that was running when
// it threw (-1 outside any stage).
JobResult runJob(const Job& job, RunEnvironment& env, int* failed_stage = nullptr);

// True for the errors allocators throw when memory runs out (std::bad_alloc,
// c10::OutOfMemoryError, libtorch's CPU allocation failures, kiln::Error(OutOfMemory)).
bool isOutOfMemory(const std::exception_ptr& error);

// Inside a catch block: rethrows the exception in flight as a kiln::Error (allocation
// failures as OutOfMemory, anything else unexpected as Internal).
[[noreturn]] void rethrowAsError();

}  // namespace kiln::jobs
