// How jobs load models: the compute precision by name, and a model through its family.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>

#include "kiln/render.h"
#include "memory/device.h"
#include "pipelines/common/loaded_model.h"
#include "pipelines/registry.h"

namespace kiln::nodes {

using pipelines::LoadedModel;
using pipelines::modelKey;

// Compute precision by name ("auto", "fp32", "bf16", "fp16") and back; throws
// kiln::Error(InvalidArgument) for another name. Auto is fp16 on a CUDA device and the
// CPU's fast precision (fastCpuDType) on the others, which compute on the CPU.
at::ScalarType computeScalarType(const std::string& name, const memory::Device& device);
at::ScalarType computeScalarType(ComputeDType dtype, const memory::Device& device);
const char* computeDtypeName(at::ScalarType dtype);
// fp16 needs a CUDA device (libtorch's CPU kernels lack half precision): throws
// kiln::Error(InvalidArgument) saying what to choose instead.
void checkComputeDtype(at::ScalarType dtype, const memory::Device& device);

// Loads the model `request` names through its family (the request resolved already).
std::shared_ptr<LoadedModel> loadModel(const pipelines::Family& family,
                                       const pipelines::ModelRequest& request,
                                       const memory::Device& device,
                                       const pipelines::LoadProgress& progress);

}  // namespace kiln::nodes
