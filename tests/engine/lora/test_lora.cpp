// LoRA on the conformance models: files the test writes in every supported layout merge
// to what the test computes by hand, in every offload mode on the simulated device;
// removing them restores the weights bit for bit; bad files change nothing.
#include <QTemporaryDir>
#include <QtTest>

#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include "kiln/error.h"
#include "lora/lora_file.h"
#include "lora/lora_patcher.h"
#include "lora_files.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "nodes/model_loading.h"
#include "pipelines/sd/sd_lora_targets.h"
#include "pipelines/sd/sd_pipeline.h"
#include "ref_tensors.h"
#include "sampling/steps.h"

using namespace kiln;
using kiln::testing::LowRankPair;
using kiln::testing::NamedTensors;

namespace {

// The most resident memory this process has had (getrusage), in bytes.
int64_t peakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

constexpr int64_t kMiB = 1024 * 1024;

std::string modelPath(const std::string& family) {
  return kiln::testing::conformancePath("sd-tiny-1234/" + family + "/" + family +
                                        "_tiny_ldm.safetensors");
}

std::unique_ptr<pipelines::SdPipeline> load(const std::string& family,
                                            at::ScalarType dtype = at::kFloat) {
  return std::make_unique<pipelines::SdPipeline>(models::openCheckpoint(modelPath(family)), dtype);
}

at::Tensor& weight(const pipelines::SdPipeline& p, const std::string& key) {
  for (const auto* list : p.paramLists())
    for (const auto& slot : list->slots())
      if (slot.name == key) return *slot.tensor;
  throw std::runtime_error("no weight " + key);
}

// Every weight, cloned, by key.
std::map<std::string, at::Tensor> snapshot(const pipelines::SdPipeline& p) {
  std::map<std::string, at::Tensor> out;
  for (const auto* list : p.paramLists())
    for (const auto& slot : list->slots()) out[slot.name] = slot.tensor->clone();
  return out;
}

bool sameWeights(const pipelines::SdPipeline& p, const std::map<std::string, at::Tensor>& before) {
  for (const auto* list : p.paramLists())
    for (const auto& slot : list->slots())
      if (!slot.tensor->equal(before.at(slot.name))) return false;
  return true;
}

// The UNet's output on a fixed latent, conditioned through the pipeline's own text
// encoders, so text-encoder weights count too.
at::Tensor output(const pipelines::SdPipeline& p, const memory::Device* dev = nullptr) {
  std::optional<memory::DeviceScope> scope;
  if (dev) scope.emplace(*dev);
  const auto cond = p.encodePrompts("a red circle", "blurry");
  models::UNetInputs in;
  in.latent =
      at::ones({2, p.spec().unet.in_channels, 8, 8}) * at::linspace(-1, 1, 64).view({1, 1, 8, 8});
  in.timesteps = at::full({2}, 500.0f);
  in.context = cond.context;
  if (p.spec().unet.adm_in_channels > 0)
    in.y = p.unet().timeIdConditioning(
        cond.pooled, pipelines::SdPipeline::timeIds(pipelines::SizeConditioning::forImage(64, 64)));
  const at::Tensor out = p.unet().forward(in);
  return dev ? dev->download(out) : out;
}

double maxDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kFloat) - b.to(at::kFloat)).abs().max().item<double>();
}

// One module of a test LoRA: its name in the file, the weight it must land on (rows of
// it for q/k/v inside a fused in_proj) and its low-rank pair.
struct Module {
  std::string name;
  std::string key;
  int64_t row_offset = 0, rows = -1;
  bool tucker = false;  // conv LoRA with lora_mid
};

std::vector<Module> modulesFor(const std::string& family) {
  if (family == "sd1")
    return {
        {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q",
         "model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn1.to_q.weight"},
        // diffusers-style paths for the same UNet
        {"lora_unet_down_blocks_0_attentions_0_proj_in",
         "model.diffusion_model.input_blocks.1.1.proj_in.weight"},
        {"lora_unet_up_blocks_0_resnets_2_conv1",
         "model.diffusion_model.output_blocks.2.0.in_layers.2.weight"},
        {"lora_unet_mid_block_attentions_0_transformer_blocks_0_ff_net_2",
         "model.diffusion_model.middle_block.1.transformer_blocks.0.ff.net.2.weight"},
        {"lora_unet_input_blocks_1_0_in_layers_2",
         "model.diffusion_model.input_blocks.1.0.in_layers.2.weight", 0, -1, true},
        {"lora_te_text_model_encoder_layers_0_self_attn_q_proj",
         "cond_stage_model.transformer.text_model.encoder.layers.0.self_attn.q_proj.weight"},
    };
  return {
      {"lora_unet_input_blocks_4_1_transformer_blocks_1_attn1_to_q",
       "model.diffusion_model.input_blocks.4.1.transformer_blocks.1.attn1.to_q.weight"},
      {"lora_unet_mid_block_attentions_0_proj_in",
       "model.diffusion_model.middle_block.1.proj_in.weight"},
      {"lora_unet_up_blocks_0_attentions_2_transformer_blocks_0_attn2_to_k",
       "model.diffusion_model.output_blocks.2.1.transformer_blocks.0.attn2.to_k.weight"},
      {"lora_te1_text_model_encoder_layers_0_self_attn_q_proj",
       "conditioner.embedders.0.transformer.text_model.encoder.layers.0.self_attn.q_proj.weight"},
      {"lora_te2_text_model_encoder_layers_0_self_attn_k_proj",
       "conditioner.embedders.1.model.transformer.resblocks.0.attn.in_proj_weight", 24, 24},
      {"lora_te2_text_model_encoder_layers_0_mlp_fc1",
       "conditioner.embedders.1.model.transformer.resblocks.0.mlp.c_fc.weight"},
  };
}

// Writes a kohya file for `modules` of `pipe` and returns what each weight must become at
// `strength`, computed here from the formula.
std::map<std::string, at::Tensor> writeKohya(const std::string& path,
                                             const pipelines::SdPipeline& pipe,
                                             const std::vector<Module>& modules, double strength,
                                             int64_t seed = 1) {
  NamedTensors tensors;
  std::map<std::string, at::Tensor> expected;
  for (const Module& m : modules) {
    const at::Tensor w = weight(pipe, m.key);
    const at::Tensor target = m.rows < 0 ? w : w.narrow(0, m.row_offset, m.rows);
    const int64_t rank = 4;
    LowRankPair p = kiln::testing::lowRankFor(target.sizes().vec(), rank, 2.0, seed++);
    p.down = p.down.to(at::kHalf).to(at::kFloat);  // the file stores fp16
    p.up = p.up.to(at::kHalf).to(at::kFloat);
    at::Tensor merged;
    if (m.tucker) {
      // down [r, in, 1, 1], mid [r, r, kh, kw], up [out, r, 1, 1]
      const int64_t kh = target.size(2), kw = target.size(3);
      p.down = p.down.narrow(2, 0, 1).narrow(3, 0, 1).contiguous();
      at::manual_seed(static_cast<uint64_t>(seed++));
      const at::Tensor mid = (at::randn({rank, rank, kh, kw}) * 0.3).to(at::kHalf).to(at::kFloat);
      at::Tensor delta = at::zeros(target.sizes(), at::kFloat);
      for (int64_t k = 0; k < kh; ++k)
        for (int64_t l = 0; l < kw; ++l)
          delta.select(3, l).select(2, k).copy_(
              at::mm(at::mm(p.up.flatten(1), mid.select(3, l).select(2, k)), p.down.flatten(1)));
      merged =
          (target.to(at::kFloat) + strength * (p.alpha / rank) * delta).to(target.scalar_type());
      tensors.push_back({m.name + ".lora_mid.weight", mid});
    } else {
      merged = kiln::testing::mergedByHand(target, p, strength);
    }
    at::Tensor full = w.clone();
    if (m.rows < 0)
      full = merged;
    else
      full.narrow(0, m.row_offset, m.rows).copy_(merged);
    // Two modules on one fused weight build on each other.
    if (expected.count(m.key) && m.rows >= 0) {
      expected[m.key].narrow(0, m.row_offset, m.rows).copy_(merged);
    } else {
      expected[m.key] = full;
    }
    tensors.push_back({m.name + ".lora_down.weight", p.down});
    tensors.push_back({m.name + ".lora_up.weight", p.up});
    tensors.push_back({m.name + ".alpha", at::full({}, p.alpha)});
  }
  kiln::testing::writeTensors(path, tensors, /*half=*/true);
  return expected;
}

}  // namespace

class LoraTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string file(const char* name) const { return dir_.filePath(name).toStdString(); }

 private Q_SLOTS:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void kohyaMergesToTheFormula_data() {
    QTest::addColumn<QString>("family");
    QTest::newRow("sd1") << "sd1";
    QTest::newRow("sdxl") << "sdxl";
  }
  void kohyaMergesToTheFormula() {
    QFETCH(QString, family);
    const auto pipe = load(family.toStdString());
    const auto manual = load(family.toStdString());
    const std::string path = file("kohya.safetensors");
    const auto expected = writeKohya(path, *pipe, modulesFor(family.toStdString()), 0.8);

    lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
    const auto reports = patcher.apply({{path, 0.8, 0.8}});
    QCOMPARE(reports.size(), std::size_t{1});
    QCOMPARE(reports[0].applied, static_cast<int>(modulesFor(family.toStdString()).size()));
    QVERIFY2(reports[0].unmatched.empty(), reports[0].describe().c_str());
    QCOMPARE(reports[0].format, std::string("kohya"));
    for (const auto& [key, w] : expected) {
      const at::Tensor& got = weight(*pipe, key);
      QCOMPARE(got.scalar_type(), w.scalar_type());
      QVERIFY2(maxDiff(got, w) < 1e-5, key.c_str());
      weight(*manual, key) = w;
    }
    const double d = maxDiff(output(*pipe), output(*manual));
    QVERIFY2(d < 1e-4, std::to_string(d).c_str());
    QVERIFY(maxDiff(output(*pipe), output(*load(family.toStdString()))) >
            1e-3);  // the LoRA did something
  }

  // PEFT, diffusers, LoHa, LoKr and full differences: each against its own formula.
  void everyFormatMerges() {
    const auto pipe = load("sd1");
    const std::string to_q =
        "model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn1.to_q.weight";
    const std::string te_q =
        "cond_stage_model.transformer.text_model.encoder.layers.0.self_attn.q_proj.weight";
    const std::string te_q_bias =
        "cond_stage_model.transformer.text_model.encoder.layers.0.self_attn.q_proj.bias";
    const at::Tensor w = weight(*pipe, to_q).clone(), tw = weight(*pipe, te_q).clone();
    const at::Tensor tb = weight(*pipe, te_q_bias).clone();
    const LowRankPair p = kiln::testing::lowRankFor({32, 32}, 4, 4.0, 11);
    const LowRankPair q = kiln::testing::lowRankFor({32, 32}, 2, 2.0, 12);
    const double s = 0.8;

    // PEFT and the two diffusers spellings have no alpha: the scale is 1.
    const std::vector<std::pair<std::string, NamedTensors>> low_rank_files{
        {"peft",
         {{"unet.down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q.lora_A.weight", p.down},
          {"unet.down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q.lora_B.weight", p.up},
          {"text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_A.weight", q.down},
          {"text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_B.weight", q.up}}},
        {"diffusers",
         {{"unet.down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q.lora.down.weight",
           p.down},
          {"unet.down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q.lora.up.weight", p.up},
          {"text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_linear_layer.down."
           "weight",
           q.down},
          {"text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_linear_layer.up.weight",
           q.up}}},
    };
    for (const auto& [format, tensors] : low_rank_files) {
      const std::string path = file((format + ".safetensors").c_str());
      kiln::testing::writeTensors(path, tensors);
      lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
      const auto r = patcher.apply({{path, s, s}});
      QCOMPARE(r[0].format, format);
      QCOMPARE(r[0].applied, 2);
      LowRankPair p1 = p, q1 = q;
      p1.alpha = 4;  // alpha = rank: scale 1
      q1.alpha = 2;
      QVERIFY2(maxDiff(weight(*pipe, to_q), kiln::testing::mergedByHand(w, p1, s)) < 1e-5,
               format.c_str());
      QVERIFY2(maxDiff(weight(*pipe, te_q), kiln::testing::mergedByHand(tw, q1, s)) < 1e-5,
               format.c_str());
      patcher.restore();
      QVERIFY(weight(*pipe, to_q).equal(w));
    }

    at::manual_seed(21);
    const at::Tensor w1a = at::randn({32, 2}), w1b = at::randn({2, 32}), w2a = at::randn({32, 2}),
                     w2b = at::randn({2, 32});
    const at::Tensor k1 = at::randn({4, 4}), k2a = at::randn({8, 2}), k2b = at::randn({2, 8});
    const at::Tensor diff = at::randn({32, 32}) * 0.1, diff_b = at::randn({32}) * 0.1;
    {
      const std::string path = file("loha.safetensors");
      kiln::testing::writeTensors(
          path, {{"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.hada_w1_a", w1a},
                 {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.hada_w1_b", w1b},
                 {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.hada_w2_a", w2a},
                 {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.hada_w2_b", w2b},
                 {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.alpha",
                  at::full({}, 1.0)}});
      lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
      QCOMPARE(patcher.apply({{path, s, s}})[0].format, std::string("lycoris"));
      const at::Tensor expected = w + s * 0.5 * (at::mm(w1a, w1b) * at::mm(w2a, w2b));
      QVERIFY(maxDiff(weight(*pipe, to_q), expected) < 1e-4);
      patcher.restore();
    }
    {
      const std::string path = file("lokr.safetensors");
      kiln::testing::writeTensors(
          path, {{"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.lokr_w1", k1},
                 {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.lokr_w2_a", k2a},
                 {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.lokr_w2_b", k2b},
                 {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.alpha",
                  at::full({}, 1.0)}});
      lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
      patcher.apply({{path, s, s}});
      // The Kronecker product written out: block (i, j) of the result is w1[i, j] * w2.
      const at::Tensor w2 = at::mm(k2a, k2b);
      const at::Tensor kron = (k1.view({4, 1, 4, 1}) * w2.view({1, 8, 1, 8})).reshape({32, 32});
      QVERIFY(maxDiff(weight(*pipe, to_q), w + s * 0.5 * kron) < 1e-4);
      patcher.restore();
    }
    {
      const std::string path = file("full.safetensors");
      kiln::testing::writeTensors(
          path, {{"lora_te_text_model_encoder_layers_0_self_attn_q_proj.diff", diff},
                 {"lora_te_text_model_encoder_layers_0_self_attn_q_proj.diff_b", diff_b}});
      lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
      const auto r = patcher.apply({{path, 1.0, s}});
      QCOMPARE(r[0].format, std::string("full"));
      QVERIFY(maxDiff(weight(*pipe, te_q), tw + s * diff) < 1e-6);
      QVERIFY(maxDiff(weight(*pipe, te_q_bias), tb + s * diff_b) < 1e-6);
      patcher.restore();
      QVERIFY(weight(*pipe, te_q_bias).equal(tb));
    }
  }

  // Strengths apply per component; strength 0 patches nothing; bf16 weights stay bf16.
  void strengthsAndDtypes() {
    const auto pipe = load("sd1", at::kBFloat16);
    const auto before = snapshot(*pipe);
    const std::string path = file("kohya_bf16.safetensors");
    const auto modules = modulesFor("sd1");
    const auto expected = writeKohya(path, *pipe, modules, 0.5);
    lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
    patcher.apply({{path, 0.5, 0.0}});
    for (const Module& m : modules) {
      const at::Tensor& got = weight(*pipe, m.key);
      QCOMPARE(got.scalar_type(), at::kBFloat16);
      if (m.key.rfind("cond_stage_model.", 0) == 0)
        QVERIFY(got.equal(before.at(m.key)));  // text strength 0
      else
        QVERIFY2(maxDiff(got, expected.at(m.key)) <= 0.02,
                 m.key.c_str());  // one bf16 rounding apart
    }
    patcher.apply({{path, 0.0, 0.0}});
    QCOMPARE(patcher.patchedWeights(), std::size_t{0});
    QVERIFY(sameWeights(*pipe, before));
  }

  // Removing restores the very tensors; changing one file's strength rebuilds only its
  // weights; a hundred cycles leave nothing behind.
  void removingRestoresBitForBit() {
    const auto pipe = load("sd1");
    const auto before = snapshot(*pipe);
    const std::string a = file("a.safetensors"), b = file("b.safetensors");
    const auto modules = modulesFor("sd1");
    writeKohya(a, *pipe, {modules[0], modules[1]}, 1.0, 31);
    writeKohya(b, *pipe, {modules[1], modules[5]}, 1.0, 41);
    const void* original = weight(*pipe, modules[0].key).data_ptr();
    lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
    patcher.apply({{a, 1.0, 1.0}, {b, 1.0, 1.0}});
    QCOMPARE(patcher.lastRebuilt(), int64_t{3});
    QVERIFY(patcher.backupBytes() > 0);
    patcher.apply({{a, 1.0, 1.0}, {b, 0.5, 0.5}});
    QCOMPARE(patcher.lastRebuilt(), int64_t{2});  // b's two weights; a's first one stays
    patcher.apply({{a, 1.0, 1.0}, {b, 0.5, 0.5}});
    QCOMPARE(patcher.lastRebuilt(), int64_t{0});
    for (int i = 0; i < 100; ++i) {
      patcher.apply({{i % 2 ? a : b, 0.7, 0.3}});
      patcher.apply({});
      QCOMPARE(patcher.patchedWeights(), std::size_t{0});
      QCOMPARE(patcher.backupBytes(), int64_t{0});
    }
    QVERIFY(sameWeights(*pipe, before));
    QCOMPARE(weight(*pipe, modules[0].key).data_ptr(), original);
  }

  // Through the cached pipeline on the simulated device: merged weights are what every
  // offload mode moves, whether the LoRA comes before or after the first placement, and
  // unloading returns every byte.
  void mergedLorasHoldInEveryOffloadMode_data() {
    QTest::addColumn<QString>("family");
    QTest::newRow("sd1") << "sd1";
    QTest::newRow("sdxl") << "sdxl";
  }
  void mergedLorasHoldInEveryOffloadMode() {
    QFETCH(QString, family);
    const std::string fam = family.toStdString();
    const std::string path = file(("offload_" + fam + ".safetensors").c_str());
    std::map<std::string, at::Tensor> expected;
    {
      const auto scratch = load(fam);
      expected = writeKohya(path, *scratch, modulesFor(fam), 0.8);
    }
    // Stacked with a file of every other layout (sd1): PEFT, LoHa, LoKr, full difference.
    std::vector<LoraSpec> stack{{path, 0.8, 0.8, {}}};
    if (fam == "sd1") {
      const std::string mixed = file("offload_mixed.safetensors");
      const std::string q = "lora_unet_output_blocks_3_1_transformer_blocks_0_attn1_to_q";
      const std::string conv = "lora_unet_input_blocks_1_0_out_layers_3";
      const std::string ff = "lora_unet_input_blocks_2_1_transformer_blocks_0_attn2_to_v";
      at::manual_seed(77);
      kiln::testing::writeTensors(
          mixed, {{"unet.down_blocks.0.attentions.1.transformer_blocks.0.attn1.to_k.lora_A.weight",
                   at::randn({4, 32})},
                  {"unet.down_blocks.0.attentions.1.transformer_blocks.0.attn1.to_k.lora_B.weight",
                   at::randn({32, 4})},
                  {q + ".hada_w1_a", at::randn({32, 2})},
                  {q + ".hada_w1_b", at::randn({2, 32})},
                  {q + ".hada_w2_a", at::randn({32, 2})},
                  {q + ".hada_w2_b", at::randn({2, 32})},
                  {conv + ".lokr_w1", at::randn({4, 4})},
                  {conv + ".lokr_w2", at::randn({8, 8, 3, 3}) * 0.1},
                  {ff + ".diff", at::randn({32, 32}) * 0.1}});
      stack.push_back({mixed, 0.5, 0.5, {}});
    }
    const auto reference = load(fam);
    lora::LoraPatcher by_hand_checked(
        kiln::pipelines::sdLoraTargets(*reference));  // kohya checked against the formula above
    by_hand_checked.apply(stack, LoraMode::Merge);
    for (const auto& [key, w] : expected)
      if (fam != "sd1") QVERIFY(maxDiff(weight(*reference, key), w) < 1e-5);
    const at::Tensor want = output(*reference);
    const at::Tensor plain = output(*load(fam));

    memory::SimulatedDevice dev(256 * kMiB);
    const std::vector<memory::OffloadMode> modes{
        memory::OffloadMode::None, memory::OffloadMode::Model, memory::OffloadMode::GroupBlock,
        memory::OffloadMode::GroupLeaf, memory::OffloadMode::Balanced};
    for (const LoraMode lora_mode : {LoraMode::Merge, LoraMode::Hook}) {
      pipelines::LoadedModel model(load(fam), dev);
      for (std::size_t i = 0; i < modes.size(); ++i) {
        memory::OffloadSettings s;
        s.mode = modes[i];
        s.streams = i % 2 == 0 && modes[i] != memory::OffloadMode::None &&
                    modes[i] != memory::OffloadMode::Model &&
                    modes[i] != memory::OffloadMode::GroupLeaf;
        s.pin = memory::PinMode::Off;
        // Placed first, then patched: the patch takes the placement down and the next
        // place() moves the merged weights.
        model.place(s, 2 * kMiB);
        const std::string name =
            std::string(memory::offloadModeName(modes[i])) + " " + loraModeName(lora_mode);
        QVERIFY2(maxDiff(output(model.as<pipelines::SdPipeline>(), &dev), plain) < 1e-5,
                 name.c_str());
        QCOMPARE(model.applyLoras(stack, lora_mode, s).size(), stack.size());
        QVERIFY(model.applyLoras(stack, lora_mode, s).empty());  // unchanged: no work
        QCOMPARE(model.loraMode(), lora_mode);
        model.place(s, 2 * kMiB);
        const double d = maxDiff(output(model.as<pipelines::SdPipeline>(), &dev), want);
        QVERIFY2(d < 1e-4, (name + ": " + std::to_string(d)).c_str());
        QVERIFY(
            std::isfinite(output(model.as<pipelines::SdPipeline>(), &dev).sum().item<double>()));
        QVERIFY(model.loraBackupBytes() > 0);
        model.applyLoras({}, lora_mode, s);
        QCOMPARE(model.loraBackupBytes(), int64_t{0});
        QVERIFY(model.as<pipelines::SdPipeline>().unet().params().adapters() == nullptr);
      }
      model.offload();
      QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
    }
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
  }

  // Hook mode leaves the weights alone and computes what merging computes, for every
  // file layout.
  void hookModeComputesWhatMergeComputes_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("layout");
    for (const char* layout : {"kohya", "peft", "loha", "lokr", "full"})
      QTest::newRow(layout) << "sd1" << layout;
    QTest::newRow("sdxl kohya") << "sdxl"
                                << "kohya";
  }
  void hookModeComputesWhatMergeComputes() {
    QFETCH(QString, family);
    QFETCH(QString, layout);
    const auto pipe = load(family.toStdString());
    const auto before = snapshot(*pipe);
    const std::string path = file(("hook_" + layout.toStdString() + ".safetensors").c_str());
    const std::string q = "lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q";
    const std::string te = "lora_te_text_model_encoder_layers_0_self_attn_q_proj";
    const std::string conv = "lora_unet_input_blocks_1_0_in_layers_2";
    at::manual_seed(5);
    if (layout == "kohya") {
      writeKohya(path, *pipe, modulesFor(family.toStdString()), 1.0);
    } else if (layout == "peft") {
      kiln::testing::writeTensors(
          path, {{"unet.down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q.lora_A.weight",
                  at::randn({4, 32})},
                 {"unet.down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q.lora_B.weight",
                  at::randn({32, 4})},
                 {"text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_A.weight",
                  at::randn({4, 32})},
                 {"text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_B.weight",
                  at::randn({32, 4})}});
    } else if (layout == "loha") {
      kiln::testing::writeTensors(path, {{conv + ".hada_w1_a", at::randn({32, 2})},
                                         {conv + ".hada_w1_b", at::randn({2, 32 * 9})},
                                         {conv + ".hada_w2_a", at::randn({32, 2})},
                                         {conv + ".hada_w2_b", at::randn({2, 32 * 9})},
                                         {conv + ".alpha", at::full({}, 1.0)},
                                         {q + ".hada_w1_a", at::randn({32, 2})},
                                         {q + ".hada_w1_b", at::randn({2, 32})},
                                         {q + ".hada_w2_a", at::randn({32, 2})},
                                         {q + ".hada_w2_b", at::randn({2, 32})}});
    } else if (layout == "lokr") {
      kiln::testing::writeTensors(path, {{q + ".lokr_w1", at::randn({4, 4})},
                                         {q + ".lokr_w2_a", at::randn({8, 2})},
                                         {q + ".lokr_w2_b", at::randn({2, 8})},
                                         {q + ".alpha", at::full({}, 1.0)}});
    } else {
      kiln::testing::writeTensors(path, {{te + ".diff", at::randn({32, 32}) * 0.1},
                                         {te + ".diff_b", at::randn({32}) * 0.1},
                                         {conv + ".diff", at::randn({32, 32, 3, 3}) * 0.01}});
    }
    lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
    patcher.apply({{path, 0.8, 0.6}}, LoraMode::Merge);
    const at::Tensor merged = output(*pipe);
    patcher.apply({{path, 0.8, 0.6}}, LoraMode::Hook);
    QCOMPARE(patcher.mode(), LoraMode::Hook);
    QVERIFY(sameWeights(*pipe, before));
    QVERIFY(patcher.hookedLayers() > 0);
    const at::Tensor hooked = output(*pipe);
    const double d = maxDiff(hooked, merged);
    QVERIFY2(d < 1e-4, std::to_string(d).c_str());
    QVERIFY(maxDiff(hooked, output(*load(family.toStdString()))) > 1e-3);
    patcher.apply({{path, 0.0, 0.0}}, LoraMode::Hook);
    QCOMPARE(patcher.hookedLayers(), std::size_t{0});  // strength 0 costs nothing
    patcher.restore();
    QVERIFY(pipe->unet().params().adapters() == nullptr);
    QVERIFY(pipe->textEncoder(0).params().adapters() == nullptr);
  }

  // A keyframed strength changes the denoiser's output exactly at its step.
  void keyframesChangeStrengthAtTheirStep() {
    const std::string path = file("keyframes.safetensors");
    {
      const auto scratch = load("sd1");
      writeKohya(path, *scratch, modulesFor("sd1"), 1.0);
    }
    const memory::CpuDevice cpu;
    pipelines::LoadedModel model(load("sd1"), cpu);
    const pipelines::SdPipeline& pipe = model.as<pipelines::SdPipeline>();
    const auto cond = pipe.encodePrompts("a red circle", "");
    const at::Tensor noise = pipelines::seededNoise(3, {1, 4, 8, 8});
    const auto run = [&](const LoraSpec& spec, LoraMode mode) {
      if (model.applyLoras({spec}, mode).empty())
        throw std::runtime_error("the stack did not change");
      std::vector<at::Tensor> steps;
      model.setLoraProgress(0);
      pipe.sample(
          cond, noise, 10, 5.0, pipelines::SizeConditioning::forImage(64, 64),
          [&](const sampling::StepInfo& s) {
            steps.push_back(s.denoised->clone());
            model.setLoraProgress(static_cast<double>(s.step + 1) / static_cast<double>(s.total));
          });
      return steps;
    };
    LoraSpec constant{path, 1.0, 1.0, {}};
    LoraSpec keyed = parseLoraSpec(path + ":1,40%=0.3");
    QCOMPARE(keyed.keyframes.size(), std::size_t{1});
    std::vector<at::Tensor> a, b;
    (void)run(constant, LoraMode::Auto);
    QCOMPARE(model.loraMode(), LoraMode::Merge);  // auto, no keyframes, on the CPU
    a = run(constant, LoraMode::Hook);
    b = run(keyed, LoraMode::Auto);
    QCOMPARE(model.loraMode(), LoraMode::Hook);  // auto picks hook for keyframes
    QCOMPARE(a.size(), std::size_t{10});
    for (std::size_t i = 0; i < 4; ++i) QVERIFY2(a[i].equal(b[i]), std::to_string(i).c_str());
    QVERIFY(maxDiff(a[4], b[4]) > 1e-3);
  }

  // A hooked LoRA's copies in bf16 live on the simulated device while the model is there:
  // counted in its device bytes and shown in its placement report; taking the model off
  // the device returns the device's allocated bytes to what they were before the render.
  void hookCopiesLeaveTheDeviceWithTheModel() {
    memory::SimulatedDevice dev(256 * kMiB);
    pipelines::LoadedModel model(load("sd1", at::kBFloat16), dev);
    const std::string path = file("hook_offload.safetensors");
    writeKohya(path, model.as<pipelines::SdPipeline>(), modulesFor("sd1"), 1.0);
    memory::OffloadSettings settings;
    settings.mode = memory::OffloadMode::GroupBlock;
    model.applyLoras({{path, 1, 1}}, LoraMode::Hook, settings);
    QCOMPARE(model.loraMode(), LoraMode::Hook);
    const int64_t baseline = dev.memory().allocated_bytes;
    model.place(settings, 0);
    const at::Tensor out =
        output(model.as<pipelines::SdPipeline>(), &dev);  // the hooks run in bf16 on the device
    QCOMPARE(out.scalar_type(), at::kBFloat16);
    const int64_t copies = model.hookCopyBytes();
    QVERIFY2(copies > 0, "no copies in the compute precision were made");
    QVERIFY(model.deviceBytes() >= copies);
    const auto summary = model.placementSummary();
    QVERIFY(std::any_of(summary.begin(), summary.end(), [](const std::string& l) {
      return l.rfind("lora hooks (LoRA, ", 0) == 0;
    }));
    QVERIFY(dev.memory().allocated_bytes > baseline);
    model.offload();
    QCOMPARE(model.hookCopyBytes(), int64_t{0});
    QCOMPARE(dev.memory().allocated_bytes, baseline);
    QCOMPARE(model.deviceBytes(), int64_t{0});
  }

  // bf16 weights streamed from pinned host memory on a copy stream, with a hooked LoRA,
  // draw the picture the same model draws with every weight resident on the device.
  void streamedPinnedHookedBf16DrawsTheResidentPicture() {
    const std::string path = file("bf16_streamed.safetensors");
    writeKohya(path, *load("sd1"), modulesFor("sd1"), 1.0);
    const auto draw = [&](const memory::OffloadSettings& s) {
      memory::SimulatedDevice dev(256 * kMiB);
      pipelines::LoadedModel model(load("sd1", at::kBFloat16), dev);
      model.applyLoras({{path, 1.0, 1.0, {}}}, LoraMode::Hook, s);
      (void)model.place(s, 0);
      const at::Tensor out = output(model.as<pipelines::SdPipeline>(), &dev);
      return std::make_pair(out, dev.memory().pinned_bytes);
    };
    memory::OffloadSettings resident, streamed;
    streamed.mode = memory::OffloadMode::GroupBlock;
    streamed.streams = true;
    streamed.pin = memory::PinMode::On;
    streamed.pin_reserve_bytes = 0;
    const auto [want, no_pins] = draw(resident);
    const auto [got, pinned] = draw(streamed);
    QCOMPARE(want.scalar_type(), at::kBFloat16);
    QCOMPARE(no_pins, int64_t{0});
    QVERIFY(pinned > 0);
    QCOMPARE(maxDiff(got, want), 0.0);
  }

  // A LoRA change in merge mode takes down only the components whose weights it replaces:
  // a UNet-only LoRA leaves the text encoder and the VAE placed; removing it again touches
  // the UNet only; and the merged picture is what a model placed afresh draws.
  void mergeChangeTakesDownOnlyTouchedComponents() {
    memory::SimulatedDevice dev(256 * kMiB);
    pipelines::LoadedModel model(load("sd1"), dev);
    std::vector<Module> unet_only = modulesFor("sd1");
    unet_only.erase(std::remove_if(unet_only.begin(), unet_only.end(),
                                   [](const Module& m) { return m.name.rfind("lora_te", 0) == 0; }),
                    unet_only.end());
    const std::string path = file("unet_only.safetensors");
    writeKohya(path, model.as<pipelines::SdPipeline>(), unet_only, 1.0);
    const memory::OffloadSettings resident;
    QCOMPARE(model.place(resident, 0).size(), std::size_t{3});  // text encoder, UNet, VAE
    const auto placedAgain = [&] {
      std::vector<std::string> names;
      for (const std::string& line : model.place(resident, 0))
        names.push_back(line.substr(7, line.find(' ', 7) - 7));
      return names;
    };
    QVERIFY(placedAgain().empty());
    model.applyLoras({{path, 1.0, 1.0, {}}}, LoraMode::Merge, resident);
    QCOMPARE(placedAgain(), std::vector<std::string>{"unet"});
    const at::Tensor merged = output(model.as<pipelines::SdPipeline>(), &dev);
    model.applyLoras({}, LoraMode::Merge, resident);
    QCOMPARE(placedAgain(), std::vector<std::string>{"unet"});
    pipelines::LoadedModel fresh(load("sd1"), dev);
    fresh.applyLoras({{path, 1.0, 1.0, {}}}, LoraMode::Merge, resident);
    (void)fresh.place(resident, 0);
    QCOMPARE(maxDiff(output(fresh.as<pipelines::SdPipeline>(), &dev), merged), 0.0);
  }

  void autoHooksWhenWeightsAreOffloaded() {
    memory::SimulatedDevice dev(256 * kMiB);
    pipelines::LoadedModel model(load("sd1"), dev);
    const std::vector<LoraSpec> none;
    memory::OffloadSettings resident, streamed;
    streamed.per_component["unet"] = memory::OffloadMode::GroupBlock;
    QCOMPARE(model.resolveLoraMode(none, LoraMode::Auto, resident), LoraMode::Merge);
    QCOMPARE(model.resolveLoraMode(none, LoraMode::Auto, streamed), LoraMode::Hook);
    QCOMPARE(model.resolveLoraMode(none, LoraMode::Merge, streamed), LoraMode::Merge);
    QCOMPARE(model.resolveLoraMode({parseLoraSpec("x:1,50%=0")}, LoraMode::Auto, resident),
             LoraMode::Hook);
  }

  // Each cached model owns its LoRA state: unloading one leaves another's LoRA in place.
  void unloadingOneModelLeavesAnotherAlone() {
    const std::string path = file("two_models.safetensors"), xl = file("two_models_xl.safetensors");
    {
      writeKohya(path, *load("sd1"), modulesFor("sd1"), 1.0);
      writeKohya(xl, *load("sdxl"), modulesFor("sdxl"), 1.0);
    }
    memory::SimulatedDevice dev(256 * kMiB);
    memory::ModelCache cache(dev, memory::CacheBudget{});
    const auto leaseOf = [&](const std::string& family) {
      return cache.acquire(
          family, [&] { return std::make_shared<pipelines::LoadedModel>(load(family), dev); });
    };
    at::Tensor want;
    {
      auto sd1 = leaseOf("sd1");
      auto& model = static_cast<pipelines::LoadedModel&>(sd1.model());
      model.applyLoras({{path, 1.0, 1.0, {}}}, LoraMode::Hook);
      want = output(model.as<pipelines::SdPipeline>());
      auto sdxl = leaseOf("sdxl");
      static_cast<pipelines::LoadedModel&>(sdxl.model())
          .applyLoras({{xl, 1.0, 1.0, {}}}, LoraMode::Merge);
    }
    QVERIFY(cache.unload("sdxl"));
    auto sd1 = leaseOf("sd1");
    QCOMPARE(cache.entries().size(), std::size_t{1});
    QCOMPARE(cache.counters().loads, int64_t{2});
    QVERIFY(output(static_cast<pipelines::LoadedModel&>(sd1.model()).as<pipelines::SdPipeline>())
                .equal(want));
  }

  void badFilesChangeNothing() {
    const auto pipe = load("sd1");
    const auto before = snapshot(*pipe);
    lora::LoraPatcher patcher(kiln::pipelines::sdLoraTargets(*pipe));
    const std::string good = file("good.safetensors");
    writeKohya(good, *pipe, {modulesFor("sd1")[0]}, 1.0);
    const auto expectError = [&](const std::vector<LoraSpec>& stack, ErrorKind kind,
                                 const std::string& says) {
      try {
        patcher.apply(stack);
        QFAIL("no error");
      } catch (const Error& e) {
        QVERIFY2(e.kind() == kind, e.what());
        QVERIFY2(std::string(e.what()).find(says) != std::string::npos, e.what());
      }
      QVERIFY(sameWeights(*pipe, before));
      QCOMPARE(patcher.patchedWeights(), std::size_t{0});
    };

    const std::string shapes = file("shapes.safetensors");
    kiln::testing::writeTensors(
        shapes, {{"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.lora_down.weight",
                  at::randn({4, 48})},
                 {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.lora_up.weight",
                  at::randn({32, 4})}});
    expectError({{good, 1, 1}, {shapes, 1, 1}}, ErrorKind::ShapeMismatch,
                "[32, 48] for a weight of shape [32, 32]");

    // A LoKr factor with no dimensions is refused when the file is read (it crashed the
    // process once), naming the tensor.
    const std::string scalar = file("lokr-scalar.safetensors");
    const std::string q = "lycoris_input_blocks_1_1_transformer_blocks_0_attn1_to_q";
    kiln::testing::writeTensors(scalar, {{q + ".lokr_w1", at::randn({4, 4})},
                                         {q + ".lokr_w2_a", at::randn({8, 2})},
                                         {q + ".lokr_w2_b", at::scalar_tensor(1.0)}});
    expectError({{scalar, 1, 1}}, ErrorKind::CorruptFile, q + ".lokr_w2_b' has 0 dimensions");
    // A file of well under a megabyte whose change would be 40000 x 40000 floats (6.4 GB)
    // is refused from the factors' shapes, before anything that size is made.
    const std::string huge = file("huge.safetensors");
    kiln::testing::writeTensors(
        huge, {{"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.lora_down.weight",
                at::randn({1, 40000})},
               {"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.lora_up.weight",
                at::randn({40000, 1})}});
    QVERIFY(std::filesystem::file_size(huge) < 400000);
    const int64_t rss_before = peakRssBytes();
    expectError({{huge, 1, 1}}, ErrorKind::ShapeMismatch,
                "[40000, 40000] for a weight of shape [32, 32]");
    for (const LoraMode mode : {LoraMode::Merge, LoraMode::Hook}) {
      try {
        patcher.apply({{huge, 1, 1}}, mode);
        QFAIL("no error");
      } catch (const Error& e) {
        QVERIFY2(e.kind() == ErrorKind::ShapeMismatch, e.what());
      }
    }
    QVERIFY2(peakRssBytes() - rss_before < (int64_t{1} << 30), "the refused change was built");

    const std::string nan = file("nan.safetensors");
    kiln::testing::writeTensors(
        nan, {{"lora_te_text_model_encoder_layers_0_self_attn_q_proj.lora_down.weight",
               at::full({4, 32}, std::nan(""))},
              {"lora_te_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight",
               at::randn({32, 4})}});
    expectError({{nan, 1, 1}}, ErrorKind::CorruptFile, "NaN");

    const std::string truncated = file("truncated.safetensors");
    std::filesystem::copy_file(good, truncated, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(truncated, std::filesystem::file_size(good) - 100);
    expectError({{truncated, 1, 1}}, ErrorKind::CorruptFile, "truncated.safetensors");

    const std::string other = file("flux.safetensors");
    kiln::testing::writeTensors(
        other, {{"lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight", at::randn({4, 32})},
                {"lora_unet_double_blocks_0_img_attn_qkv.lora_up.weight", at::randn({96, 4})}});
    expectError({{other, 1, 1}}, ErrorKind::UnsupportedModel,
                "lora_unet_double_blocks_0_img_attn_qkv");

    const std::string half = file("half.safetensors");
    kiln::testing::writeTensors(
        half, {{"lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.lora_down.weight",
                at::randn({4, 32})}});
    expectError({{half, 1, 1}}, ErrorKind::CorruptFile, "'up'");

    const std::string none = file("none.safetensors");
    kiln::testing::writeTensors(none, {{"model.diffusion_model.out.2.weight", at::randn({4, 4})}});
    expectError({{none, 1, 1}}, ErrorKind::UnsupportedModel, "no tensor in a LoRA layout");
    expectError({{file("missing.safetensors"), 1, 1}}, ErrorKind::FileNotFound,
                "missing.safetensors");
    expectError({{good, std::nan(""), 1}}, ErrorKind::InvalidArgument, "finite");

    // A stack that was applied stays applied when the next one fails.
    patcher.apply({{good, 1, 1}});
    const auto applied = snapshot(*pipe);
    QVERIFY_THROWS_EXCEPTION(Error, patcher.apply({{shapes, 1, 1}}));
    QVERIFY(sameWeights(*pipe, applied));
  }

  void specsParse() {
    QCOMPARE(parseLoraSpec("style.safetensors").unet_strength, 1.0);
    const LoraSpec a = parseLoraSpec("/loras/a:b.safetensors:0.7");
    QCOMPARE(a.path, std::string("/loras/a:b.safetensors"));
    QCOMPARE(a.unet_strength, 0.7);
    QCOMPARE(a.text_strength, 0.7);
    const LoraSpec b = parseLoraSpec("x.safetensors:1.5:-0.25");
    QCOMPARE(b.unet_strength, 1.5);
    QCOMPARE(b.text_strength, -0.25);
    QVERIFY_THROWS_EXCEPTION(Error, parseLoraSpec(":0.5"));
    QVERIFY_THROWS_EXCEPTION(Error, parseLoraSpec("x.safetensors:inf"));
    // A schedule alone (a workflow's LoadLoRA holds it) reads back what it was written from.
    const LoraSpec keyed = parseLoraSpec("x.safetensors:1,12.5%=0.3,70%=-0.1");
    QCOMPARE(keyed.keyframes.size(), std::size_t{2});
    QCOMPARE(formatLoraKeyframes(keyed.keyframes), std::string("12.5%=0.3,70%=-0.1"));
    QCOMPARE(parseLoraKeyframes(formatLoraKeyframes(keyed.keyframes)), keyed.keyframes);
    QVERIFY(parseLoraKeyframes("").empty());
    QVERIFY_THROWS_EXCEPTION(Error, parseLoraKeyframes("70%=1,40%=0"));  // out of order
    QVERIFY_THROWS_EXCEPTION(Error, parseLoraKeyframes("0.5"));          // not a keyframe
    QVERIFY_THROWS_EXCEPTION(Error, parseLoraKeyframes("150%=1"));
  }
};

QTEST_GUILESS_MAIN(LoraTest)
#include "test_lora.moc"
