// kiln::render on checkpoints the test writes from the conformance file: damaged weights
// must give typed errors that name the stage or tensor; progress must tell the truth.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "checkpoint_variants.h"
#include "core/cpu_features.h"
#include "kiln/build_info.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "lora_files.h"
#include "models/sd/sd_checkpoint.h"
#include "ref_tensors.h"
#include "tensor_io/materialize.h"

namespace {

using kiln::tensor_io::TensorToWrite;
using kiln::testing::indexOf;
using kiln::testing::poison;
using kiln::testing::writeVariant;

kiln::RenderParams params(const QString& model) {
  kiln::RenderParams p;
  p.model.path = model.toStdString();
  p.prompt.text = "a red circle";
  p.sampling.steps = 2;
  p.size.width = 64;
  p.size.height = 64;
  p.model.threads = 2;
  return p;
}

}  // namespace

class TestRender : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private Q_SLOTS:
  // Width and height 0 render at the size the file's modelspec.resolution names; a
  // malformed value is noted and the family's size used instead.
  void nativeSizeComesFromModelspecMetadata() {
    const QString good = dir_.filePath("native.safetensors");
    writeVariant(good, [](auto&, auto&) {}, {{"modelspec.resolution", "48x32"}});
    kiln::RenderParams p = params(good);
    p.size.width = p.size.height = 0;
    const kiln::RenderResult r = kiln::render(p);
    QCOMPARE(r.image.width, 48);
    QCOMPARE(r.image.height, 32);

    const QString bad = dir_.filePath("malformed.safetensors");
    writeVariant(bad, [](auto&, auto&) {}, {{"modelspec.resolution", "48x32 pixels"}});
    const kiln::models::Checkpoint ck = kiln::models::openCheckpoint(bad.toStdString());
    QCOMPARE(ck.spec.native_width, 512);
    QCOMPARE(ck.spec.native_height, 512);
    bool noted = false;
    for (const auto& n : ck.notes)
      noted = noted || n.find("ignored malformed") != std::string::npos;
    QVERIFY(noted);

    p.size.width = 64;  // one side alone is not "native"
    QVERIFY_THROWS_EXCEPTION(kiln::Error, kiln::render(p));
  }

  void damagedCheckpointsGiveTypedErrors_data() {
    QTest::addColumn<QString>("damage");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("message");
    QTest::newRow("nan in unet") << "unet" << int(kiln::ErrorKind::NonFinite)
                                 << "denoising step 1/2";
    QTest::newRow("nan in text encoder")
        << "text" << int(kiln::ErrorKind::NonFinite) << "encoding the prompt";
    QTest::newRow("nan in vae") << "vae" << int(kiln::ErrorKind::NonFinite) << "VAE decode";
    QTest::newRow("missing tensor") << "missing" << int(kiln::ErrorKind::ShapeMismatch)
                                    << "missing tensor 'model.diffusion_model.out.0.bias' [32]";
    QTest::newRow("wrong shape")
        << "shape" << int(kiln::ErrorKind::ShapeMismatch)
        << "'model.diffusion_model.out.0.weight' has shape [16], expected [32]";
    QTest::newRow("unused tensor") << "extra" << int(kiln::ErrorKind::ShapeMismatch)
                                   << "unused tensor 'model.diffusion_model.extra.weight'";
  }
  void damagedCheckpointsGiveTypedErrors() {
    QFETCH(QString, damage);
    QFETCH(int, kind);
    QFETCH(QString, message);
    const QString path = dir_.filePath(damage + ".safetensors");
    static std::vector<uint8_t> extra(8, 0);
    writeVariant(path, [&](std::vector<TensorToWrite>& t, std::vector<std::vector<uint8_t>>& s) {
      if (damage == "unet") poison(t, s, "model.diffusion_model.out.2.bias");
      if (damage == "text")
        poison(t, s, "cond_stage_model.transformer.text_model.final_layer_norm.bias");
      if (damage == "vae") poison(t, s, "first_stage_model.decoder.conv_out.bias");
      if (damage == "missing") {
        const std::size_t i = indexOf(t, "model.diffusion_model.out.0.bias");
        t.erase(t.begin() + static_cast<std::ptrdiff_t>(i));
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if (damage == "shape") {
        const std::size_t i = indexOf(t, "model.diffusion_model.out.0.weight");
        t[i].shape = {16};
        s[i].resize(32);
      }
      if (damage == "extra") {
        t.push_back({"model.diffusion_model.extra.weight", kiln::tensor_io::DType::F16, {4}, {}});
        s.push_back(extra);
      }
    });
    try {
      kiln::render(params(path));
      QFAIL("render succeeded on a damaged checkpoint");
    } catch (const kiln::Error& e) {
      QCOMPARE(int(e.kind()), kind);
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  // Configuration numbers that would divide by zero (a head count of 0 in a sidecar, an
  // ldm_config.json or a diffusers config.json) or have the wrong type are refused with
  // the file and the field named, for the single file, the diffusers folder and Wan.
  void badConfigurationNumbersAreRefused_data() {
    QTest::addColumn<QString>("layout");  // "sidecar", "ldm", "diffusers", "wan"
    QTest::addColumn<QString>("file");    // the configuration file, relative to the model
    QTest::addColumn<QString>("content");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("says");
    QTest::newRow("sidecar text heads 0")
        << "sidecar"
        << "model.json"
        << R"({"cond_stage_config": {"heads": 0}})" << int(kiln::ErrorKind::UnsupportedModel)
        << "the text encoder's head count is 0";
    QTest::newRow("sidecar text heads -3")
        << "sidecar"
        << "model.json"
        << R"({"cond_stage_config": {"num_attention_heads": -3}})"
        << int(kiln::ErrorKind::UnsupportedModel) << "the text encoder's head count is -3";
    QTest::newRow("ldm_config heads of the wrong type")
        << "ldm"
        << "ldm_config.json"
        << R"({"family": "sd1", "unet_config": {"num_heads": "eight"}})"
        << int(kiln::ErrorKind::CorruptFile) << "wrong type";
    QTest::newRow("ldm_config zero timesteps")
        << "ldm"
        << "ldm_config.json"
        << R"({"family": "sd1", "timesteps": 0})" << int(kiln::ErrorKind::UnsupportedModel)
        << "the schedule's training steps is 0";
    QTest::newRow("diffusers unet heads 0")
        << "diffusers"
        << "unet/config.json"
        << "HEADS0" << int(kiln::ErrorKind::UnsupportedModel) << "neither a head count";
    QTest::newRow("diffusers text heads 0")
        << "diffusers"
        << "text_encoder/config.json"
        << "TEXTHEADS0" << int(kiln::ErrorKind::UnsupportedModel)
        << "the text encoder's head count is 0";
    QTest::newRow("wan heads 0") << "wan"
                                 << "transformer/config.json"
                                 << "WANHEADS0" << int(kiln::ErrorKind::UnsupportedModel)
                                 << "num_attention_heads is 0";
  }
  void badConfigurationNumbersAreRefused() {
    QFETCH(QString, layout);
    QFETCH(QString, file);
    QFETCH(QString, content);
    QFETCH(int, kind);
    QFETCH(QString, says);
    namespace fs = std::filesystem;
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const fs::path conf = kiln::testing::conformancePath("sd-tiny-1234/sd1");
    fs::path model;
    if (layout == "sidecar" || layout == "ldm") {
      model = root / "model.safetensors";
      fs::copy_file(conf / "sd1_tiny_ldm.safetensors", model);
    } else {
      const fs::path from =
          layout == "wan" ? fs::path(kiln::testing::conformancePath("wan21-tiny-1234")) : conf;
      model = root / "folder";
      fs::copy(from, model, fs::copy_options::recursive);
    }
    const fs::path config =
        (layout == "sidecar" || layout == "ldm" ? root : model) / file.toStdString();
    std::string text = content.toStdString();
    if (text == "HEADS0" || text == "TEXTHEADS0" || text == "WANHEADS0") {
      QFile original(QString::fromStdString(config.string()));
      QVERIFY(original.open(QIODevice::ReadOnly));
      QJsonObject json = QJsonDocument::fromJson(original.readAll()).object();
      original.close();
      if (text == "HEADS0") json["attention_head_dim"] = 0;
      if (text == "TEXTHEADS0" || text == "WANHEADS0") json["num_attention_heads"] = 0;
      text = QJsonDocument(json).toJson().toStdString();
      fs::remove(config);
    }
    {
      std::ofstream out(config);
      out << text;
    }
    kiln::RenderParams p = params(QString::fromStdString(model.string()));
    try {
      if (layout == "wan") p.video.frames = 1;
      kiln::render(p);
      QFAIL("a model with a bad configuration rendered");
    } catch (const kiln::Error& e) {
      QVERIFY2(int(e.kind()) == kind, e.what());
      QVERIFY2(QString(e.what()).contains(says), e.what());
      QVERIFY2(QString(e.what()).contains(QString::fromStdString(config.filename().string())) ||
                   QString(e.what()).contains(QString::fromStdString(model.string())),
               e.what());
    }
  }

  // A key with a block index no number type holds (or none where the layout has one) is
  // a damaged file, said with the tensor's name, not an internal error.
  void badBlockIndicesAreCorruptFiles() {
    namespace fs = std::filesystem;
    QTemporaryDir dir;
    const fs::path folder = fs::path(dir.path().toStdString()) / "folder";
    fs::copy(kiln::testing::conformancePath("sd-tiny-1234/sd1"), folder,
             fs::copy_options::recursive);
    const fs::path unet = folder / "unet" / "diffusion_pytorch_model.safetensors";
    kiln::testing::NamedTensors tensors;
    {
      const auto file = kiln::tensor_io::SafetensorsFile::open(unet.string());
      for (const auto& info : file->tensors())
        tensors.push_back(
            {info.name, kiln::tensor_io::viewStored({file, &info}).to(at::kFloat).clone()});
    }
    const std::string bad = "down_blocks.0.resnets.99999999999999999999.norm1.weight";
    tensors.push_back({bad, at::zeros({4})});
    fs::remove(unet);
    kiln::testing::writeTensors(unet.string(), tensors);
    try {
      (void)kiln::models::openCheckpoint(folder.string());
      QFAIL("a key with a broken block index was accepted");
    } catch (const kiln::Error& e) {
      QVERIFY2(e.kind() == kiln::ErrorKind::CorruptFile, e.what());
      QVERIFY2(QString(e.what()).contains(QString::fromStdString(bad)), e.what());
    }
  }

  // Sizes read from tensor shapes: an empty or missing dimension is the file's fault, named
  // (it divided by zero, or indexed past the shape, while the configuration was detected).
  void emptyDimensionsNameTheTensor_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QList<qint64>>("shape");
    QTest::newRow("conv_in with no output channels")
        << "model.diffusion_model.input_blocks.0.0.weight" << QList<qint64>{0, 4, 3, 3};
    QTest::newRow("conv_in flat") << "model.diffusion_model.input_blocks.0.0.weight"
                                  << QList<qint64>{4};
    QTest::newRow("cross-attention with no context width")
        << "model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight"
        << QList<qint64>{32, 0};
  }

  void emptyDimensionsNameTheTensor() {
    QFETCH(QString, name);
    QFETCH(QList<qint64>, shape);
    QTemporaryDir dir;
    const std::string source =
        kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
    kiln::testing::NamedTensors tensors;
    bool replaced = false;
    {
      const auto file = kiln::tensor_io::SafetensorsFile::open(source);
      for (const auto& info : file->tensors()) {
        if (info.name == name.toStdString()) {
          tensors.push_back(
              {info.name, at::zeros(std::vector<int64_t>(shape.begin(), shape.end()))});
          replaced = true;
        } else {
          tensors.push_back(
              {info.name, kiln::tensor_io::viewStored({file, &info}).to(at::kFloat).clone()});
        }
      }
    }
    QVERIFY2(replaced, qPrintable(name));
    const std::string path = dir.filePath("damaged.safetensors").toStdString();
    kiln::testing::writeTensors(path, tensors);
    try {
      (void)kiln::models::openCheckpoint(path);
      QFAIL("a checkpoint with an empty dimension was accepted");
    } catch (const kiln::Error& e) {
      QVERIFY2(e.kind() == kiln::ErrorKind::ShapeMismatch, e.what());
      QVERIFY2(QString(e.what()).contains(name), e.what());
    }
  }

  void progressReportsStagesInOrder() {
    std::vector<std::string> stages;
    std::vector<int64_t> steps_done;
    const auto result = kiln::render(params(QString::fromStdString(kiln::testing::conformancePath(
                                         "sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors"))),
                                     [&](const kiln::RenderProgress& p) {
                                       if (stages.empty() || stages.back() != p.stage)
                                         stages.push_back(p.stage);
                                       if (p.stage == "Denoising") steps_done.push_back(p.done);
                                       QVERIFY(p.done <= p.total);
                                     });
    QCOMPARE(stages, (std::vector<std::string>{"Loading model", "Encoding prompt", "Denoising",
                                               "Decoding"}));
    QCOMPARE(steps_done, (std::vector<int64_t>{0, 1, 2}));
    QCOMPARE(result.image.width, 64);
    QCOMPARE(result.model_family, std::string("sd1"));
  }

  void bf16ComputeStaysCloseToFp32() {
    auto p = params(QString::fromStdString(
        kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors")));
    p.model.dtype = kiln::ComputeDType::Float32;
    const auto a = kiln::render(p);
    p.model.dtype = kiln::ComputeDType::BFloat16;
    const auto b = kiln::render(p);
    QCOMPARE(a.image.pixels.size(), b.image.pixels.size());
    // Auto, the default, is the CPU's fast precision: the same pixels as asking for it.
    QCOMPARE(int(kiln::RenderParams{}.model.dtype), int(kiln::ComputeDType::Auto));
    p.model.dtype = kiln::ComputeDType::Auto;
    QVERIFY(kiln::render(p).image.pixels ==
            (kiln::fastCpuDType() == kiln::ComputeDType::BFloat16 ? b : a).image.pixels);
    double mean_err = 0;
    for (std::size_t i = 0; i < a.image.pixels.size(); ++i)
      mean_err += std::abs(a.image.pixels[i] - b.image.pixels[i]);
    mean_err /= static_cast<double>(a.image.pixels.size());
    // Random tiny weights amplify rounding; bf16 must still track fp32 on average.
    QVERIFY2(mean_err < 0.05, qPrintable(QString::number(mean_err)));
    QVERIFY(a.image.pixels != b.image.pixels);  // it really ran in another precision
    // fp16 is for GPUs: on the CPU it is refused before anything loads, saying why.
    p.model.dtype = kiln::ComputeDType::Float16;
    try {
      (void)kiln::render(p);
      QFAIL("rendered in fp16 on the CPU");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::InvalidArgument);
      QVERIFY2(std::string(e.what()).find("fp16 compute needs a GPU") != std::string::npos,
               e.what());
    }
  }
  // bf16 is the fast precision only where /proc/cpuinfo names bf16 instructions.
  void fastCpuPrecisionFollowsTheBf16Instructions() {
    using kiln::core::cpuinfoHasNativeBf16;
    const std::string epyc =
        "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
        "flags\t\t: fpu sse sse2 avx avx2 fma f16c bmi2\nbugs\t\t: sysret_ss_attrs\n";
    const std::string xeon = "processor\t: 0\nflags\t\t: avx2 avx512f avx512_bf16 amx_tile\n";
    const std::string amx = "flags\t\t: avx512f amx_bf16 amx_int8\n";
    const std::string arm = "processor\t: 0\nFeatures\t: fp asimd sve i8mm bf16\n";
    QVERIFY(!cpuinfoHasNativeBf16(epyc));
    QVERIFY(cpuinfoHasNativeBf16(xeon));
    QVERIFY(cpuinfoHasNativeBf16(amx));
    QVERIFY(cpuinfoHasNativeBf16(arm));
    QVERIFY(
        !cpuinfoHasNativeBf16("model name\t: bf16 avx512_bf16 in a name\n"));  // not a flags line
    QVERIFY(!cpuinfoHasNativeBf16("flags\t\t: avx512_bf16x avx512bf16\n"));    // whole words only
    QVERIFY(!cpuinfoHasNativeBf16("flags : bf16\n"));  // Arm's word on an x86 flags line
    QVERIFY(!cpuinfoHasNativeBf16(""));
    const bool native = kiln::core::cpuHasNativeBf16();
    QCOMPARE(kiln::fastCpuDType(),
             native ? kiln::ComputeDType::BFloat16 : kiln::ComputeDType::Float32);
    QCOMPARE(kiln::buildInfo().cpu_bf16, native);
    QVERIFY(kiln::versionText("kiln-cli")
                .find(native ? "CPU: bf16 instructions" : "CPU: no bf16 instructions") !=
            std::string::npos);
  }
  // Image-to-image runs the last floor(steps * denoise) steps and stays nearer the
  // picture than a full render; inpainting keeps every unmasked pixel exactly.
  void imageToImageAndInpainting() {
    auto p = params(QString::fromStdString(
        kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors")));
    p.sampling.steps = 4;
    const kiln::Image picture = kiln::render(p).image;
    p.sampling.seed = 5;
    const kiln::Image fresh = kiln::render(p).image;
    p.init.image = picture;
    p.init.denoise = 0.5;
    int64_t steps_total = 0;
    std::vector<std::string> stages;
    const kiln::RenderResult i2i = kiln::render(p, [&](const kiln::RenderProgress& r) {
      if (stages.empty() || stages.back() != r.stage) stages.push_back(r.stage);
      if (r.stage == "Denoising") steps_total = r.total;
    });
    QCOMPARE(steps_total, int64_t{2});
    QVERIFY(std::find(stages.begin(), stages.end(), "Encoding image") != stages.end());
    const auto distance = [](const kiln::Image& a, const kiln::Image& b) {
      double d = 0;
      for (std::size_t i = 0; i < a.pixels.size(); ++i) d += std::abs(a.pixels[i] - b.pixels[i]);
      return d / static_cast<double>(a.pixels.size());
    };
    QVERIFY2(
        distance(i2i.image, picture) < distance(fresh, picture),
        qPrintable(
            QString("%1 vs %2").arg(distance(i2i.image, picture)).arg(distance(fresh, picture))));
    QVERIFY(i2i.image.text.at("parameters").find("Denoising strength: 0.5") != std::string::npos);

    // Inpaint the left half.
    kiln::Image mask;
    mask.width = picture.width;
    mask.height = picture.height;
    mask.channels = 1;
    mask.pixels.assign(static_cast<std::size_t>(mask.width * mask.height), 0.0f);
    for (int y = 0; y < mask.height; ++y)
      for (int x = 0; x < mask.width / 2; ++x)
        mask.pixels[static_cast<std::size_t>(y * mask.width + x)] = 1.0f;
    p.init.mask = mask;
    p.init.denoise = 1.0;
    const kiln::Image inpainted = kiln::render(p).image;
    double kept = 0, changed = 0;
    for (int y = 0; y < mask.height; ++y)
      for (int x = 0; x < mask.width; ++x)
        for (int c = 0; c < 3; ++c) {
          const auto i = static_cast<std::size_t>((y * mask.width + x) * 3 + c);
          const double d = std::abs(inpainted.pixels[i] - picture.pixels[i]);
          double& worst = x < mask.width / 2 ? changed : kept;
          worst = std::max(worst, d);
        }
    QVERIFY2(kept < 1e-6, qPrintable(QString::number(kept)));
    QVERIFY2(changed > 0.05, qPrintable(QString::number(changed)));
  }

  void badImagesAreRefused() {
    auto p = params(QString::fromStdString(
        kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors")));
    const auto refused = [&](const kiln::RenderParams& q, const char* needle) {
      try {
        kiln::render(q);
      } catch (const kiln::Error& e) {
        return e.kind() == kiln::ErrorKind::InvalidArgument &&
               std::string(e.what()).find(needle) != std::string::npos;
      }
      return false;
    };
    kiln::Image empty;
    empty.channels = 3;
    p.init.image = empty;
    QVERIFY(refused(p, "the init image is empty"));
    kiln::Image picture;
    picture.width = 32;
    picture.height = 16;
    picture.channels = 3;
    picture.pixels.assign(32 * 16 * 3, 0.5f);
    kiln::Image mask = picture;
    mask.width = 16;
    mask.height = 32;
    p.init.image = picture;
    p.init.mask = mask;
    QVERIFY(refused(p, "the mask is 16x32 pixels but the init image is 32x16"));
    p.init.mask = kiln::Image();
    p.init.denoise = 0;
    QVERIFY(refused(p, "denoise"));
    p.init.denoise = 0.1;  // 2 steps x 0.1 runs none
    QVERIFY(refused(p, "runs no step"));
    p.init.image = kiln::Image();
    p.init.mask = picture;
    p.init.denoise = 1;
    QVERIFY(refused(p, "a mask needs an init image"));
    p.init.mask = kiln::Image();
    p.tiling.mode = kiln::VaeTiling::Always;
    p.tiling.size = 128;
    p.tiling.overlap = 100;
    QVERIFY(refused(p, "overlap"));
  }
};

QTEST_APPLESS_MAIN(TestRender)
#include "test_render.moc"
