#include "jobs/job_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/interrupt.h"
#include "jobs/model_loading.h"
#include "jobs/vae_stage.h"
#include "kiln/render_workflow.h"
#include "kiln/units.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "pipelines/common/image_prep.h"

namespace kiln::jobs {

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
  // Balanced mode keeps resident what fits beside the work and the reserve.
  // Each line as it happens: a component's before its pin step, which may take long.
  (void)model.place(env.offload, std::max<int64_t>(available - working_bytes - reserve, 0),
                    [&](const std::string& line) { env.emit(logEvent(line)); });
}

bool hasImage(const Image& image) {
  return image.width != 0 || image.height != 0 || image.channels != 0 || !image.pixels.empty();
}

void validateJob(const Job& job) {
  const RenderParams& p = job.params;
  if (p.lora_mode == LoraMode::Invalid) throw Error(ErrorKind::InvalidArgument, "no LoRA mode set");
  if (p.lora_mode == LoraMode::Merge)
    for (const auto& l : p.loras)
      if (!l.keyframes.empty())
        throw Error(
            ErrorKind::InvalidArgument,
            "LoRA '" + l.path + "' changes strength over the steps, which needs hook or auto mode");
  if (p.steps < 1 || p.steps > 1000)
    throw Error(ErrorKind::InvalidArgument,
                "steps must be between 1 and 1000, got " + std::to_string(p.steps));
  if (p.frames < 0 || p.frames > 1025)
    throw Error(ErrorKind::InvalidArgument,
                "frames must be between 1 and 1025 (0: the model's default), got " +
                    std::to_string(p.frames));
  if (!std::isfinite(p.cfg_scale) || p.cfg_scale < 0 || p.cfg_scale > 100)
    throw Error(ErrorKind::InvalidArgument,
                "CFG scale must be between 0 and 100, got " + formatNumber(p.cfg_scale));
  const bool native = p.width == 0 && p.height == 0;
  if (!native && (p.width < 8 || p.height < 8 || p.width > 8192 || p.height > 8192))
    throw Error(ErrorKind::InvalidArgument,
                "width and height must be between 8 and 8192 pixels (or both 0 for the "
                "model's native size), got " +
                    std::to_string(p.width) + "x" + std::to_string(p.height));
  if (p.original_width < 0 || p.original_height < 0 || p.crop_top < 0 || p.crop_left < 0)
    throw Error(ErrorKind::InvalidArgument, "original size and crop offsets cannot be negative");
  if (p.dtype == ComputeDType::Invalid)
    throw Error(ErrorKind::InvalidArgument, "no compute dtype set");
  (void)sampling::parseSampler(p.sampler);  // an unknown name throws, naming the ones Kiln has
  (void)sampling::parseSchedule(p.scheduler);
  pipelines::validateTiling(vaeTilingSettings(p));
  if (!std::isfinite(p.denoise) || p.denoise <= 0 || p.denoise > 1)
    throw Error(ErrorKind::InvalidArgument,
                "denoise must be more than 0 and at most 1, got " + formatNumber(p.denoise));
  const bool init = hasImage(p.init_image), mask = hasImage(p.mask);
  if (init) pipelines::checkImage(p.init_image, "the init image");
  if (mask && !init)
    throw Error(ErrorKind::InvalidArgument,
                "a mask needs an init image: inpainting repaints part of a picture");
  if (mask) {
    pipelines::checkImage(p.mask, "the mask");
    if (p.mask.width != p.init_image.width || p.mask.height != p.init_image.height)
      throw Error(ErrorKind::InvalidArgument,
                  "the mask is " + std::to_string(p.mask.width) + "x" +
                      std::to_string(p.mask.height) + " pixels but the init image is " +
                      std::to_string(p.init_image.width) + "x" +
                      std::to_string(p.init_image.height) + "; they must be the same size");
  }
  if (p.mask_feather < 0 || p.mask_feather > 256)
    throw Error(
        ErrorKind::InvalidArgument,
        "the mask feather must be between 0 and 256 pixels, got " + std::to_string(p.mask_feather));
  if (job.batch < 1 || job.batch > 1000)
    throw Error(ErrorKind::InvalidArgument,
                "a batch has 1 to 1000 images, got " + std::to_string(job.batch));
}

std::string drawingWorkflow(const RenderParams& asked, const RenderParams& image) {
  RenderParams w = image;
  w.model_path = asked.model_path;  // the starter model stays "the starter model"
  try {
    return workflowToJson(renderWorkflow(w));
  } catch (const Error&) {
    return {};
  }
}

namespace {

bool isAllocationMessage(const std::string& what) {
  return what.find("alloc") != std::string::npos || what.find("out of memory") != std::string::npos;
}

}  // namespace

bool isOutOfMemory(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return e.kind() == ErrorKind::OutOfMemory;
  } catch (const std::bad_alloc&) {
    return true;
  } catch (const c10::OutOfMemoryError&) {
    return true;
  } catch (const c10::Error& e) {
    return isAllocationMessage(e.what_without_backtrace());
  } catch (...) {
    return false;
  }
}

[[noreturn]] void rethrowAsError() {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::OutOfMemory,
                "out of memory while rendering; try a smaller size or bf16 compute");
  } catch (const c10::Error& e) {
    // libtorch reports allocation failures as c10::Error; everything else is a bug.
    const std::string what = e.what_without_backtrace();
    if (isAllocationMessage(what))
      throw Error(ErrorKind::OutOfMemory, "out of memory while rendering: " + what);
    throw Error(ErrorKind::Internal, "internal error while rendering: " + what);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, std::string("internal error while rendering: ") + e.what());
  }
}

}  // namespace kiln::jobs
