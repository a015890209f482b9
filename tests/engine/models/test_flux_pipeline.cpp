// FLUX.1 as a family: loaded from every layout users have (ComfyUI's single files found
// beside the transformer, ComfyUI's all-in-one checkpoint, the diffusers folder, fp8 with
// and without per-tensor scales), sampled and decoded to the reference picture of
// ../shared/conformance/flux1-tiny-1234, ComfyUI's schedules over FLUX's model sampling,
// LoRAs in kohya, diffusers/PEFT and BFL names in both modes, the tiled decode, and the
// refusals.
#include <QTemporaryDir>
#include <QtTest>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "core/data_paths.h"
#include "flux_tiny.h"
#include "fp8.h"
#include "kiln/comfy_import.h"
#include "kiln/engine.h"
#include "kiln/error.h"
#include "kiln/lora.h"
#include "kiln/render.h"
#include "lora/lora_patcher.h"
#include "models/text/clip_tokenizer.h"
#include "pipelines/common/image_prep.h"
#include "pipelines/flux/flux_files.h"
#include "pipelines/flux/flux_pipeline.h"
#include "pipelines/registry.h"
#include "sampling/flow_ancestral.h"
#include "sampling/flow_sigmas.h"
#include "sanitizer_skips.h"
#include "sim_engine.h"
#include "tensor_io/safetensors.h"

using kiln::testing::maxAbs;
using kiln::testing::maxAbsDiff;
using kiln::testing::RefFile;
namespace fs = std::filesystem;
namespace kp = kiln::pipelines;
namespace ks = kiln::sampling;

namespace {

const std::string kDir = "flux1-tiny-1234/";

std::unique_ptr<kp::FluxPipeline> openFlux(const std::string& path,
                                           const kp::ModelRequest& parts = {}) {
  const kp::Family& family = kp::familyOf(path);
  if (family.name != "flux1") throw std::runtime_error(path + " is not claimed by FLUX");
  kp::ModelRequest request = parts;
  request.path = path;
  request.dtype = at::kFloat;
  std::unique_ptr<kp::ModelParts> parts_out = family.open(family.resolve(request), {});
  auto* flux = dynamic_cast<kp::FluxPipeline*>(parts_out.get());
  if (!flux) throw std::runtime_error("not a FluxPipeline");
  (void)parts_out.release();
  return std::unique_ptr<kp::FluxPipeline>(flux);
}

// The reference run's request: the reference encodings, 48x64, seed 1234, Euler over
// ComfyUI's simple schedule (the same sigmas as FluxPipeline's).
kp::SampleRequest referenceRequest(const kp::FluxPipeline& pipe, int64_t steps) {
  const RefFile text(kDir + "ref_text.safetensors");
  kp::SampleRequest r;
  r.positive = pipe.encodeTokens(text["clip_input_ids"], text["t5_input_ids"]);
  r.cfg = 1.0;
  r.height = 48;
  r.width = 64;
  r.seed = 1234;
  r.steps = steps;
  r.sampler = "euler";
  r.scheduler = "simple";
  return r;
}

void expectRelative(const at::Tensor& got, const at::Tensor& want, double tol,
                    const std::string& what) {
  QCOMPARE(got.sizes(), want.sizes());
  const double rel = maxAbsDiff(got, want) / maxAbs(want);
  QVERIFY2(rel <= tol, (what + ": relative error " + std::to_string(rel)).c_str());
}

void expectClose(const at::Tensor& got, const at::Tensor& want, double tol,
                 const std::string& what) {
  QCOMPARE(got.sizes(), want.sizes());
  const double err = maxAbsDiff(got.to(at::kFloat), want);
  QVERIFY2(err <= tol, (what + ": max abs error " + std::to_string(err)).c_str());
}

// ComfyUI's flux_time_shift: e^mu / (e^mu + (1 / t - 1)).
double fluxShift(double mu, double t) {
  return std::exp(mu) / (std::exp(mu) + (1 / t - 1));
}

// Writes `src` with every 2-D weight (and, with `all`, every tensor) as float8_e4m3fn;
// `scaled` adds a per-tensor scale (amax / 448) as ComfyUI's scaled fp8 files do. Returns
// what each weight loads as (its fp8 value times its scale).
std::map<std::string, at::Tensor> writeFp8(const std::string& src, const std::string& dst,
                                           bool scaled) {
  kiln::tensor_io::TensorIndex index;
  index.addFile(kiln::tensor_io::SafetensorsFile::open(src));
  std::vector<kiln::tensor_io::TensorToWrite> out;
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<at::Tensor> keep;
  std::map<std::string, at::Tensor> loads;
  bytes.reserve(2 * index.size());
  for (const auto& [name, entry] : index.entries()) {
    const at::Tensor t = kiln::tensor_io::materialize(entry, at::kFloat).contiguous();
    if (t.dim() != 2 || name.find("embed") != std::string::npos || name == "shared.weight") {
      keep.push_back(t);
      out.push_back(
          {name,
           kiln::tensor_io::DType::F32,
           t.sizes().vec(),
           {static_cast<const uint8_t*>(t.data_ptr()), static_cast<std::size_t>(t.nbytes())}});
      continue;
    }
    const float scale = scaled ? std::max(maxAbs(t), 1e-12) / 448.0 : 1.0f;
    const std::vector<float> values(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    std::vector<float> divided;
    for (float v : values) divided.push_back(v / scale);
    bytes.push_back(kiln::testing::encodeE4M3(divided));
    out.push_back({name, kiln::tensor_io::DType::F8_E4M3, t.sizes().vec(), bytes.back()});
    std::vector<float> decoded;
    for (uint8_t b : bytes.back()) decoded.push_back(kiln::testing::decodeE4M3(b));
    loads[name] = at::tensor(decoded).reshape(t.sizes()) * at::tensor(scale);
    if (scaled) {
      const at::Tensor s = at::full({}, scale, at::kFloat);
      keep.push_back(s);
      const std::string base = name.substr(0, name.size() - 7);
      out.push_back({base + ".scale_weight",
                     kiln::tensor_io::DType::F32,
                     {},
                     {static_cast<const uint8_t*>(s.data_ptr()), 4}});
    }
  }
  if (scaled) {
    bytes.push_back({0, 0});
    out.push_back({"scaled_fp8", kiln::tensor_io::DType::F8_E4M3, {2}, bytes.back()});
  }
  kiln::tensor_io::writeSafetensors(dst, out);
  return loads;
}

}  // namespace

class TestFluxPipeline : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  kiln::testing::FluxTinyModel model_;

 private Q_SLOTS:
  void initTestCase() {
    KILN_SKIP_WITHOUT_SENTENCEPIECE();  // every pipeline loads T5's sentencepiece tokenizer
    at::set_num_threads(2);
    QVERIFY(dir_.isValid());
    model_ = kiln::testing::writeFluxTinyModel(dir_.path().toStdString());
  }

  // The registry gives every layout to FLUX (a transformer alone in a diffusers folder
  // too), and neither an SD checkpoint nor a Wan transformer.
  void detectsEveryLayout() {
    for (const std::string& path : {model_.transformer, model_.schnell, model_.aio, model_.folder,
                                    model_.folder + "/transformer"}) {
      QVERIFY2(kp::isFluxModel(path), path.c_str());
      QCOMPARE(QString::fromStdString(kp::familyOf(path).name), QString("flux1"));
    }
    QVERIFY(!kp::isFluxModel(
        kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors")));
    QVERIFY(!kp::isFluxModel(
        kiln::testing::conformancePath("wan21-tiny-1234/wan2.1_t2v_tiny_original.safetensors")));
    QVERIFY(!kp::isFluxModel(model_.vae));
    QVERIFY(!kp::isFluxModel(dir_.filePath("missing.safetensors").toStdString()));
    QVERIFY(kp::fluxHasGuidance(model_.transformer));
    QVERIFY(!kp::fluxHasGuidance(model_.schnell));
  }

  // A transformer file finds ae.safetensors in ../vae and CLIP-L, T5 and T5's tokenizer in
  // ../text_encoders; given parts win; a part it cannot find is named with its option.
  void findsThePartsBesideTheTransformer() {
    const kp::FluxModelPaths p = kp::resolveFluxModel(model_.transformer);
    QCOMPARE(p.vae, model_.vae);
    QCOMPARE(p.clip_l, model_.clip_l);
    QCOMPARE(p.t5, model_.t5);
    QVERIFY(p.t5_tokenizer.ends_with("t5xxl_fp16.spiece.model"));
    const kp::FluxModelPaths aio = kp::resolveFluxModel(model_.aio);
    QCOMPARE(aio.vae, model_.aio);
    QCOMPARE(aio.t5, model_.aio);
    QCOMPARE(kp::resolveFluxModel(model_.aio, model_.vae).vae, model_.vae);
    const kp::FluxModelPaths folder = kp::resolveFluxModel(model_.folder);
    QVERIFY(folder.t5_tokenizer.ends_with("tokenizer_2/spiece.model"));

    QTemporaryDir alone;
    const std::string lone = alone.filePath("flux1-dev.safetensors").toStdString();
    fs::copy_file(model_.transformer, lone);
    try {
      (void)kp::resolveFluxModel(lone);
      QFAIL("a transformer without its VAE resolved");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::FileNotFound);
      QVERIFY2(std::string(e.what()).find("--vae") != std::string::npos, e.what());
    }
    try {
      (void)kp::resolveFluxModel(lone, model_.vae);
      QFAIL("a transformer without CLIP-L resolved");
    } catch (const kiln::Error& e) {
      QVERIFY2(std::string(e.what()).find("--clip-l") != std::string::npos, e.what());
    }
    const kp::FluxModelPaths given =
        kp::resolveFluxModel(lone, model_.vae, model_.clip_l, model_.t5);
    QCOMPARE(given.t5, model_.t5);
    // A UMT5 encoder where T5 belongs is refused by name.
    QVERIFY_THROWS_EXCEPTION(kiln::Error, kp::openFluxT5(kiln::testing::conformancePath(
                                              "wan21-tiny-1234/text_encoder/model.safetensors")));
  }

  // From each layout: the prompt's encodings, the sampled latent and the decoded picture
  // of the reference FluxPipeline run (dev: 4 steps, guidance 3.5, mu for 12 tokens).
  void devMatchesTheReference_data() {
    QTest::addColumn<QString>("which");
    QTest::newRow("single files") << "single";
    QTest::newRow("all-in-one") << "aio";
    QTest::newRow("diffusers folder") << "folder";
  }
  void devMatchesTheReference() {
    QFETCH(QString, which);
    const std::string path = which == "single" ? model_.transformer
                             : which == "aio"  ? model_.aio
                                               : model_.folder;
    const auto pipe = openFlux(path);
    QVERIFY(pipe->guidanceDistilled());
    const RefFile ref(kDir + "ref_sample.safetensors");
    const RefFile text(kDir + "ref_text.safetensors");
    kp::SampleRequest r = referenceRequest(*pipe, 4);
    expectClose(r.positive.context, text["prompt_embeds"], 1e-5, "T5");
    expectClose(r.positive.pooled, text["pooled_prompt_embeds"], 1e-5, "CLIP-L pooled");
    QVERIFY(std::abs(std::log(pipe->modelSampling(r).shift) - ref["mu"].item<double>()) < 1e-12);
    const at::Tensor latent = pipe->sampleLatent(r);
    expectRelative(latent, ref["final_latent"], 1e-3, "final latent");
    // the latent space: (z - 0.1159) * 0.3611
    const kp::LatentFormat f = pipe->latentFormat();
    QCOMPARE(f.channels, int64_t{16});
    QCOMPARE(f.side_multiple, int64_t{16});
    QCOMPARE(f.scaling_factor, 0.3611);
    QCOMPARE(f.shift, 0.1159);
    const at::Tensor image = pipe->imageCodec()->decode(latent);
    expectClose(image, ref["image"], 1e-3, "decoded image");
    // Diffusers' own schedule is the same walk.
    r.scheduler = "diffusers";
    expectRelative(pipe->sampleLatent(r), ref["final_latent"], 1e-3, "diffusers schedule");
  }

  // Schnell: no guidance embedding, unshifted sigmas, 2 steps.
  void schnellMatchesTheReference() {
    const auto pipe = openFlux(model_.schnell);
    QVERIFY(!pipe->guidanceDistilled());
    QCOMPARE(pipe->t5Tokens(), int64_t{256});
    const RefFile ref(kDir + "ref_sample_schnell.safetensors");
    const kp::SampleRequest r = referenceRequest(*pipe, 2);
    const at::Tensor latent = pipe->sampleLatent(r);
    expectRelative(latent, ref["final_latent"], 1e-3, "schnell final latent");
    expectClose(pipe->imageCodec()->decode(latent), ref["image"], 1e-3, "schnell image");
  }

  // The CLIP tokenizer on the reference prompt gives the reference ids, and the pipeline's
  // own prompt encoding pools what the reference pooled; T5's sequence is padded to 256
  // tokens as ComfyUI pads it, and a longer prompt keeps every token.
  void encodesAPromptWithItsTokenizers() {
    const auto pipe = openFlux(model_.transformer);
    const RefFile text(kDir + "ref_text.safetensors");
    const std::string prompt = "A photo of a red fox sitting in fresh snow, golden hour, 35mm";
    const auto tokenizer = kiln::models::ClipTokenizer::fromVocabFile(
        kiln::core::findDataFile("bpe_simple_vocab_16e6.txt.gz"));
    const std::vector<int64_t> ids =
        tokenizer.encodePadded(prompt, kiln::models::ClipTokenizer::kEos, 77);
    QVERIFY(at::equal(at::tensor(ids).unsqueeze(0), text["clip_input_ids"]));
    const kp::PromptEncoding e = pipe->promptEncoding(prompt);
    expectClose(e.pooled, text["pooled_prompt_embeds"], 1e-5, "pooled");
    QCOMPARE(e.context.sizes(), (at::IntArrayRef{1, 256, 32}));
    QVERIFY(!e.guidance.has_value());
    std::string longer;
    for (int i = 0; i < 150; ++i) longer += "red fox snow ";
    const int64_t n = pipe->promptEncoding(longer).context.size(1);
    QVERIFY2(n > 256 && n <= 512, std::to_string(n).c_str());
  }

  // ComfyUI's schedulers over ModelSamplingFlux (10000 entries, timestep = sigma) and
  // ModelSamplingDiscreteFlow (1000 entries, timestep = 1000 sigma), from their published
  // definitions; diffusers' FlowMatchEuler sigmas as the reference run has them.
  void schedulesOverFluxModelSampling() {
    const RefFile ref(kDir + "ref_sample.safetensors");
    const double mu = ref["mu"].item<double>();
    QVERIFY(std::abs(ks::fluxMu(12) - mu) < 1e-15);
    const ks::FlowModelSampling flux = ks::FlowModelSampling::flux(mu);
    const at::Tensor want = ref["sigmas"];
    for (const auto schedule : {ks::Schedule::Simple, ks::Schedule::Diffusers}) {
      const std::vector<double> s = ks::flowSigmas(flux, schedule, 4);
      QCOMPARE(s.size(), std::size_t{5});
      for (int i = 0; i < 5; ++i)
        QVERIFY2(std::abs(s[i] - want[i].item<double>()) <= 1e-6, std::to_string(s[i]).c_str());
    }
    // normal: linspace(sigma_max, sigma_min) in timesteps (= sigmas), each shifted again
    const ks::FlowModelSampling dev = ks::FlowModelSampling::flux(1.15);
    const double smax = fluxShift(1.15, 1.0), smin = fluxShift(1.15, 1e-4);
    const std::vector<double> normal = ks::flowSigmas(dev, ks::Schedule::Normal, 3);
    QCOMPARE(normal.size(), std::size_t{4});
    for (int i = 0; i < 3; ++i)
      QVERIFY(std::abs(normal[i] - fluxShift(1.15, smax + (smin - smax) * i / 2.0)) < 1e-6);
    QCOMPARE(normal.back(), 0.0);
    const std::vector<double> karras = ks::flowSigmas(dev, ks::Schedule::Karras, 5);
    QVERIFY(std::abs(karras.front() - smax) < 1e-6 && std::abs(karras[4] - smin) < 1e-6);
    // schnell: unshifted, simple = 1 - i / steps
    const std::vector<double> schnell =
        ks::flowSigmas(ks::FlowModelSampling::discrete(1.0), ks::Schedule::Simple, 4);
    const std::vector<double> want_schnell{1.0, 0.75, 0.5, 0.25, 0.0};
    for (int i = 0; i < 5; ++i) QVERIFY(std::abs(schnell[i] - want_schnell[i]) < 1e-7);
    QVERIFY_THROWS_EXCEPTION(kiln::Error, ks::flowSigmas(dev, ks::Schedule::Simple, 0));
  }

  // fp8 weights load upcast: with per-tensor scales (the transformer, ComfyUI's scaled_fp8)
  // each weight is its fp8 value times its scale; without (T5) the fp8 value itself.
  void loadsFp8Weights() {
    QTemporaryDir tmp;
    const std::string transformer = tmp.filePath("flux1-dev-fp8.safetensors").toStdString();
    const std::string t5 = tmp.filePath("t5xxl_fp8_e4m3fn.safetensors").toStdString();
    const auto t_loads = writeFp8(model_.transformer, transformer, true);
    const auto u_loads = writeFp8(model_.t5, t5, false);
    fs::copy_file(fs::path(model_.t5).replace_extension("spiece.model"),
                  tmp.filePath("t5xxl_fp8_e4m3fn.spiece.model").toStdString());
    kp::ModelRequest parts;
    parts.vae_path = model_.vae;
    parts.text_encoder_path = model_.clip_l;
    parts.text_encoder_2_path = t5;
    const auto pipe = openFlux(transformer, parts);
    int checked = 0;
    for (const auto& slot : pipe->transformer().params().slots())
      if (const auto it = t_loads.find(slot.name); it != t_loads.end()) {
        QVERIFY2(at::equal(*slot.tensor, it->second), slot.name.c_str());
        ++checked;
      }
    QCOMPARE(checked, static_cast<int>(t_loads.size()));
    bool noted = false;
    for (const auto& n : pipe->notes())
      noted = noted || n.find("per-tensor scales") != std::string::npos;
    QVERIFY(noted);
    // The fp8 model still draws close to the reference (fp8 keeps about 2 significant digits).
    const at::Tensor latent = pipe->sampleLatent(referenceRequest(*pipe, 4));
    QVERIFY(at::isfinite(latent).all().item<bool>());
    const RefFile ref(kDir + "ref_sample.safetensors");
    const double rel = maxAbsDiff(latent, ref["final_latent"]) / maxAbs(ref["final_latent"]);
    qInfo("fp8 transformer and T5: final latent within %.3f of the fp16 reference", rel);
    QVERIFY(rel < 0.5);
    QVERIFY(!u_loads.empty());
  }

  // The 16-channel VAE decodes in tiles as the SD VAEs do: one tile is the whole decode;
  // overlapping tiles stay within the SD family's bounds.
  void tiledDecodeMatchesTheWhole() {
    const auto pipe = openFlux(model_.transformer);
    const kp::VaeCodec codec = *pipe->imageCodec();
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t{7});
    const at::Tensor latent = at::randn({1, 16, 48, 48}, gen);
    const at::Tensor full = codec.decode(latent);
    const kiln::tiling::Tiles one{48, 0};
    QVERIFY(at::equal(codec.decode(latent, &one), full));
    const kiln::tiling::Tiles tiles{24, 8};
    const at::Tensor tiled = codec.decode(latent, &tiles);
    const double mean = (tiled - full).abs().mean().item<double>(), max = maxAbsDiff(tiled, full);
    qInfo("FLUX tiled vs full decode: mean %.4f, max %.4f", mean, max);
    QVERIFY(mean < 0.06);
    QVERIFY(max < 1.3);
    // encode then decode: the shift is undone exactly as it was applied
    const at::Tensor image = full.clamp(-1, 1);
    const at::Tensor moments = pipe->vae().encodeMoments(image).to(at::kFloat);
    expectClose(codec.encode(image), (moments.chunk(2, 1)[0] - 0.1159) * 0.3611, 1e-6, "encode");
  }

  // Image to image from step 2 of 4 draws from the picture's latent; a mask of zeros keeps
  // the picture's latent exactly.
  void startsFromAPicture() {
    const auto pipe = openFlux(model_.transformer);
    kp::SampleRequest r = referenceRequest(*pipe, 4);
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t{3});
    ks::LatentInit init;
    init.latent = at::randn({1, 16, 6, 8}, gen);
    init.start_step = 2;
    r.init = &init;
    const at::Tensor out = pipe->sampleLatent(r);
    QVERIFY(at::isfinite(out).all().item<bool>());
    QVERIFY(!at::equal(out, init.latent));
    init.mask = at::zeros({1, 1, 6, 8});
    QVERIFY(at::equal(pipe->sampleLatent(r), init.latent));
  }

  // Distilled guidance is the prompt's (FluxGuidance) and reaches the model: another value
  // draws another latent; true CFG with a negative prompt runs when cfg is not 1.
  void guidanceReachesTheModel() {
    const auto pipe = openFlux(model_.transformer);
    kp::SampleRequest r = referenceRequest(*pipe, 2);
    const at::Tensor base = pipe->sampleLatent(r);
    r.positive.guidance = 3.5;
    QVERIFY(at::equal(pipe->sampleLatent(r), base));
    r.positive.guidance = 1.0;
    QVERIFY(!at::equal(pipe->sampleLatent(r), base));
    r.positive.guidance.reset();
    r.cfg = 2.0;
    r.negative = pipe->promptEncoding("");
    QVERIFY(!at::equal(pipe->sampleLatent(r), base));
    QVERIFY(pipe->parametersSuffix(r).find("Distilled CFG Scale: 3.5") != std::string::npos);
  }

  // A LoRA in each naming reaches its layers, whole or as its rows of a fused projection
  // (diffusers' to_k is the second third of BFL's qkv, proj_mlp the MLP rows of linear1),
  // merged exactly as written out by hand; hook mode draws what merge draws.
  void lorasInEveryLayout_data() {
    QTest::addColumn<QString>("layout");
    QTest::newRow("kohya") << "kohya";
    QTest::newRow("diffusers/PEFT") << "peft";
    QTest::newRow("BFL keys") << "bfl";
  }
  void lorasInEveryLayout() {
    QFETCH(QString, layout);
    const auto pipe = openFlux(model_.transformer);
    const auto& c = pipe->transformer().config();
    const int64_t d = c.dim, rank = 4;
    struct Patch {
      std::string module, weight;
      int64_t row_offset, rows;
    };
    std::vector<Patch> patches;
    if (layout == "kohya")
      patches = {{"lora_unet_double_blocks_0_img_attn_qkv", "double_blocks.0.img_attn.qkv.weight",
                  0, 3 * d},
                 {"lora_unet_single_blocks_1_linear2", "single_blocks.1.linear2.weight", 0, d}};
    else if (layout == "peft")
      patches = {{"transformer.transformer_blocks.0.attn.to_k",
                  "double_blocks.0.img_attn.qkv.weight", d, d},
                 {"transformer.single_transformer_blocks.0.proj_mlp",
                  "single_blocks.0.linear1.weight", 3 * d, c.mlp_hidden},
                 {"transformer.transformer_blocks.1.attn.add_v_proj",
                  "double_blocks.1.txt_attn.qkv.weight", 2 * d, d}};
    else
      patches = {
          {"diffusion_model.double_blocks.0.img_mlp.0", "double_blocks.0.img_mlp.0.weight", 0,
           c.mlp_hidden},
          {"diffusion_model.final_layer.linear", "final_layer.linear.weight", 0, c.out_channels}};
    std::map<std::string, at::Tensor> slots;
    for (const auto& slot : pipe->transformer().params().slots()) slots[slot.name] = *slot.tensor;
    kiln::testing::NamedTensors tensors;
    std::map<std::string, at::Tensor> want;
    int64_t seed = 11;
    for (const auto& p : patches) {
      const at::Tensor w = slots.at(p.weight);
      const auto pair = kiln::testing::lowRankFor({p.rows, w.size(1)}, rank,
                                                  layout == "peft" ? rank : 2.0, seed++);
      if (layout == "kohya") {
        tensors.push_back({p.module + ".lora_down.weight", pair.down});
        tensors.push_back({p.module + ".lora_up.weight", pair.up});
        tensors.push_back({p.module + ".alpha", at::full({}, pair.alpha)});
      } else {
        tensors.push_back({p.module + ".lora_A.weight", pair.down});
        tensors.push_back({p.module + ".lora_B.weight", pair.up});
        if (layout == "bfl") tensors.push_back({p.module + ".alpha", at::full({}, pair.alpha)});
      }
      at::Tensor merged = want.count(p.weight) ? want[p.weight] : w.clone();
      merged.narrow(0, p.row_offset, p.rows)
          .copy_(kiln::testing::mergedByHand(w.narrow(0, p.row_offset, p.rows), pair, 0.8));
      want[p.weight] = merged;
    }
    QTemporaryDir tmp;
    const std::string file = tmp.filePath("lora.safetensors").toStdString();
    kiln::testing::writeTensors(file, tensors);
    const RefFile ref(kDir + "ref_transformer.safetensors");
    const auto forward = [&] {
      kiln::models::FluxTransformer::Inputs in;
      in.img = ref["in_hidden_states"];
      in.img_ids = ref["in_img_ids"];
      in.txt = ref["in_encoder_hidden_states"];
      in.txt_ids = ref["in_txt_ids"];
      in.timestep = ref["in_timestep"];
      in.guidance = ref["in_guidance"];
      in.pooled = ref["in_pooled_projections"];
      return pipe->transformer().forward(in);
    };
    kiln::lora::LoraPatcher patcher(*pipe->loraTargets());
    const auto reports = patcher.apply({kiln::LoraSpec(file, 0.8)}, kiln::LoraMode::Merge);
    QCOMPARE(reports.at(0).applied, static_cast<int>(patches.size()));
    QVERIFY2(reports.at(0).unmatched.empty(), reports.at(0).describe().c_str());
    for (const auto& slot : pipe->transformer().params().slots())
      if (const auto it = want.find(slot.name); it != want.end())
        QVERIFY2(maxAbsDiff(*slot.tensor, it->second) < 1e-5, slot.name.c_str());
    const at::Tensor merged_out = forward();
    QVERIFY(!at::equal(merged_out, ref["out"]));
    patcher.apply({kiln::LoraSpec(file, 0.8)}, kiln::LoraMode::Hook);
    expectClose(forward(), merged_out, 1e-5, "hook vs merge");
    patcher.restore();
    expectClose(forward(), ref["out"], 1e-4, "restored");
  }

  // The render API draws FLUX from a transformer file with its parts found beside it, at
  // the model's own defaults (CFG 1, euler over the simple schedule) with the distilled
  // guidance asked for, and the picture says so in its parameters.
  void rendersThroughTheRenderApi() {
    kiln::RenderParams p = kiln::defaultRenderParams(model_.transformer);
    QCOMPARE(p.sampling.cfg_scale, 1.0);
    QCOMPARE(QString::fromStdString(p.sampling.scheduler), QString("simple"));
    QCOMPARE(kiln::defaultRenderParams(model_.schnell).sampling.steps, 4);
    p.prompt.text = "a red fox in snow";
    p.size.width = 64;
    p.size.height = 48;
    p.sampling.steps = 2;
    p.sampling.guidance = 2.5;
    p.model.dtype = kiln::ComputeDType::Float32;
    p.model.threads = 2;
    const kiln::RenderResult r = kiln::render(p);
    QCOMPARE(r.image.width, 64);
    QCOMPARE(r.image.height, 48);
    QCOMPARE(QString::fromStdString(r.model_family), QString("flux1"));
    const std::string params = r.image.text.at("parameters");
    QVERIFY2(params.find("Distilled CFG Scale: 2.5") != std::string::npos, params.c_str());
    // The same picture from the all-in-one checkpoint and with the parts given by hand.
    kiln::RenderParams aio = p;
    aio.model.path = model_.aio;
    QVERIFY(kiln::render(aio).image.pixels == r.image.pixels);
    kiln::RenderParams given = p;
    given.model.vae_path = model_.vae;
    given.model.text_encoder_path = model_.clip_l;
    given.model.text_encoder_2_path = model_.t5;
    QVERIFY(kiln::render(given).image.pixels == r.image.pixels);
  }

  // On a simulated accelerator every offload mode draws the resident picture, with T5
  // offloaded by its class through the always list.
  void everyOffloadModeDrawsTheResidentPicture() {
    kiln::Job job;
    job.params = kiln::defaultRenderParams(model_.transformer);
    job.params.prompt.text = "a red fox in snow";
    job.params.size = {64, 48};
    job.params.sampling.steps = 2;
    job.params.model.dtype = kiln::ComputeDType::Float32;
    job.params.model.threads = 2;
    kiln::testing::SimEngine sim("sim:512MiB", 1);
    kiln::Event end = sim.run(job);
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    const kiln::Image resident = end.outputs.at(0);
    for (const kiln::OffloadMode mode :
         {kiln::OffloadMode::Model, kiln::OffloadMode::GroupBlock, kiln::OffloadMode::GroupLeaf,
          kiln::OffloadMode::Balanced}) {
      kiln::OffloadSettings s;
      s.mode = mode;
      s.streams = mode == kiln::OffloadMode::GroupLeaf;
      s.always = {"T5EncoderModel"};
      sim.engine().setOffloadSettings(s);
      QVERIFY(sim.engine().waitIdle(120));
      end = sim.run(job);
      QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
      QVERIFY2(end.outputs.at(0).pixels == resident.pixels, kiln::offloadModeName(mode));
    }
    QVERIFY(sim.logged("text_encoder_2 (T5EncoderModel"));
  }

  // ComfyUI's FLUX.1 dev workflow (the split loaders, FluxGuidance, ModelSamplingFlux,
  // EmptySD3LatentImage and the SamplerCustomAdvanced set) imports with nothing left out
  // and draws what the pipeline draws at those settings.
  void importsAndDrawsComfyUisFluxWorkflow() {
    const std::string api = R"({
 "1": {"class_type": "UNETLoader", "inputs": {"unet_name": "flux1-dev-tiny.safetensors", "weight_dtype": "default"}},
 "2": {"class_type": "DualCLIPLoader", "inputs": {"clip_name1": "t5xxl_fp16.safetensors", "clip_name2": "clip_l.safetensors", "type": "flux"}},
 "3": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
 "4": {"class_type": "CLIPTextEncode", "inputs": {"text": "a red fox in fresh snow", "clip": ["2", 0]}},
 "5": {"class_type": "FluxGuidance", "inputs": {"guidance": 2.5, "conditioning": ["4", 0]}},
 "6": {"class_type": "ModelSamplingFlux", "inputs": {"max_shift": 1.15, "base_shift": 0.5, "width": 64, "height": 48, "model": ["1", 0]}},
 "7": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 64, "height": 48, "batch_size": 1}},
 "8": {"class_type": "RandomNoise", "inputs": {"noise_seed": 1234}},
 "9": {"class_type": "KSamplerSelect", "inputs": {"sampler_name": "euler"}},
 "10": {"class_type": "BasicScheduler", "inputs": {"scheduler": "simple", "steps": 3, "denoise": 1.0, "model": ["6", 0]}},
 "11": {"class_type": "BasicGuider", "inputs": {"model": ["6", 0], "conditioning": ["5", 0]}},
 "12": {"class_type": "SamplerCustomAdvanced", "inputs": {"noise": ["8", 0], "guider": ["11", 0], "sampler": ["9", 0], "sigmas": ["10", 0], "latent_image": ["7", 0]}},
 "13": {"class_type": "VAEDecode", "inputs": {"samples": ["12", 1], "vae": ["3", 0]}},
 "14": {"class_type": "PreviewImage", "inputs": {"images": ["13", 0]}}
})";
    kiln::ModelFolders folders;
    folders.roots = {dir_.path().toStdString()};
    kiln::ComfyImport im = kiln::importComfyWorkflow(api, folders);
    std::string unmapped;
    for (const auto& u : im.unmapped) unmapped += u + "\n";
    QVERIFY2(im.unmapped.empty(), unmapped.c_str());
    std::map<std::string, int> types;
    for (const auto& n : im.workflow.nodes) ++types[n.type];
    QCOMPARE(types["LoadCheckpoint"], 1);
    QCOMPARE(types["Sampler"], 1);
    QCOMPARE(static_cast<int>(im.workflow.nodes.size()), 9);
    kiln::WorkflowNode* loader = im.workflow.node("1");
    QVERIFY(loader);
    QCOMPARE(std::get<std::string>(loader->params.at("text_encoder_2_name")), model_.t5);
    QCOMPARE(std::get<std::string>(loader->params.at("text_encoder_name")), model_.clip_l);
    // compared with the fp32 pipeline below
    loader->params["dtype"] = std::string("fp32");
    im.workflow.node("3")->params["dtype"] = std::string("fp32");
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(im.workflow);
    kiln::testing::SimEngine engine("cpu", 1);
    const kiln::Event end = engine.run(job);
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());

    const auto pipe = openFlux(model_.transformer);
    kp::SampleRequest r;
    r.positive = pipe->promptEncoding("a red fox in fresh snow");
    r.positive.guidance = 2.5;
    r.negative = r.positive;
    r.cfg = 1.0;
    r.height = 48;
    r.width = 64;
    r.seed = 1234;
    r.steps = 3;
    r.scheduler = "simple";
    r.flow_shift = ks::fluxMu(12);
    const at::Tensor want =
        (pipe->imageCodec()->decode(pipe->sampleLatent(r)) / 2 + 0.5).clamp(0, 1);
    const at::Tensor got = kp::imageTensor(end.outputs.at(0));
    const double err = maxAbsDiff(got, want);
    qInfo("imported ComfyUI workflow vs the pipeline: max abs %.2e", err);
    QVERIFY(err < 2e-3);
  }

  // euler_ancestral for flow models as ComfyUI defines it (sample_euler_ancestral_RF),
  // step by step against the definition written out with a denoiser of our own; with eta 0
  // it is Euler's walk; FLUX draws with it from its seed's noise.
  void eulerAncestralForFlowModels() {
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t{5});
    const at::Tensor x0 = at::randn({1, 4, 3, 3}, gen), start = at::randn({1, 4, 3, 3}, gen);
    const ks::DenoiseFn model = [&](const at::Tensor& x, double sigma) {
      return x0 * 0.8 + x * (0.1 * sigma);
    };
    const std::vector<double> sigmas{1.0, 0.7, 0.4, 0.0};
    std::vector<at::Tensor> draws;
    for (int i = 0; i < 3; ++i) draws.push_back(at::randn({1, 4, 3, 3}, gen));
    std::size_t k = 0;
    const at::Tensor got =
        ks::sampleEulerAncestralFlow(model, start, sigmas, [&] { return draws.at(k++); });
    QCOMPARE(k, std::size_t{2});  // no noise after the last step
    at::Tensor want = start;
    for (std::size_t i = 0; i + 1 < sigmas.size(); ++i) {
      const double s = sigmas[i], next = sigmas[i + 1];
      const at::Tensor d = model(want, s);
      if (next == 0) {
        want = d;
        continue;
      }
      const double down = next * next / s, a_next = 1 - next, a_down = 1 - down;
      const double renoise =
          std::sqrt(next * next - down * down * a_next * a_next / (a_down * a_down));
      want = (a_next / a_down) * ((down / s) * want + (1 - down / s) * d) + draws[i] * renoise;
    }
    QVERIFY(maxAbsDiff(got, want) < 1e-6);
    const at::Tensor euler = ks::sampleSigmas(ks::SamplerKind::Euler, model, start, sigmas);
    const at::Tensor eta0 = ks::sampleEulerAncestralFlow(
        model, start, sigmas,
        [&] {
          return at::zeros({1, 4, 3, 3});
        },
        {}, 0.0);
    QVERIFY(maxAbsDiff(eta0, euler) < 1e-5);

    const auto pipe = openFlux(model_.transformer);
    kp::SampleRequest r = referenceRequest(*pipe, 3);
    const at::Tensor plain = pipe->sampleLatent(r);
    r.sampler = "euler_ancestral";
    const at::Tensor ancestral = pipe->sampleLatent(r);
    QVERIFY(at::isfinite(ancestral).all().item<bool>());
    QVERIFY(!at::equal(ancestral, plain));
    QVERIFY(at::equal(pipe->sampleLatent(r), ancestral));  // the seed's noise, every time
  }

  void refusals() {
    const auto pipe = openFlux(model_.transformer);
    kp::SampleRequest r = referenceRequest(*pipe, 2);
    r.sampler = "dpmpp_2m_sde";  // adds noise as diffusion models take it
    QVERIFY_THROWS_EXCEPTION(kiln::Error, pipe->sampleLatent(r));
    r.sampler = "euler";
    r.width = 56;  // not a multiple of 16
    QVERIFY_THROWS_EXCEPTION(kiln::Error, pipe->sampleLatent(r));
    r.width = 64;
    r.frames = 5;
    QVERIFY_THROWS_EXCEPTION(kiln::Error, pipe->sampleLatent(r));
    r.frames = 0;
    r.positive.pooled = at::Tensor();  // an SD prompt's encoding has no pooled vector
    QVERIFY_THROWS_EXCEPTION(kiln::Error, pipe->sampleLatent(r));
    // A VAE that is not FLUX's
    kp::ModelRequest parts;
    parts.vae_path =
        kiln::testing::conformancePath("sd-tiny-1234/sd1/vae/diffusion_pytorch_model.safetensors");
    QVERIFY_THROWS_EXCEPTION(kiln::Error, openFlux(model_.transformer, parts));
  }
};

QTEST_MAIN(TestFluxPipeline)
#include "test_flux_pipeline.moc"
