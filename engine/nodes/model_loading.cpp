#include "nodes/model_loading.h"

#include "kiln/error.h"
#include "memory/gpu_device.h"

namespace kiln::nodes {

at::ScalarType computeScalarType(ComputeDType dtype, const memory::Device& device) {
  if (dtype == ComputeDType::Auto)
    dtype = device.kind() == memory::DeviceKind::Cuda ? ComputeDType::Float16 : fastCpuDType();
  return dtype == ComputeDType::BFloat16  ? at::kBFloat16
         : dtype == ComputeDType::Float16 ? at::kHalf
                                          : at::kFloat;
}

at::ScalarType computeScalarType(const std::string& name, const memory::Device& device) {
  if (name == "auto") return computeScalarType(ComputeDType::Auto, device);
  if (name == "fp32") return at::kFloat;
  if (name == "bf16") return at::kBFloat16;
  if (name == "fp16") return at::kHalf;
  throw Error(ErrorKind::InvalidArgument,
              "compute precision '" + name + "' is not auto, fp32, bf16 or fp16");
}

const char* computeDtypeName(at::ScalarType dtype) {
  return dtype == at::kBFloat16 ? "bf16" : dtype == at::kHalf ? "fp16" : "fp32";
}

void checkComputeDtype(at::ScalarType dtype, const memory::Device& device) {
  if (dtype == at::kHalf && device.kind() != memory::DeviceKind::Cuda)
    throw Error(ErrorKind::InvalidArgument, "fp16 compute needs a GPU (the " + device.name() +
                                                " device has no half-precision kernels); choose "
                                                "bf16 (fast on CPUs with AVX-512 BF16) or fp32");
  if (const auto* gpu = dynamic_cast<const memory::GpuDevice*>(&device);
      gpu && dtype == at::kBFloat16 && !gpu->properties().bf16)
    throw Error(ErrorKind::InvalidArgument,
                gpu->name() + " (" + gpu->properties().name + ", " + gpu->properties().arch +
                    ") has no bf16 arithmetic; choose fp16 (or auto) or fp32");
}

std::shared_ptr<LoadedModel> loadModel(const pipelines::Family& family,
                                       const pipelines::ModelRequest& request,
                                       const memory::Device& device,
                                       const pipelines::LoadProgress& progress) {
  return std::make_shared<LoadedModel>(family.open(request, progress), device);
}

}  // namespace kiln::nodes
