// Conformance of FLUX.1's transformer (dev and schnell, Black Forest Labs' layout) against
// the reference vectors in ../shared/conformance/flux1-tiny-1234: one forward with its
// rotary tables, the 2x2 latent packing and position ids, and the dev sampling loop (the
// dynamically shifted sigmas, one transformer call and one Euler step per step).
#include <QTemporaryDir>
#include <QtTest>

#include <ATen/Parallel.h>

#include <cmath>
#include <memory>
#include <string>

#include "kiln/error.h"
#include "lora_files.h"
#include "models/flux/flux_transformer.h"
#include "models/text/clip_text.h"
#include "models/text/umt5.h"
#include "models/vae/autoencoder_kl.h"
#include "ref_tensors.h"
#include "sampling/flow_match.h"
#include "tensor_io/flux_key_map.h"
#include "tensor_io/key_map.h"
#include "tensor_io/materialize.h"
#include "tensor_io/safetensors.h"

using kiln::testing::maxAbs;
using kiln::testing::maxAbsDiff;
using kiln::testing::RefFile;
namespace km = kiln::models;

namespace {

const std::string kDir = "flux1-tiny-1234/";

kiln::tensor_io::TensorIndex indexOf(const std::string& file) {
  kiln::tensor_io::TensorIndex index;
  index.addFile(
      kiln::tensor_io::SafetensorsFile::open(kiln::testing::conformancePath(kDir + file)));
  return index;
}

std::unique_ptr<km::FluxTransformer> loadTransformer(const std::string& file) {
  const auto index = indexOf(file);
  auto model =
      std::make_unique<km::FluxTransformer>(km::FluxTransformerConfig::detect(index, ""), "");
  kiln::weights::LoadOptions opts;
  opts.owned_prefixes = {""};
  kiln::weights::loadParams(model->params(), index, opts, "test");
  return model;
}

void expectClose(const at::Tensor& got, const at::Tensor& want, double tol,
                 const std::string& what) {
  QCOMPARE(got.sizes(), want.sizes());
  const double err = maxAbsDiff(got.to(at::kFloat), want);
  QVERIFY2(err <= tol, (what + ": max abs error " + std::to_string(err)).c_str());
}

// The reference forward's inputs; `guidance` only for the dev model.
km::FluxTransformer::Inputs referenceInputs(const RefFile& ref, bool guidance) {
  km::FluxTransformer::Inputs in;
  in.img = ref["in_hidden_states"];
  in.img_ids = ref["in_img_ids"];
  in.txt = ref["in_encoder_hidden_states"];
  in.txt_ids = ref["in_txt_ids"];
  in.timestep = ref["in_timestep"];
  if (guidance) in.guidance = ref["in_guidance"];
  in.pooled = ref["in_pooled_projections"];
  return in;
}

}  // namespace

class TestFluxConformance : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(2); }

  // The architecture comes from the shapes: widths, block counts, the head split over the
  // rotary axes ([4, 6, 6] for 16-channel heads, as FLUX splits its 128: [16, 56, 56]) and
  // whether there is a guidance embedding (dev) or not (schnell).
  void detectsTheArchitecture() {
    const auto index = indexOf("flux1_tiny_transformer_original.safetensors");
    QVERIFY(km::isFluxTransformer(index, ""));
    const km::FluxTransformerConfig c = km::FluxTransformerConfig::detect(index, "");
    QCOMPARE(c.dim, int64_t{32});
    QCOMPARE(c.heads, int64_t{2});
    QCOMPARE(c.in_channels, int64_t{64});
    QCOMPARE(c.out_channels, int64_t{64});
    QCOMPARE(c.context_dim, int64_t{32});
    QCOMPARE(c.vec_dim, int64_t{32});
    QCOMPARE(c.mlp_hidden, int64_t{128});
    QCOMPARE(c.double_blocks, int64_t{2});
    QCOMPARE(c.single_blocks, int64_t{2});
    QVERIFY(c.guidance);
    QVERIFY((c.axes == std::array<int64_t, 3>{4, 6, 6}));
    QVERIFY(!km::FluxTransformerConfig::detect(
                 indexOf("flux1_schnell_tiny_transformer_original.safetensors"), "")
                 .guidance);
    // The real model's 128-channel heads split as FLUX.1 does; a head width that does not
    // divide the model's is refused.
    const auto real = [](int64_t head_dim) {
      kiln::tensor_io::TensorIndex index;
      const auto add = [&](const std::string& name, std::vector<int64_t> shape) {
        kiln::tensor_io::IndexEntry e;
        e.shape = std::move(shape);
        index.add(name, std::move(e));
      };
      add("img_in.weight", {3072, 64});
      add("txt_in.weight", {3072, 4096});
      add("vector_in.in_layer.weight", {3072, 768});
      add("time_in.in_layer.weight", {3072, 256});
      add("double_blocks.0.img_mlp.0.weight", {12288, 3072});
      add("double_blocks.0.img_attn.qkv.weight", {9216, 3072});
      add("double_blocks.0.img_attn.norm.query_norm.scale", {head_dim});
      add("single_blocks.0.linear1.weight", {21504, 3072});
      add("final_layer.linear.weight", {64, 3072});
      return index;
    };
    const km::FluxTransformerConfig r = km::FluxTransformerConfig::detect(real(128), "");
    QCOMPARE(r.heads, int64_t{24});
    QCOMPARE(r.double_blocks, int64_t{1});
    QVERIFY((r.axes == std::array<int64_t, 3>{16, 56, 56}));
    QVERIFY_THROWS_EXCEPTION(kiln::Error, km::FluxTransformerConfig::detect(real(100), ""));
    const std::array<int64_t, 3> odd{16, 55, 57};
    QVERIFY_THROWS_EXCEPTION(kiln::Error, km::FluxTransformerConfig::detect(real(128), "", &odd));
    // Not FLUX: an SD checkpoint.
    QVERIFY(!km::isFluxTransformer(indexOf("../sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors"), ""));
  }

  // CLIP-L's pooled output (the row of the first end token after the final norm) and the
  // T5 v1.1 encoder without a mask, as FluxPipeline calls it (pad tokens attend too), its
  // position bias from layer 0 shared by every layer.
  void textEncoders() {
    const RefFile ref(kDir + "ref_text.safetensors");
    const auto clip_index = indexOf("text_encoder/model.safetensors");
    km::ClipTextConfig cc =
        km::ClipTextConfig::detect(clip_index, "text_model.", km::ClipLayout::HuggingFace);
    cc.heads = 4;  // the tiny model's (not visible in shapes)
    km::ClipTextModel clip(cc, "text_model.");
    kiln::weights::LoadOptions opts;
    opts.owned_prefixes = {"text_model."};
    const auto ignored = clip.ignoredKeys();
    opts.ignored.insert(ignored.begin(), ignored.end());
    kiln::weights::loadParams(clip.params(), clip_index, opts, "clip");
    const km::ClipTextOutput c = clip.forward(ref["clip_input_ids"]);
    expectClose(c.last_hidden_state, ref["clip_last_hidden_state"], 1e-5, "clip last hidden");
    expectClose(c.pooled, ref["pooled_prompt_embeds"], 1e-5, "clip pooled");

    const auto t5_index = indexOf("text_encoder_2/model.safetensors");
    const km::T5Config tc = km::T5Config::detect(t5_index, "");
    QVERIFY(tc.shared_position_bias);
    QCOMPARE(tc.heads, int64_t{4});
    km::T5Encoder t5(tc, "");
    kiln::weights::LoadOptions t5_opts;
    t5_opts.owned_prefixes = {""};
    const auto t5_ignored = t5.ignoredKeys();
    t5_opts.ignored.insert(t5_ignored.begin(), t5_ignored.end());
    kiln::weights::loadParams(t5.params(), t5_index, t5_opts, "t5");
    const km::Umt5Output t = t5.forward(ref["t5_input_ids"]);
    expectClose(t.last_hidden_state, ref["prompt_embeds"], 1e-5, "t5 last hidden");
    const at::Tensor all = ref["t5_all_hidden_states"];
    for (int64_t i = 0; i < 3; ++i)
      expectClose(t.hidden_states[static_cast<std::size_t>(i)], all[i], 1e-5,
                  "t5 hidden " + std::to_string(i));
    expectClose(t5.forward(ref["t5_input_ids"], ref["t5_input_ids"].ne(0)).last_hidden_state,
                ref["t5_last_hidden_state_masked"], 1e-5, "t5 masked");
  }

  // FLUX's 16-channel VAE from ae.safetensors (no quant convolutions): decode of a
  // diffusion-space latent after FLUX's scaling and shift, and encode to the moments.
  void vaeDecodeAndEncode() {
    const auto index = indexOf("flux1_tiny_ae_original.safetensors");
    const km::VaeConfig c = km::VaeConfig::detect(index, "");
    QVERIFY(!c.quant_convs);
    QCOMPARE(c.embed_dim, int64_t{16});
    QCOMPARE(c.downscale(), int64_t{8});
    km::AutoencoderKL vae(c, "");
    kiln::weights::LoadOptions opts;
    opts.owned_prefixes = {""};
    kiln::weights::loadParams(vae.params(), index, opts, "vae");
    const RefFile ref(kDir + "ref_vae.safetensors");
    expectClose(ref["decode_in_latent"] / 0.3611 + 0.1159, ref["decode_vae_input"], 1e-6,
                "scaling and shift");
    expectClose(vae.decode(ref["decode_vae_input"]), ref["decode_out_image"], 1e-4, "decode");
    const km::LatentMoments m = vae.encode(ref["encode_in_image"]);
    expectClose(m.mean, ref["encode_out_mean"], 1e-4, "encode mean");
    expectClose(m.logvar, ref["encode_out_logvar"], 1e-4, "encode logvar");
    expectClose((m.mean - 0.1159) * 0.3611, ref["encode_out_latent_normalized"], 1e-4,
                "normalised latent");
    // The diffusers folder's VAE is the same tensors under the original names.
    kiln::tensor_io::TensorIndex mapped;
    kiln::tensor_io::mapDiffusersVae(
        kiln::tensor_io::SafetensorsFile::open(
            kiln::testing::conformancePath(kDir + "vae/diffusion_pytorch_model.safetensors")),
        "", mapped);
    QCOMPARE(mapped.size(), index.size());
    for (const auto& [name, entry] : index.entries()) {
      const kiln::tensor_io::IndexEntry* got = mapped.find(name);
      QVERIFY2(got, name.c_str());
      QVERIFY2(at::equal(kiln::tensor_io::materialize(*got, at::kFloat),
                         kiln::tensor_io::materialize(entry, at::kFloat)),
               name.c_str());
    }
  }

  // The diffusers folders' transformers map onto the original names tensor for tensor (q,
  // k, v and the single blocks' MLP input fused, the final modulation's halves exchanged),
  // bit for bit; a tensor no rule covers or a missing part is refused by name.
  void diffusersLayoutIsTheOriginal_data() {
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("original");
    QTest::newRow("dev") << "transformer"
                         << "flux1_tiny_transformer_original.safetensors";
    QTest::newRow("schnell") << "transformer_schnell"
                             << "flux1_schnell_tiny_transformer_original.safetensors";
  }
  void diffusersLayoutIsTheOriginal() {
    QFETCH(QString, folder);
    QFETCH(QString, original);
    kiln::tensor_io::TensorIndex mapped;
    kiln::tensor_io::mapDiffusersFluxTransformer(
        kiln::tensor_io::SafetensorsFile::open(kiln::testing::conformancePath(
            kDir + folder.toStdString() + "/diffusion_pytorch_model.safetensors")),
        "model.diffusion_model.", mapped);
    const auto want = indexOf(original.toStdString());
    QCOMPARE(mapped.size(), want.size());
    for (const auto& [name, entry] : want.entries()) {
      const kiln::tensor_io::IndexEntry* got = mapped.find("model.diffusion_model." + name);
      QVERIFY2(got, name.c_str());
      QVERIFY2(at::equal(kiln::tensor_io::materialize(*got, at::kFloat),
                         kiln::tensor_io::materialize(entry, at::kFloat)),
               name.c_str());
    }
    QVERIFY(km::isFluxTransformer(mapped, "model.diffusion_model."));
    QCOMPARE(kiln::tensor_io::fluxTransformerFromDiffusers("transformer_blocks.7.ff.net.2.bias"),
             std::string("double_blocks.7.img_mlp.2.bias"));
    QCOMPARE(kiln::tensor_io::fluxTransformerFromDiffusers("attn.to_q.weight"), std::string());

    QTemporaryDir dir;
    const std::string stray = dir.filePath("stray.safetensors").toStdString();
    kiln::testing::writeTensors(stray, {{"x_embedder.weight", at::zeros({4, 4})},
                                        {"controlnet_blocks.0.weight", at::zeros({4, 4})}});
    kiln::tensor_io::TensorIndex refused;
    QVERIFY_THROWS_EXCEPTION(kiln::Error,
                             kiln::tensor_io::mapDiffusersFluxTransformer(
                                 kiln::tensor_io::SafetensorsFile::open(stray), "", refused));
    const std::string partial = dir.filePath("partial.safetensors").toStdString();
    kiln::testing::writeTensors(partial,
                                {{"transformer_blocks.0.attn.to_q.weight", at::zeros({4, 4})},
                                 {"transformer_blocks.0.attn.to_k.weight", at::zeros({4, 4})}});
    QVERIFY_THROWS_EXCEPTION(kiln::Error,
                             kiln::tensor_io::mapDiffusersFluxTransformer(
                                 kiln::tensor_io::SafetensorsFile::open(partial), "", refused));
  }

  // The rotary tables per token (text first, then image) and channel.
  void rotaryTables() {
    const RefFile ref(kDir + "ref_transformer.safetensors");
    const at::Tensor ids = at::cat({ref["in_txt_ids"], ref["in_img_ids"]});
    const auto [cos, sin] = km::fluxRopeAngles(ids, {4, 6, 6}, 10000.0);
    expectClose(cos.repeat_interleave(2, -1), ref["dbg.pos_embed.0"], 1e-6, "cos");
    expectClose(sin.repeat_interleave(2, -1), ref["dbg.pos_embed.1"], 1e-6, "sin");
  }

  void devForward() {
    const auto model = loadTransformer("flux1_tiny_transformer_original.safetensors");
    const RefFile ref(kDir + "ref_transformer.safetensors");
    expectClose(model->forward(referenceInputs(ref, true)), ref["out"], 1e-4, "dev out");
    // Without its guidance the dev model refuses to run.
    QVERIFY_THROWS_EXCEPTION(kiln::Error, model->forward(referenceInputs(ref, false)));
  }

  void schnellForward() {
    const auto model = loadTransformer("flux1_schnell_tiny_transformer_original.safetensors");
    const RefFile ref(kDir + "ref_transformer.safetensors");
    expectClose(model->forward(referenceInputs(ref, false)), ref["schnell.out"], 1e-4,
                "schnell out");
  }

  // Noise drawn unpacked [1, 16, 6, 8] and packed to 12 tokens of 64 channels, with their
  // position ids; the final tokens unpacked back, all exact.
  void packingAndIds() {
    const RefFile ref(kDir + "ref_sample.safetensors");
    QVERIFY(at::equal(km::packFluxLatent(ref["init_noise"]), ref["init_latents_packed"]));
    QVERIFY(at::equal(km::unpackFluxLatent(ref["final_latent_packed"], 6, 8), ref["final_latent"]));
    QVERIFY(at::equal(km::fluxImageIds(6, 8), ref["img_ids"]));
    QVERIFY_THROWS_EXCEPTION(kiln::Error, km::packFluxLatent(at::zeros({1, 16, 5, 8})));
    QVERIFY_THROWS_EXCEPTION(kiln::Error, km::unpackFluxLatent(ref["final_latent_packed"], 6, 6));
  }

  // The dev pipeline's loop: sigmas shifted by exp(mu) for 12 image tokens, then per step
  // one transformer call and an Euler step; every step's latent within 1e-3 of the
  // reference relative to its scale.
  void devSamplingLoop() {
    const auto model = loadTransformer("flux1_tiny_transformer_original.safetensors");
    const RefFile ref(kDir + "ref_sample.safetensors");
    const RefFile text(kDir + "ref_text.safetensors");
    const double mu = 0.5 + (1.15 - 0.5) / (4096 - 256) * (12 - 256);
    QVERIFY(std::abs(mu - ref["mu"].item<double>()) < 1e-15);
    const at::Tensor want_sigmas = ref["sigmas"];
    std::vector<double> sigmas;
    for (int i = 0; i < 4; ++i) {
      const float s = 1.0f - static_cast<float>(i) * (1.0f - 0.25f) / 3.0f;  // linspace(1, 1/4, 4)
      sigmas.push_back(kiln::sampling::shiftSigma(s, std::exp(mu)));
    }
    sigmas.push_back(0.0);
    for (int i = 0; i < 5; ++i)
      QVERIFY2(std::abs(sigmas[i] - want_sigmas[i].item<double>()) <= 1e-7,
               std::to_string(sigmas[i]).c_str());
    at::Tensor x = ref["init_latents_packed"];
    km::FluxTransformer::Inputs in;
    in.img_ids = ref["img_ids"];
    in.txt = text["prompt_embeds"];
    in.txt_ids = ref["txt_ids"];
    in.pooled = text["pooled_prompt_embeds"];
    in.guidance = at::full({1}, 3.5);
    for (int i = 0; i < 4; ++i) {
      in.img = x;
      in.timestep = at::full({1}, static_cast<float>(sigmas[i]));
      const at::Tensor v = model->forward(in);
      x = x + static_cast<float>(sigmas[i + 1] - sigmas[i]) * v;
      const at::Tensor want = ref["latents_after_step"][i];
      const double rel = maxAbsDiff(x, want) / maxAbs(want);
      QVERIFY2(rel <= 1e-3, ("step " + std::to_string(i) + ": " + std::to_string(rel)).c_str());
    }
  }
};

QTEST_MAIN(TestFluxConformance)
#include "test_flux_conformance.moc"
