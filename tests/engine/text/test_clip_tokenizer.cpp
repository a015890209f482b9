// The CLIP tokenizer against ids recorded from HuggingFace's CLIPTokenizer, and its
// handling of missing and damaged vocabulary files.
#include <QtTest>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <zlib.h>
#include <nlohmann/json.hpp>

#include "core/data_paths.h"
#include "kiln/error.h"
#include "models/text/clip_tokenizer.h"

using kiln::models::ClipTokenizer;
using Ids = std::vector<int64_t>;

Q_DECLARE_METATYPE(Ids)

namespace {

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

std::string conformancePath(const char* name) {
  return std::string(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/" + name;
}

QByteArray idsText(const Ids& ids) {
  QByteArray text = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) text += ", ";
    text += QByteArray::number(static_cast<qlonglong>(ids[i]));
  }
  return text + "]";
}

// Compares id lists and shows both on failure.
#define COMPARE_IDS(actual, expected)                          \
  do {                                                         \
    const Ids actual_ids = (actual);                           \
    const Ids expected_ids = (expected);                       \
    if (actual_ids != expected_ids) {                          \
      QFAIL(("ids differ\n   actual: " + idsText(actual_ids) + \
             "\n expected: " + idsText(expected_ids))          \
                .constData());                                 \
    }                                                          \
  } while (false)

// Writes `bytes` to a file in `dir` and returns its path.
std::string writeFile(const QTemporaryDir& dir, const char* name, const QByteArray& bytes) {
  const QString path = dir.filePath(QString::fromLatin1(name));
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) {
    throw std::runtime_error("cannot write " + path.toStdString());
  }
  return path.toStdString();
}

// A complete gzip stream holding `text`.
QByteArray gzip(const QByteArray& text) {
  z_stream stream{};
  constexpr int kGzipWindowBits = 15 + 16;
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  QByteArray out(static_cast<int>(deflateBound(&stream, static_cast<uLong>(text.size()))), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(static_cast<int>(stream.total_out));
  deflateEnd(&stream);
  if (result != Z_STREAM_END) throw std::runtime_error("deflate failed");
  return out;
}

}  // namespace

class TestClipTokenizer : public QObject {
  Q_OBJECT

 private:
  std::optional<ClipTokenizer> tokenizer_;
  std::string vocab_path_;

  void addCase(const char* tag, const std::string& text, int64_t pad_id, const Ids& expected) {
    QTest::newRow(tag) << QByteArray::fromStdString(text) << static_cast<qlonglong>(pad_id)
                       << expected;
  }

 private Q_SLOTS:
  void initTestCase() {
    vocab_path_ = kiln::core::findDataFile("bpe_simple_vocab_16e6.txt.gz");
    QElapsedTimer timer;
    timer.start();
    tokenizer_ = ClipTokenizer::fromVocabFile(vocab_path_);
    qInfo("vocabulary loaded in %lld ms", static_cast<long long>(timer.elapsed()));
  }

  // tokenizer_cases.json: untruncated ids (with BOS/EOS) and ids padded to 77 with 49407.
  void conformanceCases_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<Ids>("untruncated");
    QTest::addColumn<Ids>("padded77");
    const auto cases = readJson(conformancePath("tokenizer_cases.json"));
    QVERIFY(!cases.empty());
    int index = 0;
    for (const auto& c : cases) {
      const auto tag =
          QByteArray::number(index++) + ": " +
          QByteArray::fromStdString(c.at("text").get<std::string>()).simplified().left(40);
      QTest::newRow(tag.constData())
          << QByteArray::fromStdString(c.at("text").get<std::string>())
          << c.at("ids_hf_untruncated").get<Ids>() << c.at("ids_padded77").get<Ids>();
    }
  }

  void conformanceCases() {
    QFETCH(QByteArray, text);
    QFETCH(Ids, untruncated);
    QFETCH(Ids, padded77);
    const std::string utf8 = text.toStdString();
    Ids full = {ClipTokenizer::kBos};
    const Ids body = tokenizer_->encode(utf8);
    full.insert(full.end(), body.begin(), body.end());
    full.push_back(ClipTokenizer::kEos);
    COMPARE_IDS(full, untruncated);
    COMPARE_IDS(tokenizer_->encodePadded(utf8, ClipTokenizer::kEos), padded77);
  }

  // prompts.json: the input ids the diffusers pipelines fed to SD1's text encoder and to
  // both SDXL text encoders (the second pads with 0), for the prompt and the negative.
  void pipelinePrompts_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<qlonglong>("pad_id");
    QTest::addColumn<Ids>("expected");
    const auto prompts = readJson(conformancePath("prompts.json"));
    const auto& sd1 = prompts.at("sd1");
    const auto& sdxl = prompts.at("sdxl");
    const std::string texts[] = {sd1.at("prompt"), sd1.at("negative_prompt"), sdxl.at("prompt"),
                                 sdxl.at("negative_prompt")};
    addCase("sd1 prompt", texts[0], ClipTokenizer::kEos, sd1.at("input_ids").at(0));
    addCase("sd1 negative", texts[1], ClipTokenizer::kEos, sd1.at("input_ids").at(1));
    addCase("sdxl te1 prompt", texts[2], ClipTokenizer::kEos, sdxl.at("input_ids_1").at(0));
    addCase("sdxl te1 negative", texts[3], ClipTokenizer::kEos, sdxl.at("input_ids_1").at(1));
    addCase("sdxl te2 prompt", texts[2], 0, sdxl.at("input_ids_2").at(0));
    addCase("sdxl te2 negative", texts[3], 0, sdxl.at("input_ids_2").at(1));
  }

  void pipelinePrompts() {
    QFETCH(QByteArray, text);
    QFETCH(qlonglong, pad_id);
    QFETCH(Ids, expected);
    QCOMPARE(expected.size(), std::size_t{77});
    COMPARE_IDS(tokenizer_->encodePadded(text.toStdString(), pad_id), expected);
  }

  // Behaviour the conformance files do not pin down; ids (without BOS/EOS) from
  // HuggingFace's CLIPTokenizer.
  void textHandling_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<Ids>("expected");
    const auto add = [](const char* tag, const char* text, const Ids& expected) {
      QTest::newRow(tag) << QByteArray(text) << expected;
    };
    add("greek final sigma", "ΟΔΟΣ ΣΑΣ",
        {138, 123, 138, 112, 138, 123, 139, 480, 139, 225, 138, 109, 139, 480});
    add("greek sigma before a period", "ΑΣ.Β", {138, 109, 139, 481, 269, 138, 366});
    add("cyrillic lowercased", "Привет МИР",
        {26302, 16370, 29503, 110, 22176, 141, 480, 38018, 16701, 141, 478});
    add("dotted capital i", "İstanbul", {328, 16384, 11231});
    add("cjk ideographs split apart", "猫猫 cat", {163, 234, 360, 163, 234, 360, 2368});
    add("other numbers one per word", "Ⅻ ² ½ ٣", {158, 227, 375, 41175, 33613, 149, 352});
    add("zero-width joiner dropped", "👨\u200d👩\u200d👧 🫠",
        {18966, 18800, 964, 356, 558, 104, 510});
    add("controls dropped", "a\001b\014c\u200bd", {596, 4480});
    add("no-break space and line separator split", "red\u00a0car x\u2028y", {736, 1615, 343, 344});
    add("invalid utf-8 dropped", "ca\377t", {2368});
    add("contraction with long s", "x'ſ", {343, 6, 129, 379});
    add("special after punctuation", "!<|endoftext|>", {256, 49407});
    add("special spelled differently", "<|End\001OfText|>x", {49407, 343});
  }

  void textHandling() {
    QFETCH(QByteArray, text);
    QFETCH(Ids, expected);
    COMPARE_IDS(tokenizer_->encode(text.toStdString()), expected);
  }

  void paddingTruncatesToMaxLength() {
    std::string text;
    for (int i = 0; i < 10; ++i) text += "cat ";
    const Ids ids = tokenizer_->encodePadded(text, 0, 6);
    COMPARE_IDS(ids, (Ids{ClipTokenizer::kBos, 2368, 2368, 2368, 2368, ClipTokenizer::kEos}));
    COMPARE_IDS(tokenizer_->encodePadded("", 0, 4),
                (Ids{ClipTokenizer::kBos, ClipTokenizer::kEos, 0, 0}));
    try {
      (void)tokenizer_->encodePadded("cat", 0, 1);
      QFAIL("max_length 1 was accepted");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::InvalidArgument);
    }
  }

  void missingFileThrowsFileNotFound() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("no_such_vocab.txt.gz").toStdString();
    try {
      (void)ClipTokenizer::fromVocabFile(path);
      QFAIL("a missing vocabulary was accepted");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::FileNotFound);
      QVERIFY2(std::string(e.what()).find(path) != std::string::npos, e.what());
    }
  }

  void damagedFileThrowsCorruptFile_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QByteArray>("reason");  // part of the message; empty: any reason
    QFile vocab(QString::fromStdString(vocab_path_));
    QVERIFY(vocab.open(QIODevice::ReadOnly));
    const QByteArray gz = vocab.readAll();
    QVERIFY(gz.size() > 200000);
    QByteArray flipped = gz;
    for (int i = 1000; i < 1100; ++i) flipped[i] = static_cast<char>(flipped[i] ^ 0x55);
    const QByteArray header = "#version: 0.2\n";

    QTest::newRow("empty") << QByteArray() << QByteArray("it is empty");
    QTest::newRow("plain text") << header + "i n\nt h\n" << QByteArray("not gzip-compressed");
    QTest::newRow("random bytes") << QByteArray(4096, 'Z') << QByteArray("not gzip-compressed");
    QTest::newRow("truncated gzip") << gz.left(50000) << QByteArray("cannot decompress");
    QTest::newRow("gzip header only") << gz.left(10) << QByteArray("cannot decompress");
    QTest::newRow("damaged gzip") << flipped << QByteArray();
    QTest::newRow("too few merges")
        << gzip(header + "i n\nt h\n") << QByteArray("ends after 2 of 48894 merges");
    QTest::newRow("not a pair") << gzip(header + "i n\nt h x\n")
                                << QByteArray("line 3 is not a merge of two symbols");
    QTest::newRow("unknown symbol")
        << gzip(header + "i n\nt hat\n") << QByteArray("line 3 merges a symbol that no earlier");
    QTest::newRow("repeated merge")
        << gzip(header + "i n\ni n\n") << QByteArray("line 3 repeats an earlier merge");
    QTest::newRow("overlong line")
        << gzip(header + QByteArray(10000, 'x') + "\n") << QByteArray("longer than 4096 bytes");
  }

  void damagedFileThrowsCorruptFile() {
    QFETCH(QByteArray, bytes);
    QFETCH(QByteArray, reason);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeFile(dir, "vocab.txt.gz", bytes);
    try {
      (void)ClipTokenizer::fromVocabFile(path);
      QFAIL("a damaged vocabulary was accepted");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::CorruptFile);
      QVERIFY2(std::string(e.what()).find(path) != std::string::npos, e.what());
      QVERIFY2(QByteArray(e.what()).contains(reason), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestClipTokenizer)
#include "test_clip_tokenizer.moc"
