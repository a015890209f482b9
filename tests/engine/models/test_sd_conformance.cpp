// Conformance of the SD 1.x and SDXL models against the reference implementation's
// vectors in ../shared/conformance/sd-tiny-1234, for single files and diffusers folders.
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <map>
#include <memory>

#include <ATen/Parallel.h>

#include "checkpoint_variants.h"
#include "kiln/error.h"
#include "pipelines/sd/sd_pipeline.h"
#include "ref_tensors.h"

using kiln::testing::maxAbs;
using kiln::testing::maxAbsDiff;
using kiln::testing::RefFile;

namespace {

std::string modelPath(const QString& family, const QString& source) {
  const std::string f = family.toStdString();
  return kiln::testing::conformancePath(
      "sd-tiny-1234/" + f + (source == "single" ? "/" + f + "_tiny_ldm.safetensors" : ""));
}

}  // namespace

class TestSdConformance : public QObject {
  Q_OBJECT

  std::map<QString, std::unique_ptr<kiln::pipelines::SdPipeline>> cache_;

  const kiln::pipelines::SdPipeline& pipeline(const QString& family, const QString& source) {
    auto& slot = cache_[family + "/" + source];
    if (!slot)
      slot = std::make_unique<kiln::pipelines::SdPipeline>(
          kiln::models::openCheckpoint(modelPath(family, source)), at::kFloat);
    return *slot;
  }

  static void familiesAndSources() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("source");
    for (const char* f : {"sd1", "sdxl"})
      for (const char* s : {"single", "diffusers"})
        QTest::newRow((std::string(f) + "/" + s).c_str()) << QString(f) << QString(s);
  }

  static std::string refPath(const QString& family, const char* file) {
    return "sd-tiny-1234/" + family.toStdString() + "/" + file;
  }

  static void expectClose(const at::Tensor& got, const at::Tensor& want, double tol,
                          const char* what) {
    QVERIFY2(got.sizes() == want.sizes(), (std::string(what) + ": shape differs").c_str());
    const double err = maxAbsDiff(got, want);
    QVERIFY2(err <= tol, (std::string(what) + ": max abs err " + std::to_string(err) + " > " +
                          std::to_string(tol))
                             .c_str());
  }

 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(2); }

  void detectsFamilyAndConfig_data() { familiesAndSources(); }
  void detectsFamilyAndConfig() {
    QFETCH(QString, family);
    QFETCH(QString, source);
    const auto ck = kiln::models::openCheckpoint(modelPath(family, source));
    QCOMPARE(QString(kiln::models::familyName(ck.spec.family)), family);
    const auto& u = ck.spec.unet;
    QCOMPARE(u.model_channels, int64_t{32});
    QCOMPARE(u.channel_mult, (std::vector<int64_t>{1, 2}));
    QCOMPARE(u.num_res_blocks, int64_t{2});
    QCOMPARE(ck.spec.vae.channel_mult, (std::vector<int64_t>{1, 1, 1, 2}));
    if (family == "sd1") {
      QCOMPARE(u.context_dim, int64_t{32});
      QVERIFY(!u.linear_projection);
      QCOMPARE(u.input_depth, (std::vector<int64_t>{1, 1, 0, 0}));
      QCOMPARE(u.headsFor(0, 32), int64_t{4});
      QCOMPARE(ck.spec.vae.scaling_factor, 0.18215);
      QCOMPARE(ck.spec.text_encoders.size(), std::size_t{1});
      QCOMPARE(ck.spec.text_encoders[0].config.heads, int64_t{4});
    } else {
      QCOMPARE(u.context_dim, int64_t{40});
      QVERIFY(u.linear_projection);
      QCOMPARE(u.input_depth, (std::vector<int64_t>{0, 0, 2, 2}));
      QCOMPARE(u.middle_depth, int64_t{2});
      QCOMPARE(u.headsFor(1, 64), int64_t{4});
      QCOMPARE(u.adm_in_channels, int64_t{68});
      QCOMPARE(u.time_id_embed_dim, int64_t{8});
      QCOMPARE(ck.spec.vae.scaling_factor, 0.13025);
      QCOMPARE(ck.spec.text_encoders.size(), std::size_t{2});
      QCOMPARE(ck.spec.text_encoders[0].config.heads, int64_t{2});
      QCOMPARE(ck.spec.text_encoders[1].config.heads, int64_t{3});
      QCOMPARE(ck.spec.text_encoders[1].config.projection_dim, int64_t{20});
    }
  }

  void textEncoders_data() { familiesAndSources(); }
  void textEncoders() {
    QFETCH(QString, family);
    QFETCH(QString, source);
    const auto& pipe = pipeline(family, source);
    const RefFile ref(refPath(family, "ref_text.safetensors"));
    const auto& prompts = pipe.spec().family == kiln::models::ModelFamily::SD1
                              ? std::vector<std::string>{"A photo of an astronaut riding a horse on Mars, 4k, highly detailed!", ""}
                              : std::vector<std::string>{"a cat's portrait in watercolor, by Claude Monet (1890)",
                                                         "blurry, low quality"};
    const auto enc = pipe.encodeText(prompts);
    if (family == "sd1") {
      QVERIFY(at::equal(enc.ids[0], ref["input_ids"]));
      const auto& o = enc.outputs[0];
      expectClose(o.last_hidden_state, ref["last_hidden_state"], 1e-4, "last_hidden_state");
      expectClose(at::stack(o.hidden_states), ref["all_hidden_states"], 1e-4, "all_hidden_states");
      expectClose(o.hidden_states[o.hidden_states.size() - 2], ref["penultimate_hidden_state"],
                  1e-4, "penultimate");
      expectClose(o.pooled, ref["pooler_output"], 1e-4, "pooler_output");
      expectClose(enc.context, ref["last_hidden_state"], 1e-4, "context");
    } else {
      QVERIFY(at::equal(enc.ids[0], ref["input_ids_1"]));
      QVERIFY(at::equal(enc.ids[1], ref["input_ids_2"]));
      for (int i = 0; i < 2; ++i) {
        const std::string p = i == 0 ? "te1." : "te2.";
        const auto& o = enc.outputs[static_cast<std::size_t>(i)];
        expectClose(o.last_hidden_state, ref[p + "last_hidden_state"], 1e-4,
                    (p + "last_hidden_state").c_str());
        expectClose(at::stack(o.hidden_states), ref[p + "all_hidden_states"], 1e-4,
                    (p + "all_hidden_states").c_str());
        expectClose(o.hidden_states[o.hidden_states.size() - 2],
                    ref[p + "penultimate_hidden_state"], 1e-4, (p + "penultimate").c_str());
      }
      expectClose(enc.outputs[0].pooled, ref["te1.pooler_output"], 1e-4, "te1.pooler_output");
      expectClose(enc.outputs[1].text_embeds, ref["te2.text_embeds"], 1e-4, "te2.text_embeds");
      expectClose(enc.context, ref["context"], 1e-4, "context");
      expectClose(enc.pooled, ref["pooled"], 1e-4, "pooled");
    }
  }

  void unet_data() { familiesAndSources(); }
  void unet() {
    QFETCH(QString, family);
    QFETCH(QString, source);
    const auto& pipe = pipeline(family, source);
    const RefFile ref(refPath(family, "ref_unet.safetensors"));
    kiln::models::UNetInputs in;
    in.latent = ref["in_latent"];
    in.timesteps = ref["in_timestep"];
    in.context = ref["in_context"];
    if (family == "sdxl")
      in.y = pipe.unet().timeIdConditioning(ref["in_text_embeds"], ref["in_time_ids"]);
    expectClose(pipe.unet().forward(in), ref["out_eps"], 1e-4, "out_eps");
  }

  void vae_data() { familiesAndSources(); }
  void vae() {
    QFETCH(QString, family);
    QFETCH(QString, source);
    const auto& pipe = pipeline(family, source);
    const RefFile ref(refPath(family, "ref_vae.safetensors"));
    expectClose(pipe.vae().decode(ref["decode_in_latent"]), ref["decode_out_image"], 1e-4,
                "decode");
    const auto moments = pipe.vae().encodeMoments(ref["encode_in_image"]);
    expectClose(moments, ref["encode_out_moments"], 1e-4, "moments");
    const auto enc = pipe.vae().encode(ref["encode_in_image"]);
    expectClose(enc.mean, ref["encode_out_mean"], 1e-4, "mean");
    expectClose(enc.logvar, ref["encode_out_logvar"], 1e-4, "logvar");
    expectClose(enc.std, ref["encode_out_std"], 1e-4, "std");
  }

  void seededNoiseMatchesPyTorch() {
    const RefFile ref("sd-tiny-1234/sd1/ref_sample.safetensors");
    QVERIFY(at::equal(kiln::pipelines::seededNoise(1234, {1, 4, 16, 12}), ref["init_noise"]));
    // BUILD-NOTES: torch.manual_seed(42); torch.randn(8)
    const at::Tensor n = kiln::pipelines::seededNoise(42, {8});
    QCOMPARE(n[0].item<float>(), 0.33669037f);
    QCOMPARE(n[7].item<float>(), -0.63799703f);
  }

  void sampling_data() { familiesAndSources(); }
  void sampling() {
    QFETCH(QString, family);
    QFETCH(QString, source);
    const auto& pipe = pipeline(family, source);
    const RefFile ref(refPath(family, "ref_sample.safetensors"));
    const auto schedule = kiln::sampling::makeEulerSchedule(pipe.spec().schedule, 6);
    expectClose(at::tensor(schedule.timesteps), ref["timesteps"], 1e-4, "timesteps");
    expectClose(at::tensor(schedule.sigmas), ref["sigmas"], 1e-5, "sigmas");
    expectClose(schedule.alphas_cumprod, ref["alphas_cumprod"], 1e-7, "alphas_cumprod");
    QVERIFY(std::abs(schedule.init_noise_sigma - ref["init_noise_sigma"].item<float>()) < 1e-5);

    const auto cond =
        family == "sd1"
            ? pipe.encodePrompts(
                  "A photo of an astronaut riding a horse on Mars, 4k, highly detailed!", "")
            : pipe.encodePrompts("a cat's portrait in watercolor, by Claude Monet (1890)",
                                 "blurry, low quality");
    expectClose(cond.context, ref["context"], 1e-4, "context");
    if (family == "sdxl") {
      QVERIFY(at::equal(kiln::pipelines::SdPipeline::timeIds({120, 100, 4, 8, 128, 96}),
                        ref["time_ids"]));
      expectClose(cond.pooled, ref["text_embeds"], 1e-4, "text_embeds");
    }
    const at::Tensor after = ref["latents_after_step"];
    const at::Tensor eps_cfg = ref["eps_cfg"];
    const at::Tensor scaled = ref["scaled_model_input"];
    int steps_seen = 0;
    const at::Tensor final_latent = pipe.sample(
        cond, ref["init_noise"], 6, 7.0, {120, 100, 4, 8, 128, 96},
        [&](const kiln::sampling::StepInfo& s) {
          const at::Tensor want = after[s.step];
          const double tol = 1e-3 * std::max(1.0, maxAbs(want));
          expectClose(*s.latent, want, tol,
                      ("latents_after_step " + std::to_string(s.step)).c_str());
          expectClose(*s.scaled_input, scaled[s.step], 1e-3 * std::max(1.0, maxAbs(scaled[s.step])),
                      "scaled_model_input");
          expectClose(*s.noise_pred, eps_cfg[s.step], 1e-3 * std::max(1.0, maxAbs(eps_cfg[s.step])),
                      "eps_cfg");
          ++steps_seen;
        });
    QCOMPARE(steps_seen, 6);
    const at::Tensor want_final = ref["final_latent"];
    expectClose(final_latent, want_final, 1e-3 * std::max(1.0, maxAbs(want_final)), "final_latent");
    const at::Tensor image = pipe.decode(final_latent);
    const at::Tensor want_image = ref["decoded_image"];
    expectClose(image, want_image, 1e-3 * std::max(1.0, maxAbs(want_image)), "decoded_image");
  }

  void singleFileAndDiffusersAreBitIdentical_data() {
    QTest::addColumn<QString>("family");
    QTest::newRow("sd1") << QString("sd1");
    QTest::newRow("sdxl") << QString("sdxl");
  }
  void singleFileAndDiffusersAreBitIdentical() {
    QFETCH(QString, family);
    const auto& a = pipeline(family, "single");
    const auto& b = pipeline(family, "diffusers");
    const auto ca = a.encodePrompts("a red star", "blurry");
    const auto cb = b.encodePrompts("a red star", "blurry");
    QVERIFY(at::equal(ca.context, cb.context));
    const at::Tensor noise = kiln::pipelines::seededNoise(7, {1, 4, 8, 8});
    const at::Tensor la =
        a.sample(ca, noise, 2, 5.0, kiln::pipelines::SizeConditioning::forImage(64, 64));
    const at::Tensor lb =
        b.sample(cb, noise, 2, 5.0, kiln::pipelines::SizeConditioning::forImage(64, 64));
    QVERIFY(at::equal(la, lb));
    QVERIFY(at::equal(a.decode(la), b.decode(lb)));
    QVERIFY(at::equal(a.vae().encodeMoments(a.decode(la)), b.vae().encodeMoments(b.decode(lb))));
  }

  // Prompt syntax on the real encoders: plain and escaped prompts encode as the literal
  // text does; a weight scales its token's vector and the window keeps its mean (A1111);
  // long prompts and BREAK make more 77-token windows; clip skip takes an earlier layer.
  void weightedPrompts_data() {
    QTest::addColumn<QString>("family");
    QTest::newRow("sd1") << QString("sd1");
    QTest::newRow("sdxl") << QString("sdxl");
  }
  void weightedPrompts() {
    QFETCH(QString, family);
    const auto& pipe = pipeline(family, "single");
    const auto plain = pipe.encodeWeighted("a red star");
    const auto literal = pipe.encodeText({"a red star"});
    QVERIFY(at::equal(plain.context, literal.context));
    QCOMPARE(plain.pooled.defined(), family == "sdxl");
    if (family == "sdxl") QVERIFY(at::equal(plain.pooled, literal.pooled));
    QVERIFY(at::equal(pipe.encodeWeighted("a \\(red\\) star").context,
                      pipe.encodeText({"a (red) star"}).context));

    // "red" is token 2 (after BOS and "a").
    const at::Tensor weighted = pipe.encodeWeighted("a (red:1.5) star").context;
    at::Tensor w = at::ones({1, 77, 1});
    w[0][2][0] = 1.5;
    // Each encoder's part (SDXL has two, side by side) keeps its own mean.
    const int64_t first = pipe.textEncoder(0).config().hidden;
    std::vector<at::Tensor> parts;
    for (const at::Tensor& part : {plain.context.narrow(2, 0, first),
                                   plain.context.narrow(2, first, plain.context.size(2) - first)}) {
      if (part.size(2) == 0) continue;
      const at::Tensor scaled = part * w;
      parts.push_back(scaled * (part.mean() / scaled.mean()));
    }
    expectClose(weighted, at::cat(parts, 2), 1e-5, "weighted context");
    QVERIFY(!at::allclose(weighted, plain.context));

    std::string long_prompt;
    for (int i = 0; i < 100; ++i) long_prompt += "red ";
    const at::Tensor two = pipe.encodeWeighted(long_prompt).context;
    QCOMPARE(two.size(1), int64_t{154});
    expectClose(two.narrow(1, 0, 77), pipe.encodeText({long_prompt}).context, 1e-5, "first window");
    QCOMPARE(pipe.encodeWeighted("a cat BREAK a dog").context.size(1), int64_t{154});

    // Shorter contexts are repeated to the longer one's length for the CFG batch.
    const at::Tensor batch = kiln::pipelines::batchContexts(plain.context, two);
    QCOMPARE(batch.size(0), int64_t{2});
    QCOMPARE(batch.size(1), int64_t{154});
    QVERIFY(at::equal(batch[0].narrow(0, 77, 77), plain.context[0]));

    if (family == "sd1") {
      const auto& model = pipe.textEncoder(0);
      const auto out = model.forward(literal.ids[0]);
      const at::Tensor skipped = model.finalNorm(out.hidden_states[out.hidden_states.size() - 2]);
      expectClose(pipe.encodeWeighted("a red star", 2).context, skipped, 1e-6, "clip skip 2");
      QVERIFY(!at::allclose(skipped, plain.context));
    }
  }

  // SD 2.x: the sd1 file with its text encoder moved to OpenCLIP's layout under
  // cond_stage_model.model. (q, k and v fused into in_proj) is SD 2.x. Its text encoder
  // gives what SD 1.x gives with clip skip 2 up to the end token (the penultimate layer
  // through the final norm; SD 2.x pads with 0 after it); "parameterization": "v" in its
  // configuration, a v_pred key or modelspec metadata say it predicts v; it samples.
  void detectsAndRunsSd2() {
    QTemporaryDir dir;
    const QString v_file = dir.filePath("sd2_v.safetensors");
    try {
      writeSd2(v_file, false, {}, "v");
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    kiln::models::Checkpoint ck;
    try {
      ck = kiln::models::openCheckpoint(v_file.toStdString());
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QCOMPARE(ck.spec.family, kiln::models::ModelFamily::SD2);
    QCOMPARE(ck.spec.text_encoders.size(), std::size_t{1});
    QCOMPARE(ck.spec.text_encoders[0].output, kiln::models::TextOutput::PenultimateNormed);
    QCOMPARE(ck.spec.text_encoders[0].pad_id, int64_t{0});
    QCOMPARE(ck.spec.prediction, kiln::sampling::Prediction::V);
    QCOMPARE(ck.spec.native_width, 768);
    std::unique_ptr<kiln::pipelines::SdPipeline> loaded;
    try {
      loaded = std::make_unique<kiln::pipelines::SdPipeline>(
          kiln::models::openCheckpoint(v_file.toStdString()), at::kFloat);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    const kiln::pipelines::SdPipeline& sd2 = *loaded;
    const auto& sd1 = pipeline("sd1", "single");
    const at::Tensor a = sd2.encodeText({"a red star"}).context,
                     b = sd1.encodeWeighted("a red star", 2).context;
    expectClose(a.narrow(1, 0, 5), b.narrow(1, 0, 5), 1e-5,
                "SD 2.x text encoder up to the end token");
    QVERIFY(!at::allclose(a, b));  // the padding differs after it

    const auto cond = sd2.encodePrompts("a red star", "");
    const at::Tensor noise = kiln::pipelines::seededNoise(3, {1, 4, 8, 8});
    kiln::pipelines::SamplerSettings settings;
    settings.schedule = kiln::sampling::Schedule::Normal;
    const at::Tensor as_v =
        sd2.sample(cond, noise, 3, 5.0, kiln::pipelines::SizeConditioning::forImage(64, 64), {},
                   nullptr, settings);
    settings.prediction = kiln::sampling::Prediction::Epsilon;
    const at::Tensor as_eps =
        sd2.sample(cond, noise, 3, 5.0, kiln::pipelines::SizeConditioning::forImage(64, 64), {},
                   nullptr, settings);
    QVERIFY(at::isfinite(as_v).all().item<bool>());
    QVERIFY(!at::allclose(as_v, as_eps));

    // Without a word on it, SD 2.x predicts epsilon (512); a v_pred key or metadata say otherwise.
    const QString plain = dir.filePath("sd2_plain.safetensors");
    writeSd2(plain, false, {}, "");
    const auto plain_ck = kiln::models::openCheckpoint(plain.toStdString());
    QCOMPARE(plain_ck.spec.prediction, kiln::sampling::Prediction::Epsilon);
    QCOMPARE(plain_ck.spec.native_width, 512);
    const QString marked = dir.filePath("sd2_marked.safetensors");
    writeSd2(marked, true, {}, "");
    QCOMPARE(kiln::models::openCheckpoint(marked.toStdString()).spec.prediction,
             kiln::sampling::Prediction::V);
    const QString meta = dir.filePath("sd2_meta.safetensors");
    writeSd2(meta, false, {{"modelspec.prediction_type", "v"}}, "");
    QCOMPARE(kiln::models::openCheckpoint(meta.toStdString()).spec.prediction,
             kiln::sampling::Prediction::V);
  }

  // fp16 compute keeps the VAE in fp32 (SD VAEs overflow half precision): the text
  // encoders and UNet hold fp16 weights, the VAE fp32 ones, and the codec computes in fp32.
  void halfPrecisionUpcastsTheVae() {
    const kiln::pipelines::SdPipeline half(kiln::models::openCheckpoint(modelPath("sd1", "single")),
                                           at::kHalf);
    QCOMPARE(half.dtype(), at::kHalf);
    QCOMPARE(half.codec().dtype, at::kFloat);
    for (const auto& slot : half.unet().params().slots())
      QCOMPARE(slot.tensor->scalar_type(), at::kHalf);
    for (const auto& slot : half.textEncoder(0).params().slots())
      QCOMPARE(slot.tensor->scalar_type(), at::kHalf);
    for (const auto& slot : half.vae().params().slots())
      QCOMPARE(slot.tensor->scalar_type(), at::kFloat);
    // The fp32 VAE decodes exactly as the fp32 pipeline's does.
    const auto& full = pipeline("sd1", "single");
    const at::Tensor latent = kiln::pipelines::seededNoise(4, {1, 4, 8, 8});
    QVERIFY(at::equal(half.decode(latent), full.decode(latent)));
    QCOMPARE(kiln::pipelines::vaeComputeDtype(at::kBFloat16), at::kBFloat16);
  }

  // An SDXL refiner written from the sdxl tiny file: its OpenCLIP encoder alone under
  // conditioner.embedders.0.model., cross-attention over that encoder's 24 channels, and a
  // label embedding for pooled + 5 ids (the aesthetic score in place of the target size).
  // It must equal the base model whose weights for the CLIP-L channels and the target
  // width are zero, given the score as its target height.
  void runsSdxlRefiner() {
    QTemporaryDir dir;
    const QString refiner = dir.filePath("refiner.safetensors"),
                  base = dir.filePath("base_masked.safetensors");
    const int64_t clip_l = 16, clip_g = 24, pooled = 20, id_width = 8;
    try {
      kiln::testing::writeSdxlRefiner(refiner);
      kiln::testing::writeVariant(
          base,
          [&](std::vector<kiln::testing::TensorToWrite>& t, std::vector<std::vector<uint8_t>>& s) {
            for (std::size_t i = 0; i < t.size(); ++i)
              if (t[i].name.find("attn2.to_k.weight") != std::string::npos ||
                  t[i].name.find("attn2.to_v.weight") != std::string::npos)
                kiln::testing::zeroColumns(t, s, t[i].name, 0, clip_l);
            kiln::testing::zeroColumns(t, s, "model.diffusion_model.label_emb.0.0.weight",
                                       pooled + 5 * id_width, id_width);
          },
          {}, "sdxl");
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    std::unique_ptr<kiln::pipelines::SdPipeline> ref_pipe, base_pipe;
    try {
      const auto ck = kiln::models::openCheckpoint(refiner.toStdString());
      QCOMPARE(ck.spec.family, kiln::models::ModelFamily::SDXLRefiner);
      QCOMPARE(std::string(kiln::models::familyName(ck.spec.family)), std::string("sdxl_refiner"));
      QCOMPARE(ck.spec.text_encoders.size(), std::size_t{1});
      QCOMPARE(ck.spec.text_encoders[0].prefix, std::string("conditioner.embedders.0.model."));
      QCOMPARE(ck.spec.text_encoders[0].output, kiln::models::TextOutput::Penultimate);
      QVERIFY(ck.spec.text_encoders[0].provides_pooled);
      QCOMPARE(ck.spec.text_encoders[0].pad_id, int64_t{0});
      QVERIFY(ck.spec.aesthetic_time_ids);
      QCOMPARE(ck.spec.unet.context_dim, clip_g);
      QCOMPARE(ck.spec.unet.time_id_embed_dim, id_width);
      QCOMPARE(ck.spec.native_width, 1024);
      ref_pipe = std::make_unique<kiln::pipelines::SdPipeline>(ck, at::kFloat);
      base_pipe = std::make_unique<kiln::pipelines::SdPipeline>(
          kiln::models::openCheckpoint(base.toStdString()), at::kFloat);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    // The refiner's text encoder is SDXL's second: same context channels and pooled output.
    const auto rc = ref_pipe->encodePrompts("a red star", "blurry");
    const auto bc = base_pipe->encodePrompts("a red star", "blurry");
    QCOMPARE(rc.context.size(-1), clip_g);
    expectClose(rc.context, bc.context.narrow(-1, clip_l, clip_g), 1e-6, "refiner context");
    expectClose(rc.pooled, bc.pooled, 1e-6, "refiner pooled");

    kiln::pipelines::SizeConditioning sizes = kiln::pipelines::SizeConditioning::forImage(64, 64);
    sizes.crop_top = 8;
    sizes.aesthetic_score = sizes.negative_aesthetic_score = 6.0;
    const at::Tensor ids = kiln::pipelines::SdPipeline::timeIds(sizes, true);
    QVERIFY(at::equal(
        ids, at::tensor({64.f, 64.f, 8.f, 0.f, 6.f, 64.f, 64.f, 8.f, 0.f, 6.f}).reshape({2, 5})));
    kiln::pipelines::SizeConditioning as_base = sizes;
    as_base.target_height = 6;  // the score's place; the target width's weights are zero

    const at::Tensor noise = kiln::pipelines::seededNoise(5, {1, 4, 8, 8});
    const at::Tensor refined = ref_pipe->sample(rc, noise, 3, 5.0, sizes);
    const at::Tensor from_base = base_pipe->sample(bc, noise, 3, 5.0, as_base);
    QVERIFY(at::isfinite(refined).all().item<bool>());
    expectClose(refined, from_base, 1e-4, "refiner sample against the masked base");

    // Each prompt's score reaches the model: the negative's row, then the prompt's.
    sizes.negative_aesthetic_score = 2.5;
    QVERIFY(at::equal(kiln::pipelines::SdPipeline::timeIds(sizes, true).select(1, 4),
                      at::tensor({2.5f, 6.f})));
    const at::Tensor low_negative = ref_pipe->sample(rc, noise, 3, 5.0, sizes);
    QVERIFY(!at::allclose(low_negative, refined, 1e-4, 1e-4));

    // A diffusers folder with text_encoder_2 alone is read as a refiner; a base UNet in it
    // does not fit the refiner's five ids and is refused with the reason.
    const QString folder = dir.filePath("refiner_diffusers");
    QVERIFY(QDir().mkpath(folder));
    const QString sdxl =
        QString::fromStdString(kiln::testing::conformancePath("sd-tiny-1234/sdxl"));
    for (const char* sub : {"unet", "vae", "text_encoder_2", "scheduler"})
      QVERIFY(QFile::link(sdxl + "/" + sub, folder + "/" + sub));
    try {
      (void)kiln::models::openCheckpoint(folder.toStdString());
      QFAIL("opened");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::ShapeMismatch);
      QVERIFY2(std::string(e.what()).find("sdxl_refiner label embedding takes 68 inputs") !=
                   std::string::npos,
               e.what());
    }
  }

 private:
  // The sd1 conformance file as SD 2.x (see detectsAndRunsSd2), with its configuration
  // beside it: 4 heads (the tiny UNet is too narrow for SD 2.x's 64-wide heads) and the
  // tiny encoder's quick_gelu; `parameterization` when not empty.
  static void writeSd2(const QString& path, bool v_pred_key,
                       const std::map<std::string, std::string>& metadata,
                       const std::string& parameterization) {
    static const std::vector<uint8_t> one{0, 0, 0x80, 0x3f};  // float 1
    kiln::testing::writeVariant(
        path,
        [&](std::vector<kiln::testing::TensorToWrite>& t, std::vector<std::vector<uint8_t>>& s) {
          const std::string hf = "cond_stage_model.transformer.text_model.",
                            oc = "cond_stage_model.model.";
          const std::vector<std::pair<std::string, std::string>> renames{
              {"embeddings.token_embedding.weight", "token_embedding.weight"},
              {"embeddings.position_embedding.weight", "positional_embedding"},
              {"final_layer_norm.", "ln_final."},
              {"encoder.layers.", "transformer.resblocks."},
              {".self_attn.out_proj.", ".attn.out_proj."},
              {".layer_norm1.", ".ln_1."},
              {".layer_norm2.", ".ln_2."},
              {".mlp.fc1.", ".mlp.c_fc."},
              {".mlp.fc2.", ".mlp.c_proj."}};
          // First in_proj = q | k | v along dim 0 (OpenCLIP has no position_ids), then the names.
          std::vector<std::size_t> drop{kiln::testing::indexOf(t, hf + "embeddings.position_ids")};
          for (std::size_t i = 0; i < t.size(); ++i) {
            const auto q = t[i].name.find(".self_attn.q_proj.");
            if (t[i].name.rfind(hf, 0) != 0 || q == std::string::npos) continue;
            const std::string layer = t[i].name.substr(0, q),
                              kind = t[i].name.substr(q + 18);  // weight, bias
            for (const char* other : {".self_attn.k_proj.", ".self_attn.v_proj."}) {
              const std::size_t j = kiln::testing::indexOf(t, layer + other + kind);
              s[i].insert(s[i].end(), s[j].begin(), s[j].end());
              drop.push_back(j);
            }
            t[i].shape[0] *= 3;
            t[i].name = layer + ".attn.in_proj_" + kind;
          }
          std::sort(drop.rbegin(), drop.rend());
          for (std::size_t j : drop) {
            t.erase(t.begin() + static_cast<std::ptrdiff_t>(j));
            s.erase(s.begin() + static_cast<std::ptrdiff_t>(j));
          }
          for (auto& tensor : t) {
            if (tensor.name.rfind(hf, 0) != 0) continue;
            std::string name = tensor.name.substr(hf.size());
            for (const auto& [from, to] : renames)
              if (const auto at = name.find(from); at != std::string::npos)
                name.replace(at, from.size(), to);
            tensor.name = oc + name;
          }
          if (v_pred_key) {
            s.push_back(one);
            t.push_back({"v_pred", kiln::tensor_io::DType::F32, {1}, {}});
          }
        },
        metadata);
    QFile sidecar(QFileInfo(path).absolutePath() + "/" + QFileInfo(path).completeBaseName() +
                  ".json");
    if (!sidecar.open(QIODevice::WriteOnly | QIODevice::Truncate))
      throw std::runtime_error("cannot write sidecar");
    QJsonObject config{{"family", "sd2"},
                       {"scale_factor", 0.18215},
                       {"unet_config", QJsonObject{{"num_heads", 4}}},
                       {"cond_stage_config", QJsonObject{{"act", "quick_gelu"}, {"heads", 4}}}};
    if (!parameterization.empty())
      config["parameterization"] = QString::fromStdString(parameterization);
    sidecar.write(QJsonDocument(config).toJson());
  }
};

QTEST_APPLESS_MAIN(TestSdConformance)
#include "test_sd_conformance.moc"
