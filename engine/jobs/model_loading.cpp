#include "jobs/model_loading.h"

#include <filesystem>

#include "kiln/error.h"

namespace kiln::jobs {

at::ScalarType computeScalarType(ComputeDType dtype, const memory::Device& device) {
  if (dtype == ComputeDType::Auto)
    dtype = device.kind() == memory::DeviceKind::Cuda ? ComputeDType::Float16 : fastCpuDType();
  return dtype == ComputeDType::BFloat16 ? at::kBFloat16 : dtype == ComputeDType::Float16 ? at::kHalf : at::kFloat;
}

at::ScalarType computeScalarType(const std::string& name, const memory::Device& device) {
  if (name == "auto") return computeScalarType(ComputeDType::Auto, device);
  if (name == "fp32") return at::kFloat;
  if (name == "bf16") return at::kBFloat16;
  if (name == "fp16") return at::kHalf;
  throw Error(ErrorKind::InvalidArgument, "compute precision '" + name + "' is not auto, fp32, bf16 or fp16");
}

const char* computeDtypeName(at::ScalarType dtype) {
  return dtype == at::kBFloat16 ? "bf16" : dtype == at::kHalf ? "fp16" : "fp32";
}

void checkComputeDtype(at::ScalarType dtype, const memory::Device& device) {
  if (dtype == at::kHalf && device.kind() != memory::DeviceKind::Cuda)
    throw Error(ErrorKind::InvalidArgument,
                "fp16 compute needs a GPU (the " + device.name() +
                    " device has no half-precision kernels); choose bf16 (fast on CPUs with AVX-512 BF16) or fp32");
}

std::string modelKey(const std::string& path, at::ScalarType dtype) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  const std::string name = ec ? path : p.string();
  std::string key = name + "|" + at::toString(dtype);
  if (std::filesystem::is_regular_file(p, ec)) {
    key += "|" + std::to_string(std::filesystem::file_size(p, ec));
    key += "|" + std::to_string(std::filesystem::last_write_time(p, ec).time_since_epoch().count());
  }
  return key;
}

std::string videoModelKey(const pipelines::WanModelPaths& paths, at::ScalarType dtype) {
  return modelKey(paths.transformer, dtype) + "|" + modelKey(paths.vae, at::kFloat) + "|" +
         modelKey(paths.text_encoder, dtype);
}

std::shared_ptr<LoadedModel> loadVideoModel(const pipelines::WanModelPaths& paths, at::ScalarType dtype,
                                            const memory::Device& device,
                                            const std::function<void(std::size_t, std::size_t)>& progress) {
  auto pipeline = std::make_unique<pipelines::WanPipeline>(paths, dtype, dtype == at::kHalf ? at::kFloat : dtype, progress);
  return std::make_shared<LoadedModel>(std::move(pipeline), device);
}

}  // namespace kiln::jobs
