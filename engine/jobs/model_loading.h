// How jobs name and load models: the model cache's keys, the compute precision by name,
// and loading a video model's parts.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>

#include "pipelines/common/loaded_model.h"
#include "kiln/render.h"
#include "memory/device.h"
#include "pipelines/wan/wan_pipeline.h"

namespace kiln::jobs {

using pipelines::LoadedModel;

// Identifies a model file as loaded: path, size and modification time, dtype.
std::string modelKey(const std::string& path, at::ScalarType dtype);

// Compute precision by name ("auto", "fp32", "bf16", "fp16") and back; throws
// kiln::Error(InvalidArgument) for another name. Auto is fp16 on a CUDA device and the
// CPU's fast precision (fastCpuDType) on the others, which compute on the CPU.
at::ScalarType computeScalarType(const std::string& name, const memory::Device& device);
at::ScalarType computeScalarType(ComputeDType dtype, const memory::Device& device);
const char* computeDtypeName(at::ScalarType dtype);
// fp16 needs a CUDA device (libtorch's CPU kernels lack half precision): throws
// kiln::Error(InvalidArgument) saying what to choose instead.
void checkComputeDtype(at::ScalarType dtype, const memory::Device& device);

// The model cache's key of a video model: its three parts as loaded.
std::string videoModelKey(const pipelines::WanModelPaths& paths, at::ScalarType dtype);

// Loads a video model (the VAE in fp32 when the rest is fp16, whose range it needs);
// progress counts tensors.
std::shared_ptr<LoadedModel> loadVideoModel(const pipelines::WanModelPaths& paths, at::ScalarType dtype,
                                            const memory::Device& device,
                                            const std::function<void(std::size_t, std::size_t)>& progress);

}  // namespace kiln::jobs
