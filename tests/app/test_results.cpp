// Results on disk without widgets: file names from the template (never overwriting),
// the PNG text chunks read from the header (damaged files included), the A1111
// parameters text read back, and the checkpoints of ComfyUI and A1111 model trees.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <zlib.h>

#include "kiln/image_io.h"
#include "model_list.h"
#include "output_names.h"
#include "result_files.h"

using namespace kiln::app;

namespace {

void touch(const QString& path) {
  QDir().mkpath(QFileInfo(path).path());
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("x");
}

kiln::Image tinyImage(const std::string& parameters) {
  kiln::Image image;
  image.width = 4;
  image.height = 2;
  image.channels = 3;
  image.pixels.assign(4 * 2 * 3, 0.5f);
  image.text["parameters"] = parameters;
  return image;
}

}  // namespace

class TestResults : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void namesComeFromTheTemplate() {
    kiln::RenderParams p;
    p.sampling.seed = 42;
    p.sampling.steps = 12;
    p.size.width = 512;
    p.size.height = 768;
    p.model.path = "/models/sd_xl_base_1.0.safetensors";
    const QDateTime when(QDate(2026, 12, 3), QTime(14, 35, 2));
    QCOMPARE(expandNameTemplate("kiln-{date}-{time}", p, when), QString("kiln-2026-12-03-143502"));
    QCOMPARE(expandNameTemplate("{model}_{seed}_{steps}_{width}x{height}", p, when),
             QString("sd_xl_base_1.0_42_12_512x768"));
    // Separators cannot lead out of the folder; an empty name still names a file.
    QCOMPARE(expandNameTemplate("../a/b:c", p, when), QString(".._a_b_c"));
    QCOMPARE(expandNameTemplate("  ", p, when), QString("kiln"));
    QCOMPARE(expandNameTemplate("..", p, when), QString("kiln"));
    p.model.path.clear();
    QCOMPARE(expandNameTemplate("{model}", p, when), QString("kiln-starter"));
  }

  void savingNeverOverwrites() {
    QTemporaryDir dir;
    QCOMPARE(uniqueOutputPath(dir.path(), "a", 1), dir.filePath("a.png"));
    touch(dir.filePath("a.png"));
    QCOMPARE(uniqueOutputPath(dir.path(), "a", 1), dir.filePath("a_2.png"));
    touch(dir.filePath("a_2.png"));
    QCOMPARE(uniqueOutputPath(dir.path(), "a", 1), dir.filePath("a_3.png"));
    // A batch's later images count too: b-3.png blocks "b" for a batch of 3, not of 2.
    touch(dir.filePath("b-3.png"));
    QCOMPARE(uniqueOutputPath(dir.path(), "b", 2), dir.filePath("b.png"));
    QCOMPARE(uniqueOutputPath(dir.path(), "b", 3), dir.filePath("b_2.png"));
  }

  void parametersTextReadsBack() {
    const auto s = parseParametersText(
        "a red circle\non two lines\nNegative prompt: blurry\nugly\n"
        "Steps: 30, Sampler: DPM++ 2M, CFG scale: 6.5, Seed: 1234567890123, Size: 832x1216, Model: "
        "sd_xl_base_1.0\n");
    QVERIFY(s);
    QCOMPARE(s->prompt, QString("a red circle\non two lines"));
    QCOMPARE(s->negative_prompt, QString("blurry\nugly"));
    QCOMPARE(s->steps, 30);
    QCOMPARE(s->sampler, QString("DPM++ 2M"));
    QCOMPARE(s->cfg_scale, 6.5);
    QCOMPARE(s->seed, qint64{1234567890123});
    QCOMPARE(s->width, 832);
    QCOMPARE(s->height, 1216);
    QCOMPARE(s->model, QString("sd_xl_base_1.0"));
    const auto empty_negative =
        parseParametersText("x\nNegative prompt: \nSteps: 2, Seed: 1, Size: 0x0");
    QVERIFY(empty_negative);
    QCOMPARE(empty_negative->prompt, QString("x"));
    QCOMPARE(empty_negative->negative_prompt, QString());
    QVERIFY(!parseParametersText(""));
    QVERIFY(!parseParametersText("just a caption"));
    QVERIFY(!parseParametersText("x\nSteps: none"));
  }

  void listsResultsWithTheirText() {
    QTemporaryDir dir;
    const std::string parameters =
        "a blue star\nNegative prompt: \nSteps: 4, Sampler: Euler, CFG scale: 7, Seed: 3, Size: "
        "4x2, Model: m";
    kiln::writeImage(dir.filePath("old.png").toStdString(), tinyImage("first"));
    {
      QFile old(dir.filePath("old.png"));
      QVERIFY(old.open(QIODevice::ReadWrite));
      QVERIFY(old.setFileTime(QDateTime::currentDateTime().addSecs(-60),
                              QFileDevice::FileModificationTime));
    }
    kiln::writeImage(dir.filePath("new.png").toStdString(), tinyImage(parameters));
    touch(dir.filePath("notes.txt"));
    const QList<ResultFile> results = listResults(dir.path());
    QCOMPARE(results.size(), 2);
    QCOMPARE(QFileInfo(results[0].path).fileName(), QString("new.png"));
    QCOMPARE(results[0].parameters, QString::fromStdString(parameters));  // line breaks kept
    QCOMPARE(results[1].parameters, QString("first"));
    QCOMPARE(listResults(dir.path(), 1).size(), 1);
    // Damaged and foreign files: no crash, nothing made up.
    QFile png(dir.filePath("new.png"));
    QVERIFY(png.open(QIODevice::ReadOnly));
    const QByteArray bytes = png.readAll();
    for (qsizetype cut :
         {qsizetype{0}, qsizetype{7}, qsizetype{20}, qsizetype{45}, bytes.size() / 2}) {
      QFile f(dir.filePath("cut.png"));
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(bytes.left(cut));
      f.close();
      const QMap<QString, QString> texts = readPngText(f.fileName());
      QVERIFY(texts.isEmpty() || texts.value("parameters") == QString::fromStdString(parameters));
    }
    QByteArray huge = bytes.left(33);
    huge += QByteArray(
        "\x7f\xff\xff\xff"
        "tEXt",
        8);  // a chunk claiming 2 GiB
    QFile f(dir.filePath("huge.png"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(huge);
    f.close();
    QVERIFY(readPngText(f.fileName()).isEmpty());
    QVERIFY(readPngText(dir.filePath("notes.txt")).isEmpty());
    QVERIFY(readPngText(dir.filePath("missing.png")).isEmpty());
  }

  // A compressed text chunk is inflated only up to 16 MiB: a 300 KB zTXt that claims
  // 256 MiB of text (a zip bomb) is left out, the chunks beside it are read.
  void compressedChunksAreInflatedWithinALimit() {
    QTemporaryDir dir;
    const auto chunk = [](const QByteArray& type, const QByteArray& data) {
      QByteArray c;
      const auto n = static_cast<quint32>(data.size());
      for (int i = 3; i >= 0; --i) c += static_cast<char>((n >> (8 * i)) & 0xff);
      c += type + data;
      const quint32 crc = static_cast<quint32>(::crc32(
          ::crc32(0, reinterpret_cast<const Bytef*>(type.constData()), 4),
          reinterpret_cast<const Bytef*>(data.constData()), static_cast<uInt>(data.size())));
      for (int i = 3; i >= 0; --i) c += static_cast<char>((crc >> (8 * i)) & 0xff);
      return c;
    };
    const auto zlibOf = [](const QByteArray& text) {
      return qCompress(text, 9).mid(4);
    };  // without Qt's size prefix
    QByteArray png("\x89PNG\r\n\x1a\n", 8);
    png += chunk("IHDR", QByteArray("\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0", 13));
    png += chunk("zTXt", QByteArray("bomb\0\0", 6) + zlibOf(QByteArray(256 << 20, 'a')));
    png += chunk("zTXt", QByteArray("prompt\0\0", 8) + zlibOf("{\"1\": {}}"));
    png += chunk("iTXt", QByteArray("parameters\0\x01\0\0\0", 15) + zlibOf("a cat\nSteps: 3"));
    png += chunk("IEND", {});
    QVERIFY(png.size() < 1 << 20);
    QFile f(dir.filePath("bomb.png"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(png);
    f.close();
    const QMap<QString, QString> texts = readPngText(f.fileName());
    QVERIFY(!texts.contains("bomb"));
    QCOMPARE(texts.value("prompt"), QString("{\"1\": {}}"));
    QCOMPARE(texts.value("parameters"), QString("a cat\nSteps: 3"));
  }

  void findsCheckpointsInModelTrees() {
    QTemporaryDir dir;
    touch(dir.filePath("ComfyUI/models/checkpoints/sd15.safetensors"));
    touch(dir.filePath("ComfyUI/models/checkpoints/xl/juggernaut.safetensors"));
    touch(dir.filePath("ComfyUI/models/loras/style.safetensors"));  // a LoRA, not offered
    // lone transformers (FLUX.1) in diffusion_models/ and unet/; their parts are not offered
    touch(dir.filePath("ComfyUI/models/diffusion_models/flux1-dev.safetensors"));
    touch(dir.filePath("ComfyUI/models/unet/flux1-schnell-fp8.safetensors"));
    touch(dir.filePath("ComfyUI/models/vae/ae.safetensors"));
    touch(dir.filePath("ComfyUI/models/text_encoders/t5xxl_fp16.safetensors"));
    touch(dir.filePath("webui/models/Stable-diffusion/dreamshaper.safetensors"));
    touch(dir.filePath("webui/models/Stable-diffusion/readme.txt"));
    touch(dir.filePath("loose/own.safetensors"));
    const QList<ModelChoice> found =
        findCheckpoints({dir.filePath("ComfyUI"), dir.filePath("webui"), dir.filePath("loose"),
                         dir.filePath("absent"), ""});
    QStringList names;
    for (const ModelChoice& m : found) names << m.name;
    QCOMPARE(names, (QStringList{"dreamshaper", "flux1-dev", "flux1-schnell-fp8", "own", "sd15",
                                 "xl/juggernaut"}));
    QCOMPARE(found[5].path, dir.filePath("ComfyUI/models/checkpoints/xl/juggernaut.safetensors"));
    QCOMPARE(found[1].path, dir.filePath("ComfyUI/models/diffusion_models/flux1-dev.safetensors"));
    // The same folder named twice lists each file once.
    QCOMPARE(findCheckpoints({dir.filePath("loose"), dir.filePath("loose/")}).size(), 1);
  }
};

QTEST_GUILESS_MAIN(TestResults)
#include "test_results.moc"
