// The conformance UNet and VAE on a GPU (CUDA, or ROCm/HIP through libtorch's "cuda"
// device). Skips cleanly where libtorch has no GPU or none is present.
#include <QtTest>

#include <cstdio>

#include "pipelines/sd/sd_pipeline.h"
#include "ref_tensors.h"

namespace {

// The reference UNet call's inputs on `gpu` (the UNet casts them to its dtype).
kiln::models::UNetInputs referenceInputs(const kiln::pipelines::SdPipeline& pipe,
                                         const kiln::testing::RefFile& ref, const at::Device& gpu) {
  kiln::models::UNetInputs in;
  in.latent = ref["in_latent"].to(gpu);
  in.timesteps = ref["in_timestep"].to(gpu);
  in.context = ref["in_context"].to(gpu);
  if (pipe.unet().config().adm_in_channels > 0)
    in.y =
        pipe.unet().timeIdConditioning(ref["in_text_embeds"].to(gpu), ref["in_time_ids"].to(gpu));
  return in;
}

}  // namespace

class TestGpuConformance : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void unetAndVaeMatchOnGpu_data() {
    QTest::addColumn<QString>("family");
    QTest::newRow("sd1") << QString("sd1");
    QTest::newRow("sdxl") << QString("sdxl");
  }
  void unetAndVaeMatchOnGpu() {
    if (!at::hasCUDA()) QSKIP("no GPU: libtorch has no CUDA/HIP support or no device is present");
    QFETCH(QString, family);
    const std::string f = family.toStdString();
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
    kiln::pipelines::SdPipeline pipe(kiln::models::openCheckpoint(kiln::testing::conformancePath(
                                         "sd-tiny-1234/" + f + "/" + f + "_tiny_ldm.safetensors")),
                                     at::kFloat);
    const at::Device gpu(at::kCUDA, 0);
    kiln::weights::moveParams(pipe.unet().params(), gpu);
    kiln::weights::moveParams(pipe.vae().params(), gpu);
    const kiln::testing::RefFile ref("sd-tiny-1234/" + f + "/ref_unet.safetensors");
    const kiln::models::UNetInputs in = referenceInputs(pipe, ref, gpu);
    const double unet_err =
        kiln::testing::maxAbsDiff(pipe.unet().forward(in).cpu(), ref["out_eps"]);
    QVERIFY2(unet_err <= 1e-4, qPrintable(QString::number(unet_err)));
    const kiln::testing::RefFile vae("sd-tiny-1234/" + f + "/ref_vae.safetensors");
    const double vae_err = kiln::testing::maxAbsDiff(
        pipe.vae().decode(vae["decode_in_latent"].to(gpu)).cpu(), vae["decode_out_image"]);
    QVERIFY2(vae_err <= 1e-4, qPrintable(QString::number(vae_err)));
  }

  // fp16 compute: the UNet in half precision within fp16's rounding of the reference,
  // the VAE kept in fp32 (upcast) and as exact as the fp32 run.
  void halfPrecisionOnGpu_data() { unetAndVaeMatchOnGpu_data(); }
  void halfPrecisionOnGpu() {
    if (!at::hasCUDA()) QSKIP("no GPU: libtorch has no CUDA/HIP support or no device is present");
    QFETCH(QString, family);
    const std::string f = family.toStdString();
    kiln::pipelines::SdPipeline pipe(kiln::models::openCheckpoint(kiln::testing::conformancePath(
                                         "sd-tiny-1234/" + f + "/" + f + "_tiny_ldm.safetensors")),
                                     at::kHalf);
    QCOMPARE(pipe.codec().dtype, at::kFloat);
    const at::Device gpu(at::kCUDA, 0);
    kiln::weights::moveParams(pipe.unet().params(), gpu);
    kiln::weights::moveParams(pipe.vae().params(), gpu);
    QCOMPARE(pipe.unet().params().slots().front().tensor->scalar_type(), at::kHalf);
    QCOMPARE(pipe.vae().params().slots().front().tensor->scalar_type(), at::kFloat);
    const kiln::testing::RefFile ref("sd-tiny-1234/" + f + "/ref_unet.safetensors");
    const kiln::models::UNetInputs in = referenceInputs(pipe, ref, gpu);
    const at::Tensor want = ref["out_eps"];
    const double unet_err =
        kiln::testing::maxAbsDiff(pipe.unet().forward(in).to(at::kFloat).cpu(), want);
    const double scale = std::max(1.0, want.abs().max().item<double>());
    QVERIFY2(unet_err <= 1e-2 * scale, qPrintable(QString::number(unet_err)));
    const kiln::testing::RefFile vae("sd-tiny-1234/" + f + "/ref_vae.safetensors");
    const double vae_err = kiln::testing::maxAbsDiff(
        pipe.codec().vae->decode(vae["decode_in_latent"].to(gpu)).to(at::kFloat).cpu(),
        vae["decode_out_image"]);
    QVERIFY2(vae_err <= 1e-4, qPrintable(QString::number(vae_err)));
  }
};

// Without a GPU nothing here can run: ctest reports the test as skipped (exit code 77,
// its SKIP_RETURN_CODE), not as passed.
int main(int argc, char** argv) {
  if (!at::hasCUDA()) {
    std::printf("SKIP: no GPU (libtorch has no CUDA/HIP support or no device is present)\n");
    return 77;
  }
  TestGpuConformance test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_gpu_conformance.moc"
