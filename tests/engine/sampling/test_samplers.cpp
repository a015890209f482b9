// Samplers and schedules against their published equations, on an analytic denoiser: data
// distributed N(mu, s^2) per element, whose optimal denoiser is known in closed form,
//   D(x, sigma) = mu + s^2 / (s^2 + sigma^2) * (x - mu),
// and whose probability-flow ODE has the exact solution
//   x(sigma) = mu + (x_T - mu) * sqrt(s^2 + sigma^2) / sqrt(s^2 + sigma_T^2).
// Each sampler's first steps are recomputed here in double precision from its equations;
// the deterministic ones converge to the exact solution (second-order ones much faster
// than Euler); the noise-adding ones reach the data distribution (LCM the spread its
// recursion predicts); a seed reproduces.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <QtTest>

#include <cmath>

#include "kiln/error.h"
#include "sampling/k_samplers.h"
#include "sampling/sigmas.h"

using kiln::sampling::SamplerKind;
using kiln::sampling::Schedule;

namespace {

constexpr double kMu = 0.5, kS = 0.8;

double denoise(double x, double sigma) {
  return kMu + kS * kS / (kS * kS + sigma * sigma) * (x - kMu);
}

kiln::sampling::DenoiseFn analytic(int* calls = nullptr) {
  return [calls](const at::Tensor& x, double sigma) {
    if (calls) ++*calls;
    return (x - kMu) * (kS * kS / (kS * kS + sigma * sigma)) + kMu;
  };
}

at::Tensor scalar(double v) {
  return at::full({1, 1, 1, 1}, v, at::kDouble);
}
double value(const at::Tensor& t) {
  return t.item<double>();
}

const kiln::sampling::SigmaTable& sd1Table() {
  static const kiln::sampling::SigmaTable table{kiln::sampling::ScheduleConfig{}};
  return table;
}

// A noise source returning a fixed sequence of values (one scalar tensor per draw).
kiln::sampling::NoiseFn sequence(std::vector<double> values, int* drawn) {
  return [values, drawn] { return scalar(values.at(static_cast<std::size_t>((*drawn)++))); };
}

double exact(double x_t, double sigma_t, double sigma) {
  return kMu +
         (x_t - kMu) * std::sqrt(kS * kS + sigma * sigma) / std::sqrt(kS * kS + sigma_t * sigma_t);
}

}  // namespace

class TestSamplers : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void namesParseAndRefuse() {
    QCOMPARE(kiln::sampling::samplerNames().size(), std::size_t{11});
    for (const auto& name : kiln::sampling::samplerNames())
      QCOMPARE(kiln::sampling::samplerNames()[static_cast<std::size_t>(
                   kiln::sampling::parseSampler(name))],
               name);
    QCOMPARE(kiln::sampling::a1111SamplerName(SamplerKind::DpmPP2M, Schedule::Karras),
             std::string("DPM++ 2M Karras"));
    QCOMPARE(kiln::sampling::a1111SamplerName(SamplerKind::EulerAncestral, Schedule::Normal),
             std::string("Euler a"));
    try {
      (void)kiln::sampling::parseSampler("dpmpp_3m");
      QFAIL("parsed");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::InvalidArgument);
      QVERIFY2(std::string(e.what()).find(
                   "unknown sampler 'dpmpp_3m' (Kiln has euler, euler_ancestral") == 0,
               e.what());
    }
    QVERIFY_THROWS_EXCEPTION(kiln::Error, (void)kiln::sampling::parseSchedule("beta"));
    QCOMPARE(kiln::sampling::parseSchedule("sgm_uniform"), Schedule::SgmUniform);
  }

  // The table and each schedule, from their definitions.
  void schedulesFollowTheirDefinitions() {
    const auto& table = sd1Table();
    QVERIFY(std::abs(table.sigmaMax() - 14.6146) < 1e-3);
    QVERIFY(std::abs(table.sigmaMin() - 0.0292) < 1e-3);
    for (double t : {0.0, 1.5, 250.25, 998.9})
      QVERIFY(std::abs(table.timestep(table.sigma(t)) - t) < 1e-6);
    const int steps = 10;
    const auto check_ends = [&](const kiln::sampling::SigmaSchedule& s, double first,
                                double last_nonzero) {
      QCOMPARE(s.sigmas.size(), static_cast<std::size_t>(steps) + 1);
      QCOMPARE(s.sigmas.back(), 0.0);
      QVERIFY2(std::abs(s.sigmas.front() - first) < 1e-9 * first,
               qPrintable(QString::number(s.sigmas.front())));
      QVERIFY(std::abs(s.sigmas[steps - 1] - last_nonzero) < 1e-9);
      for (int i = 0; i < steps; ++i)
        QVERIFY(s.sigmas[static_cast<std::size_t>(i)] > s.sigmas[static_cast<std::size_t>(i + 1)]);
      QVERIFY(std::abs(s.init_noise_scale - std::sqrt(1 + first * first)) < 1e-12);
    };
    // normal: timesteps evenly from 999 to 0.
    const auto normal = kiln::sampling::makeSigmaSchedule(table, Schedule::Normal, steps);
    check_ends(normal, table.sigmaMax(), table.sigmaMin());
    QVERIFY(std::abs(normal.sigmas[3] - table.sigma(999.0 * (1 - 3.0 / 9))) < 1e-12);
    // karras: rho = 7 between the ends.
    const auto karras = kiln::sampling::makeSigmaSchedule(table, Schedule::Karras, steps);
    check_ends(karras, table.sigmaMax(), table.sigmaMin());
    const double lo = std::pow(table.sigmaMin(), 1 / 7.0), hi = std::pow(table.sigmaMax(), 1 / 7.0);
    QVERIFY(std::abs(karras.sigmas[4] - std::pow(hi + 4.0 / 9 * (lo - hi), 7)) < 1e-12);
    // exponential: a constant ratio.
    const auto expo = kiln::sampling::makeSigmaSchedule(table, Schedule::Exponential, steps);
    check_ends(expo, table.sigmaMax(), table.sigmaMin());
    QVERIFY(std::abs(expo.sigmas[1] / expo.sigmas[0] - expo.sigmas[7] / expo.sigmas[6]) < 1e-12);
    // simple: every 100th table entry from the top.
    const auto simple = kiln::sampling::makeSigmaSchedule(table, Schedule::Simple, steps);
    check_ends(simple, table.sigmaMax(), table.sigma(99));
    QVERIFY(std::abs(simple.sigmas[2] - table.sigma(799)) < 1e-12);
    // sgm_uniform: evenly over steps + 1 timesteps, the last dropped.
    const auto sgm = kiln::sampling::makeSigmaSchedule(table, Schedule::SgmUniform, steps);
    check_ends(sgm, table.sigmaMax(), table.sigma(999.0 / 10));
    // ddim_uniform: stride 1000 // steps from timestep 1 (7 steps: stride 142, not 8 values).
    const auto ddim = kiln::sampling::makeSigmaSchedule(table, Schedule::DdimUniform, 7);
    QCOMPARE(ddim.sigmas.size(), std::size_t{8});
    QVERIFY(std::abs(ddim.sigmas[0] - table.sigma(1 + 6 * 142)) < 1e-12);
    QVERIFY(std::abs(ddim.sigmas[6] - table.sigma(1)) < 1e-12);
    // diffusers: the model's own spacing, with its timesteps.
    const auto diffusers = kiln::sampling::makeSigmaSchedule(table, Schedule::Diffusers, steps);
    const auto reference =
        kiln::sampling::makeEulerSchedule(kiln::sampling::ScheduleConfig{}, steps);
    QCOMPARE(diffusers.timesteps.size(), static_cast<std::size_t>(steps));
    QCOMPARE(diffusers.sigmas[1], static_cast<double>(reference.sigmas[1]));
    QCOMPARE(diffusers.init_noise_scale, static_cast<double>(reference.init_noise_sigma));
    QVERIFY_THROWS_EXCEPTION(kiln::Error,
                             (void)kiln::sampling::makeSigmaSchedule(table, Schedule::Karras, 0));
  }

  // Three steps of each sampler, recomputed here from its published update (k-diffusion's
  // sample_* functions; UniPC's predictor-corrector) in double precision.
  void stepsMatchTheEquations_data() {
    QTest::addColumn<QString>("sampler");
    for (const auto& name : kiln::sampling::samplerNames())
      QTest::newRow(name.c_str()) << QString::fromStdString(name);
  }
  void stepsMatchTheEquations() {
    QFETCH(QString, sampler);
    const SamplerKind kind = kiln::sampling::parseSampler(sampler.toStdString());
    const std::vector<double> sig{6.0, 2.0, 0.5, 0.0};
    const std::vector<double> noise{0.3, -1.1, 0.7, 0.2, -0.4, 0.9};
    const double x_start = 2.5;
    // The expected path.
    double x = x_start;
    std::size_t n = 0;
    const auto anc = [](double from, double to) {
      const double up = std::min(to, std::sqrt(to * to * (from * from - to * to) / (from * from)));
      return std::pair<double, double>{std::sqrt(to * to - up * up), up};
    };
    double old_d = 0, h_last = 0;
    std::vector<double> expected;
    if (kind == SamplerKind::UniPC || kind == SamplerKind::UniPCBh2) {
      // Steps 1 and 2 only: order 1 then 2 with the UniC corrector, the last step uncorrected
      // (order min(3, steps - 1) = 2 for three steps), final sigma 0.001.
      const bool bh2 = kind == SamplerKind::UniPCBh2;
      const std::vector<double> s{6.0, 2.0, 0.5, 0.001};
      const auto lam = [](double v) { return -std::log(v); };
      double m0 = denoise(x, s[0]);
      // Step 1: order 1, corrected with rho_c = 0.5.
      double h = lam(s[1]) - lam(s[0]);
      double b_h = bh2 ? std::expm1(-h) : -h;
      double x_pred = s[1] / s[0] * x - std::expm1(-h) * m0;
      double m1 = denoise(x_pred, s[1]);
      x = x_pred - b_h * 0.5 * (m1 - m0);
      expected.push_back(x);
      // Step 2: order 2 (predictor rho_p = 0.5), corrector from the 2x2 system.
      const double h2 = lam(s[2]) - lam(s[1]);
      b_h = bh2 ? std::expm1(-h2) : -h2;
      const double rk = (lam(s[0]) - lam(s[1])) / h2;
      const double d1 = (m0 - m1) / rk;
      const double x_ = s[2] / s[1] * x - std::expm1(-h2) * m1;
      x_pred = x_ - b_h * 0.5 * d1;
      const double hh = -h2, phi1 = std::expm1(hh);
      const double b1 = (phi1 / hh - 1) / b_h, b2 = ((phi1 / hh - 1) / hh - 0.5) * 2 / b_h;
      // R = [[1, 1], [rk, 1]]; solve R rho = b.
      const double rho_0 = (b1 - b2) / (1 - rk), rho_1 = b1 - rho_0;
      const double m2 = denoise(x_pred, s[2]);
      x = x_ - b_h * (rho_0 * d1 + rho_1 * (m2 - m1));
      expected.push_back(x);
      // Step 3: the last, predictor only (order min(2, steps + 1 - 3) = 1).
      const double h3 = lam(s[3]) - lam(s[2]);
      x = s[3] / s[2] * x - std::expm1(-h3) * m2;
      expected.push_back(x);
    } else {
      for (std::size_t i = 0; i + 1 < sig.size(); ++i) {
        const double s = sig[i], sn = sig[i + 1], d = denoise(x, s);
        const double t = -std::log(s);
        switch (kind) {
          case SamplerKind::Euler:
          case SamplerKind::Ddim: {
            if (kind == SamplerKind::Ddim) {
              // DDIM (eta = 0) in its own variables: alphabar = 1 / (1 + sigma^2),
              // x_vp = x * sqrt(alphabar); x_vp' = sqrt(ab') x0 + sqrt(1 - ab') eps.
              const double ab = 1 / (1 + s * s), abn = 1 / (1 + sn * sn);
              const double x_vp = x * std::sqrt(ab),
                           eps = (x_vp - std::sqrt(ab) * d) / std::sqrt(1 - ab);
              x = (std::sqrt(abn) * d + std::sqrt(1 - abn) * eps) / std::sqrt(abn);
            } else {
              x = x + (x - d) / s * (sn - s);
            }
            break;
          }
          case SamplerKind::EulerAncestral: {
            const auto [down, up] = anc(s, sn);
            x = x + (x - d) / s * (down - s);
            if (sn > 0) x += noise[n++] * up;
            break;
          }
          case SamplerKind::Heun: {
            const double dx = (x - d) / s;
            if (sn == 0) {
              x = x + dx * (sn - s);
            } else {
              const double x2 = x + dx * (sn - s);
              x = x + (dx + (x2 - denoise(x2, sn)) / sn) / 2 * (sn - s);
            }
            break;
          }
          case SamplerKind::Dpm2: {
            const double dx = (x - d) / s;
            if (sn == 0) {
              x = x + dx * (sn - s);
            } else {
              const double mid = std::sqrt(s * sn);
              const double x2 = x + dx * (mid - s);
              x = x + (x2 - denoise(x2, mid)) / mid * (sn - s);
            }
            break;
          }
          case SamplerKind::DpmPP2M: {
            if (sn == 0) {
              x = d;
            } else {
              const double h = -std::log(sn) - t;
              double dd = d;
              if (i > 0) {
                const double r = h_last / h;
                dd = (1 + 1 / (2 * r)) * d - 1 / (2 * r) * old_d;
              }
              x = sn / s * x - std::expm1(-h) * dd;
              h_last = h;
            }
            break;
          }
          case SamplerKind::DpmPP2MSde: {
            if (sn == 0) {
              x = d;
            } else {
              const double h = -std::log(sn) - t;
              x = sn / s * std::exp(-h) * x + -std::expm1(-2 * h) * d;
              if (i > 0)
                x += 0.5 * -std::expm1(-2 * h) * (h / h_last) *
                     (d - old_d);  // 1 / r, r = h_last / h
              x += noise[n++] * sn * std::sqrt(-std::expm1(-2 * h));
              h_last = h;
            }
            break;
          }
          case SamplerKind::DpmPPSde: {
            if (sn == 0) {
              x = x + (x - d) / s * (sn - s);
            } else {
              const double h = -std::log(sn) - t, s_mid = std::exp(-(t + h / 2));
              auto [down, up] = anc(s, s_mid);
              double x2 = down / s * x - std::expm1(t + std::log(down)) * d;
              x2 += noise[n++] * up;
              const double d2 = denoise(x2, s_mid);
              std::tie(down, up) = anc(s, sn);
              x = down / s * x - std::expm1(t + std::log(down)) * d2;
              x += noise[n++] * up;
            }
            break;
          }
          case SamplerKind::Lcm:
            x = d;
            if (sn > 0) x += noise[n++] * sn;
            break;
          default:
            QFAIL("no equations for this sampler");
        }
        old_d = d;
        expected.push_back(x);
      }
    }
    int drawn = 0;
    std::vector<double> seen;
    const at::Tensor out = kiln::sampling::sampleSigmas(kind, analytic(), scalar(x_start), sig,
                                                        sequence(noise, &drawn),
                                                        [&](const kiln::sampling::SamplerStep& s) {
                                                          QCOMPARE(s.total, int64_t{3});
                                                          seen.push_back(value(*s.x));
                                                        });
    QCOMPARE(seen.size(), expected.size());
    for (std::size_t i = 0; i < seen.size(); ++i)
      QVERIFY2(std::abs(seen[i] - expected[i]) < 1e-9,
               qPrintable(QString("step %1: %2, expected %3")
                              .arg(i)
                              .arg(seen[i], 0, 'g', 12)
                              .arg(expected[i], 0, 'g', 12)));
    QCOMPARE(value(out), expected.back());
    QCOMPARE(static_cast<std::size_t>(drawn), n);  // draws, in order, as the equations use them
    QCOMPARE(drawn > 0, kiln::sampling::addsNoise(kind));
  }

  // The deterministic samplers converge to the exact ODE solution; the second- and
  // higher-order ones are far closer than Euler with the same steps.
  void odeSamplersReachTheExactSolution() {
    const auto& table = sd1Table();
    const auto error = [&](SamplerKind kind, int steps) {
      const auto s = kiln::sampling::makeSigmaSchedule(table, Schedule::Karras, steps);
      const double x_t = kMu + 1.3 * s.sigmas[0];
      const double got =
          value(kiln::sampling::sampleSigmas(kind, analytic(), scalar(x_t), s.sigmas));
      return std::abs(got - exact(x_t, s.sigmas[0], 0));
    };
    const double euler = error(SamplerKind::Euler, 20);
    // First order: the error halves as the steps double (0.083 at 20 Karras steps here).
    QVERIFY2(euler < 0.1 && error(SamplerKind::Euler, 40) < euler * 0.6,
             qPrintable(QString::number(euler)));
    QCOMPARE(error(SamplerKind::Ddim, 20), euler);
    for (SamplerKind k : {SamplerKind::Heun, SamplerKind::Dpm2, SamplerKind::DpmPP2M,
                          SamplerKind::UniPC, SamplerKind::UniPCBh2}) {
      const double e = error(k, 20);
      QVERIFY2(e < euler / 5,
               qPrintable(QString("%1: %2 against Euler's %3")
                              .arg(QString::fromStdString(kiln::sampling::samplerLabel(k)))
                              .arg(e)
                              .arg(euler)));
      QVERIFY(error(k, 40) < e);
    }
  }

  // Samplers that add noise draw it from the seeded source: the same seed gives the same
  // result bit for bit, and they end on the data distribution N(mu, s^2).
  void noisySamplersReproduceAndReachTheData() {
    const auto& table = sd1Table();
    // Euler ancestral converges slowly (std 0.716 after 30 steps and 0.773 after 100, by
    // the exact variance recursion for this data), so 100 steps.
    const auto s = kiln::sampling::makeSigmaSchedule(table, Schedule::Karras, 100);
    const auto run = [&](SamplerKind kind, uint64_t seed, int* calls = nullptr) {
      at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
      const auto draw = [&gen] {
        return at::randn({1, 1, 128, 128}, gen, at::TensorOptions().dtype(at::kFloat));
      };
      const at::Tensor x = draw() * s.sigmas[0] + kMu;
      return kiln::sampling::sampleSigmas(kind, analytic(calls), x, s.sigmas, draw);
    };
    for (SamplerKind k : {SamplerKind::EulerAncestral, SamplerKind::DpmPP2MSde,
                          SamplerKind::DpmPPSde, SamplerKind::Lcm, SamplerKind::DpmPP2M}) {
      int calls = 0;
      const at::Tensor a = run(k, 42, &calls);
      QCOMPARE(calls,
               k == SamplerKind::DpmPPSde ? 199 : 100);  // two model calls a step but the last
      QVERIFY(at::equal(a, run(k, 42)));
      QCOMPARE(at::equal(a, run(k, 43)), false);
      const double mean = a.mean().item<double>(), std = a.std().item<double>();
      const QString label = QString::fromStdString(kiln::sampling::samplerLabel(k));
      QVERIFY2(std::abs(mean - kMu) < 0.03, qPrintable(label + ": mean " + QString::number(mean)));
      // LCM expects a consistency model; with a posterior-mean denoiser each step shrinks
      // the spread: var' = a^2 var + sigma'^2, a = s^2 / (s^2 + sigma^2), which ends near
      // s^2 / 2. The others sample the data distribution itself.
      double want = kS;
      if (k == SamplerKind::Lcm) {
        double var = s.sigmas[0] * s.sigmas[0];
        for (std::size_t i = 0; i + 1 < s.sigmas.size(); ++i) {
          const double shrink = kS * kS / (kS * kS + s.sigmas[i] * s.sigmas[i]);
          var = shrink * shrink * var + s.sigmas[i + 1] * s.sigmas[i + 1];
        }
        want = std::sqrt(var);
      }
      QVERIFY2(std::abs(std - want) < 0.05 * want,
               qPrintable(label + ": std " + QString::number(std) + ", expected " +
                          QString::number(want)));
    }
  }

  // The clean estimate from each prediction type, by their definitions: x = x0 + sigma * eps
  // and v = (eps - sigma * x0) / sqrt(1 + sigma^2) (alpha * eps - sigma_vp * x0).
  void predictionTypesGiveTheCleanLatent() {
    const double x0 = 0.7, eps = -1.3;
    for (double sigma : {0.05, 1.0, 14.6}) {
      const double x = x0 + sigma * eps, v = (eps - sigma * x0) / std::sqrt(1 + sigma * sigma);
      QVERIFY(std::abs(value(kiln::sampling::denoisedFrom(kiln::sampling::Prediction::Epsilon,
                                                          scalar(x), scalar(eps), sigma)) -
                       x0) < 1e-12);
      QVERIFY(std::abs(value(kiln::sampling::denoisedFrom(kiln::sampling::Prediction::V, scalar(x),
                                                          scalar(v), sigma)) -
                       x0) < 1e-12);
    }
  }

  // Zero terminal SNR: the first noise level stays, the last becomes ComfyUI's cap.
  void zeroTerminalSnrRescales() {
    kiln::sampling::ScheduleConfig config;
    config.zero_terminal_snr = true;
    const kiln::sampling::SigmaTable rescaled(config);
    const auto& plain = sd1Table();
    QVERIFY(std::abs(rescaled.sigmaMin() - plain.sigmaMin()) < 1e-6);
    QVERIFY2(std::abs(rescaled.sigmaMax() -
                      std::sqrt((1 - 4.8973451890853435e-08) / 4.8973451890853435e-08)) < 1,
             qPrintable(QString::number(rescaled.sigmaMax())));
    // The square root of alphabar falls linearly in the old one: the middle follows.
    const double a0 = 1 / std::sqrt(1 + plain.sigmaMin() * plain.sigmaMin());
    const double aT = 1 / std::sqrt(1 + plain.sigmaMax() * plain.sigmaMax());
    const double a500 = 1 / std::sqrt(1 + plain.sigma(500) * plain.sigma(500));
    const double want = (a500 - aT) * a0 / (a0 - aT);
    QVERIFY(std::abs(1 / std::sqrt(1 + rescaled.sigma(500) * rescaled.sigma(500)) - want) < 1e-5);
    const auto s = kiln::sampling::makeSigmaSchedule(rescaled, Schedule::Karras, 10);
    QVERIFY(s.sigmas.front() > 4000);
  }

  void refusesBadSchedules() {
    const auto model = analytic();
    QVERIFY_THROWS_EXCEPTION(
        kiln::Error, kiln::sampling::sampleSigmas(SamplerKind::Euler, model, scalar(1), {1.0}));
    QVERIFY_THROWS_EXCEPTION(kiln::Error, kiln::sampling::sampleSigmas(SamplerKind::Euler, model,
                                                                       scalar(1), {1.0, 2.0, 0.0}));
    QVERIFY_THROWS_EXCEPTION(
        kiln::Error,
        kiln::sampling::sampleSigmas(SamplerKind::EulerAncestral, model, scalar(1), {1.0, 0.0}));
  }
};

QTEST_APPLESS_MAIN(TestSamplers)
#include "test_samplers.moc"
