// kiln-cli render end to end: conformance renders through the real executable, the PNG
// metadata read back, and every kind of bad input answered with one line and no file.
#include <algorithm>

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>

#include "flux_tiny.h"
#include "kiln/image_io.h"
#include "kiln/video_io.h"
#include "lora_files.h"
#include "ref_tensors.h"
#include "wan_tiny.h"

namespace {

struct CliRun {
  int exit_code = -1;
  QString err;
  QString out;
};

CliRun runCli(const QStringList& args,
              const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(KILN_CLI_PATH, args);
  if (!p.waitForFinished(300000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardError()),
          QString::fromUtf8(p.readAllStandardOutput())};
}

QString conf(const QString& rel) {
  return QString(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/" + rel;
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private Q_SLOTS:
  void version() {
    const CliRun r = runCli({"--version"});
    QCOMPARE(r.exit_code, 0);
  }

  // The conformance prompt, seed, steps, CFG and size reproduce the reference image to
  // within one 8-bit level per pixel, and the PNG carries A1111 parameters.
  void rendersConformanceImage_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("prompt");
    QTest::addColumn<QString>("negative");
    QTest::addColumn<QStringList>("extra");
    QTest::newRow("sd1") << "sd1"
                         << "A photo of an astronaut riding a horse on Mars, 4k, highly detailed!"
                         << "" << QStringList{};
    QTest::newRow("sdxl")
        << "sdxl"
        << "a cat's portrait in watercolor, by Claude Monet \\(1890\\)"  // literal brackets
        << "blurry, low quality" << QStringList{"--original-size", "100x120", "--crop", "4,8"};
  }
  void rendersConformanceImage() {
    QFETCH(QString, family);
    QFETCH(QString, prompt);
    QFETCH(QString, negative);
    QFETCH(QStringList, extra);
    const QString out = dir_.filePath(family + ".png");
    const CliRun r = runCli(
        QStringList{"render",    "--model", conf(family + "/" + family + "_tiny_ldm.safetensors"),
                    "--prompt",  prompt,    "--negative",
                    negative,    "--seed",  "1234",
                    "--steps",   "6",       "--cfg",
                    "7",         "--width", "96",
                    "--height",  "128",     "--out",
                    out,         "--quiet", "--scheduler",
                    "diffusers",            // the reference's schedule
                    "--dtype",   "fp32"} +  // the reference's precision
        extra);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const kiln::Image img = kiln::readImage(out.toStdString());
    QCOMPARE(img.width, 96);
    QCOMPARE(img.height, 128);
    QCOMPARE(img.channels, 3);
    const QString params = QString::fromStdString(img.text.at("parameters"));
    QVERIFY2(params.startsWith(prompt + "\nNegative prompt: " + negative +
                               "\nSteps: 6, Sampler: Euler, CFG scale: 7, "
                               "Seed: 1234, Size: 96x128, Model: " +
                               family + "_tiny_ldm"),
             qPrintable(params));

    const kiln::testing::RefFile ref(
        ("sd-tiny-1234/" + family + "/ref_sample.safetensors").toStdString());
    const at::Tensor want =
        ((ref["decoded_image"][0] / 2 + 0.5).clamp(0, 1) * 255).permute({1, 2, 0});
    const at::Tensor got =
        at::from_blob(const_cast<float*>(img.pixels.data()), {128, 96, 3}, at::kFloat).clone() *
        255;
    const double max_levels = (got - want).abs().max().item<double>();
    QVERIFY2(max_levels <= 1.0, qPrintable(QString("max difference %1 levels").arg(max_levels)));
  }

  void rejectsBadInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exit_code");
    QTest::addColumn<QString>("message");
    const QString sd1 = conf("sd1/sd1_tiny_ldm.safetensors");
    const QStringList base{"render",  "--prompt", "x",        "--steps", "1",
                           "--width", "64",       "--height", "64"};
    QTest::newRow("empty model") << (base + QStringList{"--model", "", "--out", "o.png"}) << 2
                                 << "--model needs a path";
    QTest::newRow("width alone") << QStringList{"render", "--model", sd1,    "--width",
                                                "64",     "--out",   "o.png"}
                                 << 2 << "give both --width and --height";
    QTest::newRow("missing model")
        << (base + QStringList{"--model", "/nonexistent.safetensors", "--out", "o.png"}) << 1
        << "does not exist";
    QTest::newRow("pickle") << (base + QStringList{"--model", "MODEL.ckpt", "--out", "o.png"}) << 1
                            << "pickle";
    QTest::newRow("corrupt") << (base + QStringList{"--model", "CORRUPT", "--out", "o.png"}) << 1
                             << "not a valid safetensors file";
    QTest::newRow("not a model") << (base + QStringList{"--model", "OTHER", "--out", "o.png"}) << 1
                                 << "not a checkpoint Kiln recognises";
    QTest::newRow("bad steps") << QStringList{"render",  "--model", sd1,     "--prompt", "x",
                                              "--steps", "abc",     "--out", "o.png"}
                               << 2 << "--steps needs a whole number";
    QTest::newRow("zero steps") << QStringList{"render",  "--model", sd1,     "--prompt", "x",
                                               "--steps", "0",       "--out", "o.png"}
                                << 1 << "steps must be between";
    QTest::newRow("tiny size") << QStringList{"render", "--model", sd1,    "--prompt",
                                              "x",      "--width", "4",    "--height",
                                              "4",      "--out",   "o.png"}
                               << 1 << "width and height";
    QTest::newRow("bad dtype") << (base +
                                   QStringList{"--model", sd1, "--dtype", "fp8", "--out", "o.png"})
                               << 2 << "--dtype";
    QTest::newRow("unknown option")
        << (base + QStringList{"--model", sd1, "--frobnicate", "--out", "o.png"}) << 2
        << "frobnicate";
    QTest::newRow("unknown device")
        << (base + QStringList{"--model", sd1, "--device", "tpu:0", "--out", "o.png"}) << 1
        << "unknown device 'tpu:0'";
    QTest::newRow("bad budget") << (base + QStringList{"--model", sd1, "--device-budget", "lots",
                                                       "--out", "o.png"})
                                << 2 << "--device-budget needs a size";
    QTest::newRow("device too small")
        << (base + QStringList{"--model", sd1, "--device", "sim:1M", "--out", "o.png"}) << 1
        << "out of memory: not enough memory on sim:1.00 MiB";
    QTest::newRow("bad offload mode")
        << (base + QStringList{"--model", sd1, "--offload", "sideways", "--out", "o.png"}) << 2
        << "--offload must be none, model, group-block, group-leaf or balanced";
    QTest::newRow("record-stream alone")
        << (base + QStringList{"--model", sd1, "--record-stream", "--out", "o.png"}) << 2
        << "record-stream needs streams";
    QTest::newRow("bad extension")
        << (base + QStringList{"--model", sd1, "--out", "o.notanimage"}) << 1 << "no image format";
    QTest::newRow("unknown sampler")
        << (base + QStringList{"--model", sd1, "--sampler", "dpmpp_3m", "--out", "o.png"}) << 1
        << "unknown sampler 'dpmpp_3m' (Kiln has euler, euler_ancestral";
    QTest::newRow("unknown scheduler")
        << (base + QStringList{"--model", sd1, "--scheduler", "beta", "--out", "o.png"}) << 1
        << "unknown schedule 'beta'";
    QTest::newRow("bad aesthetic score")
        << (base + QStringList{"--model", sd1, "--aesthetic-score", "pretty", "--out", "o.png"})
        << 2 << "--aesthetic-score needs a number, got 'pretty'";
    QTest::newRow("missing embedding")
        << (base + QStringList{"--model", sd1, "--prompt", "a embedding:nowhere-xyz star", "--out",
                               "o.png"})
        << 1 << "the prompt names embedding 'nowhere-xyz'";
    QTest::newRow("bad vae tiling")
        << (base + QStringList{"--model", sd1, "--vae-tiling", "sometimes", "--out", "o.png"}) << 2
        << "--vae-tiling must be auto, always or never";
    QTest::newRow("tile too small") << (base + QStringList{"--model", sd1, "--vae-tiling", "always",
                                                           "--tile-size", "16", "--out", "o.png"})
                                    << 1 << "tile";
    QTest::newRow("missing init image")
        << (base +
            QStringList{"--model", sd1, "--init-image", "/nonexistent.png", "--out", "o.png"})
        << 1 << "--init-image:";
    QTest::newRow("unreadable init image")
        << (base + QStringList{"--model", sd1, "--init-image", "GARBAGE.png", "--out", "o.png"})
        << 1 << "--init-image:";
    QTest::newRow("denoise without image")
        << (base + QStringList{"--model", sd1, "--denoise", "0.5", "--out", "o.png"}) << 2
        << "--denoise needs --init-image";
    QTest::newRow("bad denoise") << (base + QStringList{"--model", sd1, "--init-image", "INIT.png",
                                                        "--denoise", "lots", "--out", "o.png"})
                                 << 2 << "--denoise needs a number";
    QTest::newRow("denoise out of range")
        << (base + QStringList{"--model", sd1, "--init-image", "INIT.png", "--denoise", "1.5",
                               "--out", "o.png"})
        << 1 << "denoise";
    QTest::newRow("mask without image")
        << (base + QStringList{"--model", sd1, "--mask", "INIT.png", "--out", "o.png"}) << 2
        << "--mask and --mask-from-alpha need --init-image";
    QTest::newRow("alpha of an opaque image")
        << (base + QStringList{"--model", sd1, "--init-image", "INIT.png", "--mask-from-alpha",
                               "--out", "o.png"})
        << 1 << "--mask-from-alpha:";
  }
  void rejectsBadInput() {
    QFETCH(QStringList, args);
    QFETCH(int, exit_code);
    QFETCH(QString, message);
    // Materialise the bad files this row refers to.
    QFile ckpt(dir_.filePath("model.ckpt"));
    QVERIFY(ckpt.open(QIODevice::WriteOnly));
    ckpt.write("PK\x03\x04 pickle");
    ckpt.close();
    QFile sd1(conf("sd1/sd1_tiny_ldm.safetensors"));
    QVERIFY(sd1.open(QIODevice::ReadOnly));
    QFile corrupt(dir_.filePath("corrupt.safetensors"));
    QVERIFY(corrupt.open(QIODevice::WriteOnly));
    corrupt.write(sd1.read(sd1.size() / 2));  // truncated
    corrupt.close();
    QFile other(dir_.filePath("other.safetensors"));
    QVERIFY(other.open(QIODevice::WriteOnly));
    const QByteArray header = R"({"foo.weight":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    QByteArray len(8, 0);
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    other.write(len + header + QByteArray(8, 0));
    other.close();
    QFile garbage(dir_.filePath("garbage.png"));
    QVERIFY(garbage.open(QIODevice::WriteOnly));
    garbage.write("\x89PNG\r\n\x1a\n not really");
    garbage.close();
    const QString init = dir_.filePath("init.png");
    kiln::Image opaque;
    opaque.width = 64;
    opaque.height = 64;
    opaque.channels = 3;
    opaque.pixels.assign(64 * 64 * 3, 0.5f);
    kiln::writeImage(init.toStdString(), opaque);
    for (QString& a : args) {
      if (a == "GARBAGE.png") a = garbage.fileName();
      if (a == "INIT.png") a = init;
      if (a == "MODEL.ckpt") a = ckpt.fileName();
      if (a == "CORRUPT") a = corrupt.fileName();
      if (a == "OTHER") a = other.fileName();
      if (a.startsWith("o.")) a = dir_.filePath(a);
    }
    const CliRun r = runCli(args);
    QCOMPARE(r.exit_code, exit_code);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY2(r.err.trimmed().count('\n') < 12, qPrintable(r.err));
    // Nothing written: neither the output nor a temporary file.
    const QStringList left =
        QDir(dir_.path()).entryList({"o.*", ".o.*"}, QDir::Files | QDir::Hidden);
    QVERIFY2(left.isEmpty(), qPrintable(left.join(", ")));
  }

  // With no model, prompt, size or output: the default workflow with the starter model,
  // written as a new file in the XDG pictures folder, whose path goes to stdout.
  // FLUX.1 given as a lone transformer with its parts named: drawn at FLUX's defaults
  // (CFG 1, the simple schedule) with the distilled guidance asked for, which the PNG's
  // parameters carry; without its parts it says which option gives them.
  void rendersFluxWithItsParts() {
    const kiln::testing::FluxTinyModel flux =
        kiln::testing::writeFluxTinyModel(dir_.filePath("flux-models").toStdString());
    QTemporaryDir lone;
    const QString transformer = lone.filePath("flux1-dev.safetensors");
    QVERIFY(QFile::copy(QString::fromStdString(flux.transformer), transformer));
    const QString out = dir_.filePath("flux.png");
    const QStringList base{"render",  "--model", transformer, "--prompt", "a red fox",
                           "--steps", "2",       "--width",   "64",       "--height",
                           "48",      "--dtype", "fp32",      "--quiet"};
    const CliRun missing = runCli(base + QStringList{"--out", out});
    QVERIFY(missing.exit_code != 0);
    QVERIFY2(missing.err.contains("--vae"), qPrintable(missing.err));
    QVERIFY(!QFile::exists(out));
    const CliRun r =
        runCli(base + QStringList{"--out", out, "--vae", QString::fromStdString(flux.vae),
                                  "--clip-l", QString::fromStdString(flux.clip_l), "--t5",
                                  QString::fromStdString(flux.t5), "--guidance", "2"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const kiln::Image img = kiln::readImage(out.toStdString());
    QCOMPARE(img.width, 64);
    QCOMPARE(img.height, 48);
    const QString params = QString::fromStdString(img.text.at("parameters"));
    QVERIFY2(params.contains("CFG scale: 1,") && params.contains("Distilled CFG Scale: 2"),
             qPrintable(params));
    const CliRun bad = runCli(base + QStringList{"--out", out, "--guidance", "0"});
    QVERIFY(bad.exit_code != 0);
    QVERIFY2(bad.err.contains("--guidance"), qPrintable(bad.err));
  }

  void defaultsToStarterModelAndPicturesFolder() {
    const QString home = dir_.filePath("home");
    const QString pictures = home + "/My Pictures";
    QVERIFY(QDir().mkpath(home + "/.config"));
    QFile dirs(home + "/.config/user-dirs.dirs");
    QVERIFY(dirs.open(QIODevice::WriteOnly));
    dirs.write("XDG_PICTURES_DIR=\"$HOME/My Pictures\"\n");
    dirs.close();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("HOME", home);
    env.insert("XDG_CONFIG_HOME", home + "/.config");
    for (int run = 0; run < 2; ++run) {
      const CliRun r = runCli({"render", "--steps", "2"}, env);
      QVERIFY2(r.exit_code == 0, qPrintable(r.err));
      const QString path = r.out.trimmed();
      QVERIFY2(path.startsWith(pictures + "/kiln-") && path.endsWith(".png"), qPrintable(path));
      const kiln::Image img = kiln::readImage(path.toStdString());
      QCOMPARE(img.width, 64);
      QCOMPARE(img.height, 64);
      QVERIFY(QString::fromStdString(img.text.at("parameters")).contains("Model: kiln-starter"));
    }
    // Two runs in the same second never overwrite each other.
    QCOMPARE(QDir(pictures).entryList({"kiln-*.png"}, QDir::Files).size(), 2);
  }

  // Ctrl+C while denoising: exit code 130 at once, and no file, partial or whole.
  void interruptExitsWithoutFile() {
    QTemporaryDir out;
    QProcess p;
    p.start(KILN_CLI_PATH, {"render", "--steps", "1000", "--out", out.filePath("never.png")});
    QVERIFY(p.waitForStarted());
    QString err;
    QElapsedTimer waited;
    waited.start();
    while (!err.contains("Denoising 2/1000") && waited.elapsed() < 60000) {
      p.waitForReadyRead(100);
      err += QString::fromUtf8(p.readAllStandardError());
    }
    QVERIFY2(err.contains("Denoising 2/1000"), qPrintable(err));
    const qint64 to_second_step =
        waited.elapsed();  // start-up, loading, two steps: this machine's pace now
    QElapsedTimer latency;
    latency.start();
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(static_cast<int>(10000 + 2 * to_second_step)));
    QVERIFY2(latency.elapsed() < std::max<qint64>(to_second_step, 500),
             qPrintable(QString("%1 ms; the render took %2 ms to its second step")
                            .arg(latency.elapsed())
                            .arg(to_second_step)));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 130);
    err += QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains("interrupted; nothing was saved"), qPrintable(err));
    QCOMPARE(QDir(out.path()).entryList(QDir::Files | QDir::Hidden).size(), 0);
  }

  // --json-events: one JSON object per line, the plan first, the saved path last.
  void jsonEventsStream() {
    const QString out = dir_.filePath("events.png");
    const CliRun r = runCli({"render", "--steps", "3", "--out", out, "--json-events"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QStringList types;
    QJsonObject last;
    for (const QString& line : r.out.split('\n', Qt::SkipEmptyParts)) {
      QJsonParseError error{};
      const QJsonDocument doc = QJsonDocument::fromJson(line.toUtf8(), &error);
      QVERIFY2(error.error == QJsonParseError::NoError && doc.isObject(), qPrintable(line));
      last = doc.object();
      types << last["event"].toString();
    }
    QVERIFY2(types.indexOf("stage_planned") >= 0 &&
                 types.indexOf("stage_planned") < types.indexOf("stage_started"),
             qPrintable(types.join(",")));
    QVERIFY(types.count("progress") >= 3);
    QCOMPARE(types.filter("job_finished").size(), 1);
    QCOMPARE(last["event"].toString(), QString("job_finished"));
    QCOMPARE(last["paths"].toArray().at(0).toString(), out);
    QVERIFY(QFileInfo::exists(out));
  }

  // The simulated accelerator renders the same picture as the CPU and reports its peak.
  void memoryReportOnSimulatedDevice() {
    const QString cpu = dir_.filePath("cpu.png"), sim = dir_.filePath("sim.png");
    const QStringList base{"render",   "--model", conf("sd1/sd1_tiny_ldm.safetensors"),
                           "--prompt", "x",       "--steps",
                           "2",        "--width", "64",
                           "--height", "64"};
    QVERIFY(runCli(base + QStringList{"--out", cpu}).exit_code == 0);
    const CliRun r =
        runCli(base + QStringList{"--out", sim, "--device", "sim:512M", "--memory-report"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QRegularExpression peak("memory: device sim:512 MiB, peak ([0-9.]+) (KiB|MiB) allocated");
    const QRegularExpressionMatch m = peak.match(r.err);
    QVERIFY2(m.hasMatch(), qPrintable(r.err));
    const double mib = m.captured(1).toDouble() / (m.captured(2) == "KiB" ? 1024.0 : 1.0);
    QVERIFY2(mib > 7.0 && mib < 512.0, qPrintable(r.err));  // the fp32 weights alone are 7.3 MiB
    QVERIFY2(r.err.contains(QRegularExpression("of them on the device\\), 1 model")),
             qPrintable(r.err));
    QCOMPARE(kiln::readImage(sim.toStdString()).pixels, kiln::readImage(cpu.toStdString()).pixels);

    // Streaming the UNet block by block draws the same picture and says so.
    const QString streamed = dir_.filePath("streamed.png");
    const CliRun s =
        runCli(base + QStringList{"--out", streamed, "--device", "sim:512M", "--offload-unet",
                                  "group-block", "--streams", "--memory-report"});
    QVERIFY2(s.exit_code == 0, qPrintable(s.err));
    QVERIFY2(s.err.contains("memory: unet (UNetModel") &&
                 s.err.contains("group-block, 1 block per group, streams"),
             qPrintable(s.err));
    QVERIFY2(s.err.contains("memory: vae (AutoencoderKL") && s.err.contains("): none"),
             qPrintable(s.err));
    QCOMPARE(kiln::readImage(streamed.toStdString()).pixels,
             kiln::readImage(cpu.toStdString()).pixels);
  }

  // --lora merges a file for the render and prints its load report; a file that fits
  // nothing fails the render with the reason and writes no image.
  void loraIsMergedAndReported() {
    const std::string lora = dir_.filePath("style.safetensors").toStdString();
    at::manual_seed(3);
    const std::string m = "lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q";
    const std::string extra = "lora_unet_input_blocks_9_9_proj_in";
    kiln::testing::writeTensors(lora, {{m + ".lora_down.weight", at::randn({4, 32})},
                                       {m + ".lora_up.weight", at::randn({32, 4})},
                                       {m + ".alpha", at::full({}, 4.0)},
                                       {extra + ".lora_down.weight", at::randn({4, 32})},
                                       {extra + ".lora_up.weight", at::randn({32, 4})}});
    // fp32: merged and hooked agree to rounding there (bf16 rounds the merged weights).
    const QStringList base{"render",   "--model", conf("sd1/sd1_tiny_ldm.safetensors"),
                           "--prompt", "x",       "--steps",
                           "2",        "--width", "64",
                           "--height", "64",      "--dtype",
                           "fp32"};
    const QString plain = dir_.filePath("plain.png"), styled = dir_.filePath("styled.png");
    QVERIFY(runCli(base + QStringList{"--out", plain}).exit_code == 0);
    const CliRun r = runCli(
        base + QStringList{"--out", styled, "--lora", QString::fromStdString(lora) + ":0.8"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(
        r.err.contains("applied 1 of 2 modules of") &&
            r.err.contains("(kohya, merged); 1 matched nothing: " + QString::fromStdString(extra)),
        qPrintable(r.err));
    QVERIFY(kiln::readImage(styled.toStdString()).pixels !=
            kiln::readImage(plain.toStdString()).pixels);

    // Streamed block by block on the simulated device, auto hooks the LoRA in: the same
    // picture up to rounding.
    const QString streamed = dir_.filePath("styled_streamed.png");
    const CliRun h = runCli(base + QStringList{"--out", streamed, "--lora",
                                               QString::fromStdString(lora) + ":0.8", "--device",
                                               "sim:512M", "--offload-unet", "group-block"});
    QVERIFY2(h.exit_code == 0, qPrintable(h.err));
    QVERIFY2(h.err.contains("(kohya, hooked)"), qPrintable(h.err));
    const auto a = kiln::readImage(styled.toStdString()).pixels,
               b = kiln::readImage(streamed.toStdString()).pixels;
    QCOMPARE(a.size(), b.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    QVERIFY2(worst <= 2.0 / 255.0, qPrintable(QString::number(worst)));

    const std::string flux = dir_.filePath("flux.safetensors").toStdString();
    kiln::testing::writeTensors(
        flux, {{"lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight", at::randn({4, 32})},
               {"lora_unet_double_blocks_0_img_attn_qkv.lora_up.weight", at::randn({96, 4})}});
    const QString none = dir_.filePath("none.png");
    const CliRun f =
        runCli(base + QStringList{"--out", none, "--lora", QString::fromStdString(flux)});
    QVERIFY(f.exit_code != 0);
    QVERIFY2(f.err.contains("made for another architecture"), qPrintable(f.err));
    QVERIFY(!QFile::exists(none));
    const CliRun bad = runCli(base + QStringList{"--out", none, "--lora", ":2"});
    QVERIFY(bad.exit_code != 0);
    QVERIFY2(bad.err.contains("--lora"), qPrintable(bad.err));
  }

  // --init-image with --denoise runs that share of the steps and records the strength;
  // --vae-tiling always decodes and encodes in tiles and says how; --mask-from-alpha
  // repaints only where the picture is transparent.
  void imageToImageAndInpainting() {
    const QStringList base{"render",   "--model", conf("sd1/sd1_tiny_ldm.safetensors"),
                           "--prompt", "x",       "--steps",
                           "4",        "--width", "64",
                           "--height", "64"};
    const QString start = dir_.filePath("start.png");
    QVERIFY(runCli(base + QStringList{"--out", start, "--seed", "5"}).exit_code == 0);

    const QString varied = dir_.filePath("varied.png");
    const CliRun r = runCli(base + QStringList{"--out", varied, "--init-image", start, "--denoise",
                                               "0.5", "--vae-tiling", "always", "--tile-size", "64",
                                               "--tile-overlap", "16"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("Encoding image..."), qPrintable(r.err));
    QVERIFY2(r.err.contains("tiled encode:"), qPrintable(r.err));
    QVERIFY2(r.err.contains("tiled decode:"), qPrintable(r.err));
    QVERIFY2(r.err.contains("2/2") && !r.err.contains("3/"), qPrintable(r.err));
    const kiln::Image v = kiln::readImage(varied.toStdString());
    QVERIFY2(QString::fromStdString(v.text.at("parameters")).contains("Denoising strength: 0.5"),
             qPrintable(QString::fromStdString(v.text.at("parameters"))));

    // Transparent left half: the right half comes back as it was, the left is repainted.
    kiln::Image rgba = kiln::readImage(start.toStdString());
    QCOMPARE(rgba.channels, 3);
    kiln::Image holed = rgba;
    holed.channels = 4;
    holed.pixels.clear();
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x) {
        for (int c = 0; c < 3; ++c)
          holed.pixels.push_back(rgba.pixels[static_cast<std::size_t>((y * 64 + x) * 3 + c)]);
        holed.pixels.push_back(x < 32 ? 0.0f : 1.0f);
      }
    const QString holed_path = dir_.filePath("holed.png"), filled = dir_.filePath("filled.png");
    kiln::writeImage(holed_path.toStdString(), holed);
    const CliRun m = runCli(base + QStringList{"--out", filled, "--seed", "9", "--init-image",
                                               holed_path, "--mask-from-alpha"});
    QVERIFY2(m.exit_code == 0, qPrintable(m.err));
    const kiln::Image f = kiln::readImage(filled.toStdString());
    QCOMPARE(f.channels, 3);
    double kept = 0, repainted = 0;
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x)
        for (int c = 0; c < 3; ++c) {
          const std::size_t i = static_cast<std::size_t>((y * 64 + x) * 3 + c);
          const double d = std::abs(double(f.pixels[i]) - double(rgba.pixels[i]));
          if (x < 32)
            repainted += d;
          else
            kept = std::max(kept, d);
        }
    QVERIFY2(kept < 0.5 / 255.0, qPrintable(QString("unmasked pixels moved by %1").arg(kept)));
    QVERIFY2(repainted / (32 * 64 * 3) > 2.0 / 255.0, qPrintable(QString::number(repainted)));
  }

  // A video model renders video files of every format and a still; frames off the grid
  // are snapped with a note; more frames than an image file holds are refused.
  void rendersVideo() {
    const auto model = kiln::testing::writeWanTinyModel(dir_.path().toStdString() + "/video");
    const QStringList base{"render",   "--model",   QString::fromStdString(model.folder),
                           "--prompt", "a red cat", "--width",
                           "64",       "--height",  "48",
                           "--steps",  "2",         "--seed",
                           "3"};
    const QString mp4 = dir_.path() + "/clip.mp4";
    const CliRun r = runCli(base + QStringList{"--frames", "8", "--fps", "12", "--out", mp4});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("8 frames are not on the model's grid of 1 + 4n; rendering 9"),
             qPrintable(r.err));
    QVERIFY2(r.err.contains("wrote " + mp4 + " (64x48 video at 12 fps, wan21)"), qPrintable(r.err));
    const kiln::Video v = kiln::readVideo(mp4.toStdString());
    QCOMPARE(static_cast<int>(v.frames.size()), 9);
    QCOMPARE(v.codec, std::string("h264"));
    QVERIFY(std::abs(v.fps - 12.0) < 1e-6);
    QVERIFY(v.metadata.at("parameters").find("a red cat") == 0);
    const QString mov = dir_.path() + "/clip.mov";
    QVERIFY(runCli(base + QStringList{"--frames", "5", "--out", mov}).exit_code == 0);
    QCOMPARE(kiln::readVideo(mov.toStdString()).codec, std::string("prores"));
    const QString pngs = dir_.path() + "/frames/";
    QVERIFY(runCli(base + QStringList{"--frames", "5", "--out", pngs}).exit_code == 0);
    QCOMPARE(static_cast<int>(kiln::readVideo(pngs.toStdString()).frames.size()), 5);
    // a still through the video model, from ComfyUI's single files
    const QString still = dir_.path() + "/still.png";
    const CliRun s = runCli({"render", "--model", QString::fromStdString(model.transformer),
                             "--width", "64", "--height", "48", "--steps", "2", "--out", still});
    QVERIFY2(s.exit_code == 0, qPrintable(s.err));
    const kiln::Image image = kiln::readImage(still.toStdString());
    QCOMPARE(image.width, 64);
    QVERIFY(image.text.at("parameters").find("Frames: 1") != std::string::npos);
    const CliRun bad =
        runCli(base + QStringList{"--frames", "5", "--out", dir_.path() + "/many.png"});
    QCOMPARE(bad.exit_code, 1);
    QVERIFY2(bad.err.contains("need a video file"), qPrintable(bad.err));
    QVERIFY(!QFileInfo::exists(dir_.path() + "/many.png"));
    QCOMPARE(runCli(base + QStringList{"--frames", "0"}).exit_code, 2);

    // a workflow with SaveVideo runs, and its video runs again to the same frames
    const QString workflow = QString(R"({"kiln_workflow": 1,
 "nodes": [
  {"id": "model", "type": "LoadVideoModel", "params": {"model_name": "MODEL_PATH"}},
  {"id": "pos", "type": "TextEncode", "params": {"text": "a blue bird"}},
  {"id": "neg", "type": "TextEncode", "params": {"text": ""}},
  {"id": "latent", "type": "EmptyVideoLatent", "params": {"width": 64, "height": 48, "frames": 5}},
  {"id": "sampler", "type": "Sampler", "params": {"seed": 4, "steps": 2, "sampler_name": "euler"}},
  {"id": "decode", "type": "VAEDecode"},
  {"id": "save", "type": "SaveVideo", "params": {"filename_prefix": "vid", "format": "mov"}}],
 "links": [
  {"from": "model", "output": "CLIP", "to": "pos", "input": "clip"},
  {"from": "model", "output": "CLIP", "to": "neg", "input": "clip"},
  {"from": "model", "output": "MODEL", "to": "sampler", "input": "model"},
  {"from": "pos", "output": "CONDITIONING", "to": "sampler", "input": "positive"},
  {"from": "neg", "output": "CONDITIONING", "to": "sampler", "input": "negative"},
  {"from": "latent", "output": "LATENT", "to": "sampler", "input": "latent_image"},
  {"from": "sampler", "output": "LATENT", "to": "decode", "input": "samples"},
  {"from": "model", "output": "VAE", "to": "decode", "input": "vae"},
  {"from": "decode", "output": "IMAGE", "to": "save", "input": "images"}]})")
                                 .replace("MODEL_PATH", QString::fromStdString(model.folder));
    const QString wf = dir_.filePath("t2v.json");
    QFile f(wf);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(workflow.toUtf8());
    f.close();
    const CliRun first = runCli({"run", wf, "--out", dir_.filePath("t2v-a")});
    QVERIFY2(first.exit_code == 0, qPrintable(first.err));
    const QString video = dir_.filePath("t2v-a/vid-00001.mov");
    QVERIFY2(QFileInfo::exists(video), qPrintable(first.err + first.out));
    const CliRun again = runCli({"run", video, "--out", dir_.filePath("t2v-b")});
    QVERIFY2(again.exit_code == 0, qPrintable(again.err));
    const kiln::Video a = kiln::readVideo(video.toStdString()),
                      b = kiln::readVideo(dir_.filePath("t2v-b/vid-00001.mov").toStdString());
    QCOMPARE(a.frames.size(), std::size_t{5});
    QCOMPARE(b.frames.size(), std::size_t{5});
    QVERIFY(a.frames.back().pixels == b.frames.back().pixels);
  }

  // kiln-cli validate and run: a workflow file runs with --set, its PNG carries the
  // workflow and runs again to the same picture; every problem of a broken workflow is
  // listed; bad --set and files without a workflow are refused.
  void workflowRunAndValidate() {
    const QString model = conf("sd1/sd1_tiny_ldm.safetensors");
    const QString workflow = QString(R"({"kiln_workflow": 1,
 "nodes": [
  {"id": "ckpt", "type": "LoadCheckpoint", "params": {"ckpt_name": "CHECKPOINT_PATH"}},
  {"id": "pos", "type": "TextEncode", "title": "Prompt", "params": {"text": "a red circle"}},
  {"id": "neg", "type": "TextEncode", "params": {"text": ""}},
  {"id": "latent", "type": "EmptyLatent", "params": {"width": 64, "height": 64}},
  {"id": "sampler", "type": "Sampler", "params": {"seed": 3, "steps": 2}},
  {"id": "decode", "type": "VAEDecode"},
  {"id": "save", "type": "SaveImage", "params": {"filename_prefix": "wf"}}],
 "links": [
  {"from": "ckpt", "output": "CLIP", "to": "pos", "input": "clip"},
  {"from": "ckpt", "output": "CLIP", "to": "neg", "input": "clip"},
  {"from": "ckpt", "output": "MODEL", "to": "sampler", "input": "model"},
  {"from": "pos", "output": "CONDITIONING", "to": "sampler", "input": "positive"},
  {"from": "neg", "output": "CONDITIONING", "to": "sampler", "input": "negative"},
  {"from": "latent", "output": "LATENT", "to": "sampler", "input": "latent_image"},
  {"from": "sampler", "output": "LATENT", "to": "decode", "input": "samples"},
  {"from": "ckpt", "output": "VAE", "to": "decode", "input": "vae"},
  {"from": "decode", "output": "IMAGE", "to": "save", "input": "images"}]})")
                                 .replace("CHECKPOINT_PATH", model);
    const QString path = dir_.filePath("t2i.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(workflow.toUtf8());
    f.close();
    const CliRun v = runCli({"validate", path});
    QVERIFY2(v.exit_code == 0, qPrintable(v.err));
    QVERIFY2(v.err.contains("7 nodes, 9 links, no problems"), qPrintable(v.err));

    const QString out = dir_.filePath("wf-out");
    const CliRun r = runCli({"run", path, "--out", out, "--set", "sampler.seed=5", "--set",
                             "Prompt.text=a blue square"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("Encoding prompt (Prompt)...") && r.err.contains("Denoising 2/2"),
             qPrintable(r.err));
    const QString png = out + "/wf-00001.png";
    QCOMPARE(r.out.trimmed(), png);
    const kiln::Image first = kiln::readImage(png.toStdString());
    QVERIFY(first.text.count("kiln_workflow"));
    QVERIFY2(QString::fromStdString(first.text.at("parameters")).startsWith("a blue square\n"),
             qPrintable(QString::fromStdString(first.text.at("parameters"))));
    QVERIFY(QString::fromStdString(first.text.at("parameters")).contains("Seed: 5"));

    // The PNG's workflow draws the same picture again, into the next free name.
    const CliRun again = runCli({"run", png, "--out", out});
    QVERIFY2(again.exit_code == 0, qPrintable(again.err));
    QCOMPARE(again.out.trimmed(), out + "/wf-00002.png");
    QCOMPARE(kiln::readImage((out + "/wf-00002.png").toStdString()).pixels, first.pixels);
    const CliRun pv = runCli({"validate", png});
    QCOMPARE(pv.exit_code, 0);

    // Broken: two problems, both listed, nothing written.
    QFile b(dir_.filePath("broken.json"));
    QVERIFY(b.open(QIODevice::WriteOnly));
    b.write(workflow.toUtf8()
                .replace("\"steps\": 2", "\"steps\": 0")
                .replace("\"type\": \"VAEDecode\"", "\"type\": \"Decode\""));
    b.close();
    const CliRun bv = runCli({"validate", b.fileName()});
    QCOMPARE(bv.exit_code, 1);
    QVERIFY2(bv.out.contains("node sampler: Sampler: 'steps' is 0, outside 1 to 1000"),
             qPrintable(bv.out));
    QVERIFY2(bv.out.contains("node decode: unknown node type 'Decode'"), qPrintable(bv.out));
    const CliRun br = runCli({"run", b.fileName(), "--out", out});
    QCOMPARE(br.exit_code, 1);
    QVERIFY2(br.err.contains("invalid workflow") && br.err.contains("unknown node type 'Decode'"),
             qPrintable(br.err));
    QCOMPARE(QDir(out).entryList(QDir::Files).size(), 2);

    const CliRun bs = runCli({"run", path, "--out", out, "--set", "sampler.steps=lots"});
    QCOMPARE(bs.exit_code, 2);
    QVERIFY2(bs.err.contains("--set: sampler.steps needs a whole number, got 'lots'"),
             qPrintable(bs.err));
    const QString plain = dir_.filePath("plain-for-run.png");
    QVERIFY(runCli({"render", "--model", model, "--prompt", "x", "--steps", "1", "--width", "64",
                    "--height", "64", "--out", plain})
                .exit_code == 0);
    // A rendered picture carries the workflow that draws it: run, it draws the same pixels
    // and the same parameters text.
    const kiln::Image rendered = kiln::readImage(plain.toStdString());
    QVERIFY(rendered.text.count("kiln_workflow"));
    const QString redraw_dir = dir_.filePath("redraw");
    const CliRun redraw = runCli({"run", plain, "--out", redraw_dir});
    QVERIFY2(redraw.exit_code == 0, qPrintable(redraw.err));
    const kiln::Image redrawn = kiln::readImage(redraw.out.trimmed().toStdString());
    QCOMPARE(redrawn.pixels, rendered.pixels);
    QCOMPARE(redrawn.text.at("parameters"), rendered.text.at("parameters"));
    // A picture without a workflow says so.
    kiln::Image bare = rendered;
    bare.text.clear();
    const QString bare_png = dir_.filePath("bare.png");
    kiln::writeImage(bare_png.toStdString(), bare);
    const CliRun np = runCli({"run", bare_png, "--out", out});
    QCOMPARE(np.exit_code, 1);
    QVERIFY2(np.err.contains("holds no Kiln or ComfyUI workflow"), qPrintable(np.err));
    const CliRun nj = runCli({"validate", dir_.filePath("missing.json")});
    QCOMPARE(nj.exit_code, 1);
    QVERIFY2(nj.err.contains("does not exist"), qPrintable(nj.err));
  }

  // A picture ComfyUI saved (its graph in the "prompt" chunk) runs as it is; a sampler
  // Kiln lacks is reported by name and the workflow does not validate.
  void comfyPicturesRun() {
    const QString model = conf("sd1/sd1_tiny_ldm.safetensors");
    const QString api = QString(R"({
  "3": {"inputs": {"seed": 2, "steps": 2, "cfg": 5, "sampler_name": "SAMPLER", "scheduler": "normal", "denoise": 1,
        "model": ["4", 0], "positive": ["6", 0], "negative": ["7", 0], "latent_image": ["5", 0]}, "class_type": "KSampler"},
  "4": {"inputs": {"ckpt_name": "CHECKPOINT_PATH"}, "class_type": "CheckpointLoaderSimple"},
  "5": {"inputs": {"width": 64, "height": 64, "batch_size": 1}, "class_type": "EmptyLatentImage"},
  "6": {"inputs": {"text": "a red circle", "clip": ["4", 1]}, "class_type": "CLIPTextEncode"},
  "7": {"inputs": {"text": "", "clip": ["4", 1]}, "class_type": "CLIPTextEncode"},
  "8": {"inputs": {"samples": ["3", 0], "vae": ["4", 2]}, "class_type": "VAEDecode"},
  "9": {"inputs": {"filename_prefix": "ComfyUI", "images": ["8", 0]}, "class_type": "SaveImage"}})")
                            .replace("CHECKPOINT_PATH", model);
    kiln::Image picture;
    picture.width = 8;
    picture.height = 8;
    picture.channels = 3;
    picture.pixels.assign(8 * 8 * 3, 0.25f);
    picture.text["prompt"] = QString(api).replace("SAMPLER", "euler").toStdString();
    const QString png = dir_.filePath("comfy.png");
    kiln::writeImage(png.toStdString(), picture);
    const QString out = dir_.filePath("comfy-out");
    const CliRun r = runCli({"run", png, "--out", out});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("imported a ComfyUI workflow (api format) of 7 nodes"),
             qPrintable(r.err));
    QCOMPARE(r.out.trimmed(), out + "/ComfyUI-00001.png");
    const kiln::Image made = kiln::readImage((out + "/ComfyUI-00001.png").toStdString());
    QVERIFY(made.text.count("kiln_workflow"));  // from now on a Kiln picture

    QFile f(dir_.filePath("comfy-dpm.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QString(api).replace("SAMPLER", "euler_cfg_pp").toUtf8());
    f.close();
    const CliRun v = runCli({"validate", f.fileName()});
    QCOMPARE(v.exit_code, 1);
    QVERIFY2(v.err.contains(
                 "note: node 3 (KSampler): sampler 'euler_cfg_pp' is not one of Kiln's samplers"),
             qPrintable(v.err));
    QVERIFY2(v.out.contains("node 3: Sampler: 'sampler_name' is 'euler_cfg_pp'"),
             qPrintable(v.out));
  }

  void snapsSizeWithNotice() {
    const QString out = dir_.filePath("snap.png");
    const CliRun r = runCli({"render", "--model", conf("sd1/sd1_tiny_ldm.safetensors"), "--prompt",
                             "x", "--steps", "1", "--width", "70", "--height", "36", "--out", out});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("not a multiple of 8; rendering 64x32"), qPrintable(r.err));
    const kiln::Image img = kiln::readImage(out.toStdString());
    QCOMPARE(img.width, 64);
    QCOMPARE(img.height, 32);
    QVERIFY(QString::fromStdString(img.text.at("parameters")).contains("Size: 64x32"));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
