#include "nodes/run_environment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/interrupt.h"
#include "kiln/render_workflow.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "nodes/model_loading.h"
#include "nodes/vae_stage.h"
#include "pipelines/common/image_prep.h"

namespace kiln::nodes {

Image imageFromRgb(const at::Tensor& rgb) {
  const at::Tensor hwc = rgb.to(at::kFloat).contiguous();
  Image image;
  image.height = static_cast<int>(hwc.size(0));
  image.width = static_cast<int>(hwc.size(1));
  image.channels = 3;
  const float* src = hwc.data_ptr<float>();
  image.pixels.assign(src, src + hwc.numel());
  return image;
}

std::string numberedPath(const std::string& path, int64_t picture) {
  if (picture == 0) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() /
          (p.stem().string() + "-" + std::to_string(picture + 1) + p.extension().string()))
      .string();
}

void saveImage(const std::string& path, const Image& image, const RunEnvironment& env) {
  core::checkInterrupt();
  core::AtomicFile file(path);
  env.write_image(file.temporaryPath(), image);
  core::checkInterrupt();
  file.commit();
}

std::string saveNewImage(const std::string& dir, const std::string& prefix, int& number,
                         const Image& image, const RunEnvironment& env) {
  const auto nameFor = [&](int n) {
    char name[32];
    std::snprintf(name, sizeof name, "-%05d.png", n);
    return (std::filesystem::path(dir) / (prefix + name)).string();
  };
  const auto nextFree = [&] {
    std::string path;
    do path = nameFor(number++);
    while (std::filesystem::exists(path));
    return path;
  };
  core::checkInterrupt();
  core::AtomicFile file(nextFree());
  env.write_image(file.temporaryPath(), image);
  core::checkInterrupt();
  while (!file.commitIfAbsent()) file.retarget(nextFree());  // taken since: the next one
  return file.finalPath();
}

void placeModel(LoadedModel& model, RunEnvironment& env, memory::Device& device,
                int64_t working_bytes) {
  if (!device.isAccelerator()) return;
  // The working reserve is kept free beside the weights where the device has room for it.
  int64_t reserve = env.offload.working_reserve_bytes;
  int64_t available = 0;
  const int64_t needed = model.deviceBytesNeeded(env.offload);
  if (env.cache && needed + working_bytes + reserve == 0) {
    available = env.cache->availableDeviceBytes();  // placed already, no work to make room for
  } else if (env.cache) {
    memory::MakeRoomResult room;
    try {
      room = env.cache->makeRoom(needed, working_bytes + reserve);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::OutOfMemory || reserve == 0) throw;
      env.emit(logEvent("the working reserve of " + formatBytes(reserve) + " does not fit beside " +
                        model.describe() + " on " + device.name() + "; placing without it"));
      reserve = 0;
      room = env.cache->makeRoom(needed, working_bytes);
    }
    for (const auto& w : room.warnings) env.emit(logEvent(w));
    for (const auto& m : room.offloaded)
      env.emit(logEvent("moved " + m + " off " + device.name() + " to make room"));
    available = room.available_bytes;
  } else {
    available = device.memory().free_bytes;
  }
  // Balanced mode keeps resident what fits beside the work (at least that of the model's
  // native size, so a placement made between jobs leaves room for one) and the reserve,
  // counting the model's own device bytes (placing again moves them first), as the memory
  // map does. Each line as it happens: a component's before its pin step, which may take
  // long.
  const int64_t room = available + model.weightDeviceBytes();
  const int64_t beside = std::max(working_bytes, model.nativeWorkingBytes());
  (void)model.place(env.offload, std::max<int64_t>(room - beside - reserve, 0),
                    [&](const std::string& line) { env.emit(logEvent(line)); });
}

bool hasImage(const Image& image) {
  return image.width != 0 || image.height != 0 || image.channels != 0 || !image.pixels.empty();
}

}  // namespace kiln::nodes
