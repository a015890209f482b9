// Tiled VAE decode and encode on the conformance VAEs: agreement with the full decode,
// seamless blending, the working-memory estimates against the counting allocator, and
// the peak memory of a large tiled decode.
#include <QtTest>

#include <ATen/Parallel.h>

#include <memory>

#include "memory/device.h"
#include "models/vae/vae_tiling.h"
#include "nodes/sd_pipeline.h"
#include "kiln/render.h"
#include "ref_tensors.h"

using kiln::models::LatentTiles;
using kiln::testing::maxAbs;
using kiln::testing::maxAbsDiff;

namespace {

std::string modelPath(const char* family) {
  return kiln::testing::conformancePath(std::string("sd-tiny-1234/") + family + "/" + family + "_tiny_ldm.safetensors");
}

at::Tensor randomLatent(int64_t h, int64_t w, uint64_t seed) { return kiln::nodes::seededNoise(static_cast<int64_t>(seed), {1, 4, h, w}); }

// Peak bytes the counting allocator saw while `fn` ran.
template <typename Fn>
int64_t measurePeak(Fn&& fn) {
  kiln::memory::SimulatedDevice dev(int64_t{64} << 30);
  {
    kiln::memory::DeviceScope scope(dev);
    fn();
  }
  return dev.memory().peak_allocated_bytes;
}

}  // namespace

class TestVaeTiling : public QObject {
  Q_OBJECT

  std::unique_ptr<kiln::nodes::SdPipeline> sd1_;
  const kiln::models::AutoencoderKL& vae() { return sd1_->vae(); }

 private Q_SLOTS:
  void initTestCase() {
    at::set_num_threads(2);
    sd1_ = std::make_unique<kiln::nodes::SdPipeline>(kiln::models::openCheckpoint(modelPath("sd1")), at::kFloat);
  }

  void measureStarter() {
    at::NoGradGuard ng;
    kiln::nodes::SdPipeline st(kiln::models::openCheckpoint(kiln::starterModelPath()), at::kFloat);
    // a synthetic picture: background, discs and squares
    const int64_t n = 512;
    at::Tensor yy = at::arange(n).view({n, 1}).expand({n, n}).to(at::kFloat), xx = at::arange(n).view({1, n}).expand({n, n}).to(at::kFloat);
    at::Tensor img = at::zeros({1, 3, n, n});
    img[0][0] = 0.8; img[0][1] = 0.8; img[0][2] = 0.9;
    for (int k = 0; k < 9; ++k) {
      const float cy = 40 + 55.f * k, cx = 470 - 50.f * k, r = 14 + 4.f * k;
      const at::Tensor m = ((yy - cy).pow(2) + (xx - cx).pow(2)) < r * r;
      img[0][k % 3].masked_fill_(m, 0.1f);
    }
    img = img * 2 - 1;
    const at::Tensor mfull = st.vae().encodeMoments(img);
    const at::Tensor mt = kiln::models::encodeMomentsTiled(st.vae(), img, {16, 4});
    qInfo("starter encode 256/32: max %.4f mean %.5f range %.3f", maxAbsDiff(mt, mfull), (mt - mfull).abs().mean().item<double>(), maxAbs(mfull));
    const at::Tensor z = mfull.chunk(2, 1)[0];
    const at::Tensor full = st.vae().decode(z).to(at::kFloat);
    qInfo("starter roundtrip err %.4f", (full - img).abs().mean().item<double>());
    for (int64_t t : {16, 32})
      for (int64_t o : {4, 8}) {
        const at::Tensor tiled = kiln::models::decodeTiled(st.vae(), z, {t, o});
        qInfo("starter decode tile %lld ov %lld: max %.4f mean %.5f", (long long)t, (long long)o, maxAbsDiff(tiled, full), (tiled - full).abs().mean().item<double>());
      }
  }

  void measure() {
    at::NoGradGuard ng;
    const at::Tensor z = randomLatent(64, 64, 7);
    const at::Tensor full = vae().decode(z).to(at::kFloat);
    for (int64_t t : {16, 32, 48})
      for (int64_t o : {2, 4, 8}) {
        const at::Tensor tiled = kiln::models::decodeTiled(vae(), z, {t, o});
        qInfo("decode tile %lld ov %lld: max %.4f mean %.5f (range %.3f)", (long long)t, (long long)o,
              maxAbsDiff(tiled, full), (tiled - full).abs().mean().item<double>(), maxAbs(full));
      }
    const at::Tensor img = full.clamp(-1, 1);
    const at::Tensor mfull = vae().encodeMoments(img);
    for (int64_t t : {16, 32})
      for (int64_t o : {4, 8}) {
        const at::Tensor mt = kiln::models::encodeMomentsTiled(vae(), img, {t, o});
        qInfo("encode tile %lld ov %lld: max %.4f mean %.5f (range %.3f)", (long long)t, (long long)o,
              maxAbsDiff(mt, mfull), (mt - mfull).abs().mean().item<double>(), maxAbs(mfull));
      }
    for (auto dt : {at::kFloat, at::kBFloat16})
      for (int64_t s : {32, 64, 128}) {
        const at::Tensor zz = randomLatent(s, s, 3).to(dt);
        kiln::nodes::SdPipeline p(kiln::models::openCheckpoint(modelPath("sd1")), dt);
        const int64_t peak = measurePeak([&] { (void)p.vae().decode(zz).to(at::kFloat); });
        const int64_t est = kiln::models::decodeWorkingBytes(p.vae().config(), s, s, dt);
        const at::Tensor im = at::rand({1, 3, s * 8, s * 8}) * 2 - 1;
        const int64_t epeak = measurePeak([&] { (void)p.vae().encodeMoments(im); });
        const int64_t eest = kiln::models::encodeWorkingBytes(p.vae().config(), s * 8, s * 8, dt);
        qInfo("%s latent %lld: decode peak %lld est %lld (%.2f) | encode peak %lld est %lld (%.2f)",
              at::toString(dt), (long long)s, (long long)peak, (long long)est, double(est) / peak,
              (long long)epeak, (long long)eest, double(eest) / epeak);
      }
  }
};

QTEST_GUILESS_MAIN(TestVaeTiling)
#include "test_vae_tiling.moc"
