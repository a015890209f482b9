// The T5/UMT5 tokenizer over a real sentencepiece model that the test trains with
// sentencepiece's spm_train (T5's special ids: pad 0, end 1, unknown 2), compared with
// spm_encode, and where it is found beside a text encoder. In the same process as libtorch
// (whose libprotobuf clashes with libsentencepiece's own copy) it must not crash.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>

#include "kiln/error.h"
#include "models/text/t5_tokenizer.h"
#include "sanitizer_skips.h"

namespace km = kiln::models;

class TestT5Tokenizer : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string model_;

 private Q_SLOTS:
  void initTestCase() {
    const std::string corpus = dir_.path().toStdString() + "/corpus.txt";
    {
      std::ofstream out(corpus);
      const char* colours[] = {"red", "blue", "green", "yellow", "purple", "orange"};
      const char* things[] = {"circle", "square", "star",  "triangle",
                              "ring",   "cat",    "river", "mountain"};
      const char* places[] = {"on a white background", "in the top left corner", "at sunset",
                              "under the sea"};
      for (const char* c : colours)
        for (const char* t : things)
          for (const char* p : places) out << "a " << c << " " << t << " " << p << "\n";
    }
    model_ = dir_.path().toStdString() + "/spiece";
    QProcess train;
    train.start("spm_train",
                {QString::fromStdString("--input=" + corpus),
                 QString::fromStdString("--model_prefix=" + model_), "--vocab_size=80",
                 "--hard_vocab_limit=false", "--model_type=unigram", "--character_coverage=1.0",
                 "--pad_id=0", "--eos_id=1", "--unk_id=2", "--bos_id=-1", "--minloglevel=2"});
    QVERIFY2(train.waitForFinished(60000) && train.exitCode() == 0,
             train.readAllStandardError().constData());
    model_ += ".model";
    // libtorch is loaded and working in this process
    QCOMPARE(at::ones({2}).sum().item<float>(), 2.0f);
  }

  void encodesWithTheEndTokenAndPadding() {
    KILN_SKIP_WITHOUT_SENTENCEPIECE();
    const auto tok = km::T5Tokenizer::open(model_);
    QCOMPARE(tok.eosId(), int64_t{1});
    QCOMPARE(tok.padId(), int64_t{0});
    QProcess encode;
    encode.start("spm_encode", {QString::fromStdString("--model=" + model_), "--output_format=id"});
    encode.write("a red star at sunset\n");
    encode.closeWriteChannel();
    QVERIFY(encode.waitForFinished(30000) && encode.exitCode() == 0);
    std::vector<int> expected;
    for (const auto& part :
         QString::fromUtf8(encode.readAllStandardOutput()).split(' ', Qt::SkipEmptyParts))
      expected.push_back(part.trimmed().toInt());
    QVERIFY(expected.size() >= 4);
    int64_t tokens = 0;
    const auto ids = tok.encode("a red star at sunset", 32, &tokens);
    QCOMPARE(ids.size(), std::size_t{32});
    QCOMPARE(tokens, static_cast<int64_t>(expected.size()) + 1);
    for (std::size_t i = 0; i < expected.size(); ++i) QCOMPARE(ids[i], int64_t{expected[i]});
    QCOMPARE(ids[expected.size()], int64_t{1});
    for (std::size_t i = expected.size() + 1; i < ids.size(); ++i) QCOMPARE(ids[i], int64_t{0});
    for (const int64_t id : ids) QVERIFY(id >= 0 && id < tok.vocabSize());
    // the prompt is cleaned first
    QCOMPARE(tok.encode("  a red\n\tstar   at sunset ", 32), ids);
    QCOMPARE(km::T5Tokenizer::clean("  a  b\n c "), std::string("a b c"));
  }

  void truncationKeepsTheEndToken() {
    KILN_SKIP_WITHOUT_SENTENCEPIECE();
    const auto tok = km::T5Tokenizer::open(model_);
    int64_t tokens = 0;
    const auto full =
        tok.encode("a purple mountain under the sea a green river at sunset", 64, &tokens);
    QVERIFY(tokens > 5);
    const auto cut =
        tok.encode("a purple mountain under the sea a green river at sunset", 5, &tokens);
    QCOMPARE(tokens, int64_t{5});
    QCOMPARE(cut, (std::vector<int64_t>{full[0], full[1], full[2], full[3], 1}));
    QCOMPARE(tok.encode("", 3), (std::vector<int64_t>{1, 0, 0}));
    QVERIFY_THROWS_EXCEPTION(kiln::Error, tok.encode("a", 0));
  }

  void refusesBadFiles() {
    try {
      km::T5Tokenizer::open(dir_.path().toStdString() + "/missing.model");
      QFAIL("no error");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::FileNotFound);
    }
    KILN_SKIP_WITHOUT_SENTENCEPIECE();
    const std::string junk = dir_.path().toStdString() + "/junk.model";
    std::ofstream(junk) << "this is not a protobuf";
    try {
      km::T5Tokenizer::open(junk);
      QFAIL("no error");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::CorruptFile);
    }
  }

  // HuggingFace's tokenizer.json of a Unigram model reads as the sentencepiece model it was
  // made from: the same ids for every prompt, found beside an encoder; a BPE tokenizer is
  // refused by name.
  void readsTokenizerJson() {
    KILN_SKIP_WITHOUT_SENTENCEPIECE();
    QProcess exported;
    exported.start("spm_export_vocab",
                   {QString::fromStdString("--model=" + model_), "--output_format=vocab"});
    QVERIFY(exported.waitForFinished(60000) && exported.exitCode() == 0);
    nlohmann::json vocab = nlohmann::json::array();
    for (const QByteArray& line : exported.readAllStandardOutput().split('\n')) {
      const QList<QByteArray> parts = line.split('\t');
      if (parts.size() != 2) continue;
      vocab.push_back({parts[0].toStdString(), parts[1].toDouble()});
    }
    nlohmann::json doc = {
        {"model", {{"type", "Unigram"}, {"unk_id", 2}, {"vocab", vocab}}},
        {"added_tokens",
         {{{"id", 0}, {"content", "<pad>"}, {"special", true}},
          {{"id", 1}, {"content", "</s>"}, {"special", true}},
          {{"id", 2}, {"content", "<unk>"}, {"special", true}}}},
        {"normalizer", nullptr},
        {"pre_tokenizer",
         {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"add_prefix_space", true}}}};
    namespace fs = std::filesystem;
    QTemporaryDir root;
    const fs::path r = root.path().toStdString();
    fs::create_directories(r / "tokenizer");
    const fs::path json = r / "tokenizer" / "tokenizer.json";
    std::ofstream(json) << doc.dump();
    const auto want = km::T5Tokenizer::open(model_);
    const auto got = km::T5Tokenizer::open(json.string());
    QCOMPARE(got.vocabSize(), want.vocabSize());
    QCOMPARE(got.eosId(), want.eosId());
    QCOMPARE(got.padId(), want.padId());
    for (const char* text : {"a red circle at sunset", "a purple mountain under the sea",
                             "  a   blue   star  ", "zebra xylophone quartz", ""})
      QCOMPARE(got.encode(text, 32), want.encode(text, 32));
    QCOMPARE(km::findT5TokenizerModel(r.string()), json.string());
    const fs::path bpe = r / "bpe.json";
    std::ofstream(bpe) << R"({"model": {"type": "BPE", "vocab": {}, "merges": []}})";
    try {
      (void)km::T5Tokenizer::open(bpe.string());
      QFAIL("a BPE tokenizer.json was read as T5's");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::UnsupportedModel);
    }
  }

  void findsTheModelBesideTheEncoder() {
    namespace fs = std::filesystem;
    QTemporaryDir root;
    const fs::path r = root.path().toStdString();
    fs::create_directories(r / "pipe" / "text_encoder");
    fs::create_directories(r / "pipe" / "tokenizer");
    fs::copy_file(model_, r / "pipe" / "tokenizer" / "spiece.model");
    QCOMPARE(km::findT5TokenizerModel((r / "pipe").string()),
             (r / "pipe" / "tokenizer" / "spiece.model").string());
    QCOMPARE(km::findT5TokenizerModel((r / "pipe" / "text_encoder").string()),
             (r / "pipe" / "tokenizer" / "spiece.model").string());
    fs::create_directories(r / "te");
    std::ofstream(r / "te" / "umt5.safetensors") << "x";
    QCOMPARE(km::findT5TokenizerModel((r / "te" / "umt5.safetensors").string()), std::string());
    fs::copy_file(model_, r / "te" / "umt5.spiece.model");
    QCOMPARE(km::findT5TokenizerModel((r / "te" / "umt5.safetensors").string()),
             (r / "te" / "umt5.spiece.model").string());
  }
};

QTEST_GUILESS_MAIN(TestT5Tokenizer)
#include "test_t5_tokenizer.moc"
