// What a job's work runs with (the model cache, the device, the writers, the Skip flag) and
// what it returns, with the pieces every node and job shares: saving without leaving
// partial files, placing a model with room for the work, telling out-of-memory apart.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "kiln/engine.h"
#include "kiln/units.h"  // formatNumber: numbers in messages and the A1111 text
#include "nodes/events.h"

namespace at {
class Tensor;
}  // namespace at

namespace kiln::memory {
class Device;
class ModelCache;
}  // namespace kiln::memory

namespace kiln::pipelines {
class LoadedModel;
}  // namespace kiln::pipelines

namespace kiln::nodes {

class StageTimings;
using pipelines::LoadedModel;

struct RunEnvironment {
  memory::ModelCache* cache = nullptr;  // null: load for this job only
  memory::Device* device = nullptr;     // null: the CPU
  OffloadSettings offload;
  StageTimings* timings = nullptr;
  std::function<void(Event)> emit;  // the job id is filled in by the caller
  std::function<void(const std::string& path, const Image& image)> write_image;
  const std::atomic<bool>* skip = nullptr;  // finish the current image, drop the rest
  std::atomic<int64_t>* job_bytes = nullptr;
  std::function<Image(const std::string& path)> read_image;
  std::function<void(const std::string&, const std::vector<Image>&, const VideoWriteOptions&)>
      write_video;
  std::vector<std::string> embedding_dirs;  // textual-inversion embeddings for the prompts
};

struct JobResult {
  std::vector<Image> images;
  std::vector<Image> frames;  // a video model's (images holds the first)
  double fps = 0;
  std::vector<std::string> paths;
  std::vector<std::string> notices;
  std::string model_family;
};

// The bytes a job holds in tensors and images, counted into the engine's accounting and
// given back when the job ends, however it ends.
class JobBytes {
 public:
  explicit JobBytes(std::atomic<int64_t>* counter) : counter_(counter) {}
  ~JobBytes() {
    if (counter_) counter_->fetch_sub(held_);
  }
  JobBytes(const JobBytes&) = delete;
  JobBytes& operator=(const JobBytes&) = delete;
  void add(int64_t bytes) {
    held_ += bytes;
    if (counter_) counter_->fetch_add(bytes);
  }

 private:
  std::atomic<int64_t>* counter_ = nullptr;
  int64_t held_ = 0;
};

// [H, W, 3] float in [0, 1] -> Image.
Image imageFromRgb(const at::Tensor& rgb);

// Written under a temporary name and renamed into place only if the job was not
// cancelled meanwhile: an interrupted or failed save leaves no file behind.
void saveImage(const std::string& path, const Image& image, const RunEnvironment& env);
// "out.png" for the first picture of a batch, "out-2.png", "out-3.png" ... for the others.
std::string numberedPath(const std::string& path, int64_t picture);
// Saves `image` in `dir` as "<prefix>-NNNNN.png", NNNNN from `number` on, under the first
// name no file has, claimed atomically (another Kiln saving into the same folder at the
// same moment never overwrites it, nor is overwritten); `number` ends past the name used.
// Returns the path.
std::string saveNewImage(const std::string& dir, const std::string& prefix, int& number,
                         const Image& image, const RunEnvironment& env);

// Makes room on an accelerator for the model's weights that are not there yet and for
// `working_bytes` of work, then places the model (nothing on the CPU).
void placeModel(LoadedModel& model, RunEnvironment& env, memory::Device& device,
                int64_t working_bytes);

// True when the caller gave an image (even an empty, malformed one, which validation refuses).
bool hasImage(const Image& image);

}  // namespace kiln::nodes
