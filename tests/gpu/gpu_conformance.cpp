// The conformance UNet and VAE on the GPU, fp32 within 1e-4 of the references and fp16
// within 1% of the output's scale (the VAE kept in fp32 and as exact as the fp32 run).
#include <algorithm>
#include <memory>
#include <string>

#include "gpu_check.h"
#include "pipelines/sd/sd_pipeline.h"
#include "ref_tensors.h"

namespace {

using kiln::testing::maxAbsDiff;
using kiln::testing::RefFile;

const at::Device kGpu(at::kCUDA, 0);

// The reference UNet call's inputs on the GPU (the UNet casts them to its dtype).
kiln::models::UNetInputs referenceInputs(const kiln::pipelines::SdPipeline& pipe,
                                         const RefFile& ref) {
  kiln::models::UNetInputs in;
  in.latent = ref["in_latent"].to(kGpu);
  in.timesteps = ref["in_timestep"].to(kGpu);
  in.context = ref["in_context"].to(kGpu);
  if (pipe.unet().config().adm_in_channels > 0)
    in.y =
        pipe.unet().timeIdConditioning(ref["in_text_embeds"].to(kGpu), ref["in_time_ids"].to(kGpu));
  return in;
}

std::unique_ptr<kiln::pipelines::SdPipeline> onGpu(const std::string& family,
                                                   at::ScalarType dtype) {
  auto pipe = std::make_unique<kiln::pipelines::SdPipeline>(
      kiln::models::openCheckpoint(kiln::testing::conformancePath(
          "sd-tiny-1234/" + family + "/" + family + "_tiny_ldm.safetensors")),
      dtype);
  kiln::weights::moveParams(pipe->unet().params(), kGpu);
  kiln::weights::moveParams(pipe->vae().params(), kGpu);
  return pipe;
}

void fp32Matches(const std::string& f) {
  const auto owner = onGpu(f, at::kFloat);
  const kiln::pipelines::SdPipeline& pipe = *owner;
  const RefFile ref("sd-tiny-1234/" + f + "/ref_unet.safetensors");
  const double unet_err =
      maxAbsDiff(pipe.unet().forward(referenceInputs(pipe, ref)).cpu(), ref["out_eps"]);
  GPU_CHECK(unet_err <= 1e-4, f + " UNet off by " + std::to_string(unet_err));
  const RefFile vae("sd-tiny-1234/" + f + "/ref_vae.safetensors");
  const double vae_err = maxAbsDiff(pipe.vae().decode(vae["decode_in_latent"].to(kGpu)).cpu(),
                                    vae["decode_out_image"]);
  GPU_CHECK(vae_err <= 1e-4, f + " VAE off by " + std::to_string(vae_err));
}

void halfMatches(const std::string& f, at::ScalarType dtype) {
  const auto owner = onGpu(f, dtype);
  const kiln::pipelines::SdPipeline& pipe = *owner;
  // fp16 lacks the range the VAE needs, so it computes in fp32; bf16 has fp32's range.
  const bool upcast = pipe.codec().dtype == at::kFloat;
  GPU_CHECK(upcast || dtype == at::kBFloat16, "an fp16 render's VAE computes in fp32");
  const RefFile ref("sd-tiny-1234/" + f + "/ref_unet.safetensors");
  const at::Tensor want = ref["out_eps"];
  const double err =
      maxAbsDiff(pipe.unet().forward(referenceInputs(pipe, ref)).to(at::kFloat).cpu(), want);
  const double scale = std::max(1.0, want.abs().max().item<double>());
  GPU_CHECK(err <= 1e-2 * scale, f + " UNet off by " + std::to_string(err));
  const RefFile vae("sd-tiny-1234/" + f + "/ref_vae.safetensors");
  const double vae_err =
      maxAbsDiff(pipe.codec().vae->decode(vae["decode_in_latent"].to(kGpu)).to(at::kFloat).cpu(),
                 vae["decode_out_image"]);
  GPU_CHECK(vae_err <= (upcast ? 1e-4 : 2e-2), f + " VAE off by " + std::to_string(vae_err));
}

}  // namespace

GPU_TEST(sd1MatchesTheReferenceInFp32) {
  fp32Matches("sd1");
}

GPU_TEST(sdxlMatchesTheReferenceInFp32) {
  fp32Matches("sdxl");
}

GPU_TEST(sd1WithinOnePercentInFp16) {
  halfMatches("sd1", at::kHalf);
}

GPU_TEST(sdxlWithinOnePercentInFp16) {
  halfMatches("sdxl", at::kHalf);
}

GPU_TEST(sdxlWithinOnePercentInBf16) {
  kiln::gpu_check::requireBf16();
  halfMatches("sdxl", at::kBFloat16);
}
