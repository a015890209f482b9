// The Wan 2.1 conformance models on the GPU: the transformer and the causal video VAE in
// fp32 within 1e-4 of the references, the transformer in fp16 and bf16 within 1% of the
// output's scale.
#include <algorithm>
#include <memory>
#include <string>

#include "gpu_check.h"
#include "models/wan/wan_model.h"
#include "ref_tensors.h"

namespace {

namespace km = kiln::models;
using kiln::testing::maxAbsDiff;
using kiln::testing::RefFile;

const at::Device kGpu(at::kCUDA, 0);
const std::string kDir = "wan21-tiny-1234/";

template <typename Model, typename Component>
std::unique_ptr<Model> onGpu(const Component& c, at::ScalarType dtype) {
  auto model = std::make_unique<Model>(c.config, "");
  kiln::weights::LoadOptions opts;
  opts.dtype = dtype;
  opts.owned_prefixes = {""};
  kiln::weights::loadParams(model->params(), c.index, opts, "gpu test");
  kiln::weights::moveParams(model->params(), kGpu);
  return model;
}

std::unique_ptr<km::WanTransformer> transformer(at::ScalarType dtype) {
  return onGpu<km::WanTransformer>(km::openWanTransformer(kiln::testing::conformancePath(
                                       kDir + "wan2.1_t2v_tiny_original.safetensors")),
                                   dtype);
}

// The reference call's output for the conditional prompt, back on the CPU in fp32.
at::Tensor conditional(const km::WanTransformer& model, const RefFile& ref, at::ScalarType dtype) {
  return model
      .forward(ref["in_latent"].to(kGpu, dtype), ref["in_timestep"].to(kGpu),
               ref["in_context_cond"].to(kGpu, dtype))
      .to(at::kFloat)
      .cpu();
}

void transformerWithinOnePercent(at::ScalarType dtype) {
  const auto model = transformer(dtype);
  const RefFile ref(kDir + "ref_transformer.safetensors");
  const at::Tensor want = ref["out_cond"];
  const double err = maxAbsDiff(conditional(*model, ref, dtype), want);
  const double scale = std::max(1.0, want.abs().max().item<double>());
  GPU_CHECK(err <= 1e-2 * scale, "the transformer is off by " + std::to_string(err));
}

}  // namespace

GPU_TEST(wanTransformerMatchesTheReferenceInFp32) {
  const auto model = transformer(at::kFloat);
  const RefFile ref(kDir + "ref_transformer.safetensors");
  const double cond = maxAbsDiff(conditional(*model, ref, at::kFloat), ref["out_cond"]);
  GPU_CHECK(cond <= 1e-4, "conditional output off by " + std::to_string(cond));
  const double one_frame =
      maxAbsDiff(model
                     ->forward(ref["in_latent_f1"].to(kGpu), ref["in_timestep"].to(kGpu),
                               ref["in_context_cond"].to(kGpu))
                     .cpu(),
                 ref["out_cond_f1"]);
  GPU_CHECK(one_frame <= 1e-4, "one latent frame off by " + std::to_string(one_frame));
}

GPU_TEST(wanVaeDecodesTheReferenceInFp32) {
  const auto vae = onGpu<km::WanVae>(
      km::openWanVae(kiln::testing::conformancePath(kDir + "wan2.1_vae_tiny_original.safetensors")),
      at::kFloat);
  const RefFile ref(kDir + "ref_vae.safetensors");
  for (const std::string n : {"decode", "decode3"}) {
    const at::Tensor raw = vae->decodeRaw(ref[n + "_in_latent"].to(kGpu), 1).cpu();
    const double err = maxAbsDiff(raw, ref[n + "_out_video_unclamped"]);
    GPU_CHECK(err <= 1e-4, n + " off by " + std::to_string(err));
  }
}

GPU_TEST(wanTransformerWithinOnePercentInFp16) {
  transformerWithinOnePercent(at::kHalf);
}

GPU_TEST(wanTransformerWithinOnePercentInBf16) {
  kiln::gpu_check::requireBf16();
  transformerWithinOnePercent(at::kBFloat16);
}
