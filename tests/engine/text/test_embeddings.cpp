// Textual-inversion embeddings: finding them by name in a prompt, reading the A1111 and
// SDXL file formats, refusing bad files, and their vectors reaching the text encoders.
// An embedding whose vectors are the token embeddings of some words must encode exactly
// as those words do.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <limits>
#include <memory>

#include "core/data_paths.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "models/text/clip_tokenizer.h"
#include "models/text/embeddings.h"
#include "pipelines/sd/sd_pipeline.h"
#include "ref_tensors.h"

namespace {

using kiln::models::EmbeddingLibrary;
using kiln::models::PromptPiece;
using kiln::tensor_io::DType;

// Writes float32 tensors [n, width] as a .safetensors file.
void writeEmbedding(const QString& path,
                    const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<kiln::tensor_io::TensorToWrite> out;
  storage.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    const at::Tensor c = t.to(at::kFloat).contiguous();
    storage.emplace_back(c.nbytes());
    if (c.nbytes() > 0) std::memcpy(storage.back().data(), c.data_ptr(), c.nbytes());
    out.push_back({name, DType::F32, c.sizes().vec(), storage.back()});
  }
  kiln::tensor_io::writeSafetensors(path.toStdString(), out);
}

// The checkpoint's token embedding rows of a text's tokens (float32 [n, width]).
at::Tensor tokenRows(const std::string& checkpoint, const std::string& key,
                     const std::string& text) {
  static const auto tokenizer = kiln::models::ClipTokenizer::fromVocabFile(
      kiln::core::findDataFile("bpe_simple_vocab_16e6.txt.gz"));
  const auto file =
      kiln::tensor_io::SafetensorsFile::open(kiln::testing::conformancePath(checkpoint));
  const at::Tensor table = kiln::tensor_io::viewStored({file, file->find(key)}).to(at::kFloat);
  const std::vector<int64_t> ids = tokenizer.encode(text);
  return table.index_select(0, at::tensor(ids, at::TensorOptions().dtype(at::kLong))).clone();
}

std::string names(const std::vector<PromptPiece>& pieces) {
  std::string out;
  for (const auto& p : pieces)
    out += p.embedding.empty() ? "[" + p.text + "]" : "<" + p.embedding + ">";
  return out;
}

constexpr const char* kSd1 = "sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors";
constexpr const char* kSd1Token =
    "cond_stage_model.transformer.text_model.embeddings.token_embedding.weight";
constexpr const char* kSdxl = "sd-tiny-1234/sdxl/sdxl_tiny_ldm.safetensors";

}  // namespace

class TestEmbeddings : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const at::Tensor v = at::randn({2, 8});
    writeEmbedding(dir_.filePath("bad-hands-5.safetensors"), {{"emb_params", v}});
    writeEmbedding(dir_.filePath("style.safetensors"), {{"emb_params", v}});
  }

  // `embedding:NAME` and bare names become embedding pieces; other words stay text.
  void splitsPrompts() {
    const EmbeddingLibrary library({dir_.path().toStdString(), "/no/such/folder"});
    QCOMPARE(library.names(), (std::vector<std::string>{"bad-hands-5", "style"}));
    QCOMPARE(names(kiln::models::splitEmbeddings("a cat, embedding:bad-hands-5, by x", library)),
             std::string("[a cat, ]<bad-hands-5>[, by x]"));
    QCOMPARE(names(kiln::models::splitEmbeddings("style photo of bad-hands-55 style", library)),
             std::string("<style>[ photo of bad-hands-55 ]<style>"));
    QCOMPARE(names(kiln::models::splitEmbeddings("embedding:style.safetensors", library)),
             std::string("<style>"));
    QCOMPARE(names(kiln::models::splitEmbeddings("no embeddings here", EmbeddingLibrary())),
             std::string("[no embeddings here]"));
    try {
      (void)kiln::models::splitEmbeddings("a embedding:missing cat", library);
      QFAIL("split");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::FileNotFound);
      QVERIFY2(std::string(e.what()).find("'missing'") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("bad-hands-5, style") != std::string::npos, e.what());
    }
  }

  // A1111's emb_params, SDXL's clip_l + clip_g, a lone tensor of another name; pickles,
  // files without an embedding, NaN and the wrong width are refused with the reason.
  void readsAndRefusesFiles() {
    const QString sdxl = dir_.filePath("xl.safetensors");
    writeEmbedding(sdxl, {{"clip_l", at::ones({3, 16})}, {"clip_g", at::ones({3, 24}) * 2}});
    const auto ti = kiln::models::loadTextualInversion(sdxl.toStdString());
    QCOMPARE(ti.name, std::string("xl"));
    QCOMPARE(ti.tokens(), int64_t{3});
    QCOMPARE(ti.forEncoder(16, false).sum().item<float>(), 48.0f);
    QCOMPARE(ti.forEncoder(24, true).sum().item<float>(), 144.0f);
    const QString lone = dir_.filePath("lone.safetensors");
    writeEmbedding(lone, {{"string_to_param.*", at::ones({16})}});
    QCOMPARE(
        kiln::models::loadTextualInversion(lone.toStdString()).forEncoder(16, false).sizes().vec(),
        (std::vector<int64_t>{1, 16}));

    const auto refused = [](const QString& path, kiln::ErrorKind kind, const char* words) {
      try {
        (void)kiln::models::loadTextualInversion(path.toStdString());
        QFAIL(qPrintable("loaded " + path));
      } catch (const kiln::Error& e) {
        QCOMPARE(e.kind(), kind);
        QVERIFY2(std::string(e.what()).find(words) != std::string::npos, e.what());
      }
    };
    refused(dir_.filePath("old.pt"), kiln::ErrorKind::UnsupportedModel, "pickle");
    const QString two = dir_.filePath("two.safetensors");
    writeEmbedding(two, {{"a", at::ones({1, 4})}, {"b", at::ones({1, 4})}});
    refused(two, kiln::ErrorKind::UnsupportedModel, "no textual-inversion embedding");
    const QString nan = dir_.filePath("nan.safetensors");
    writeEmbedding(nan,
                   {{"emb_params", at::full({1, 4}, std::numeric_limits<float>::quiet_NaN())}});
    refused(nan, kiln::ErrorKind::NonFinite, "NaN");
    const QString flat = dir_.filePath("flat.safetensors");
    writeEmbedding(flat, {{"emb_params", at::ones({0, 4})}});
    refused(flat, kiln::ErrorKind::ShapeMismatch, "not [tokens");
    QFile garbage(dir_.filePath("garbage.safetensors"));
    QVERIFY(garbage.open(QIODevice::WriteOnly));
    garbage.write("not a safetensors file at all");
    garbage.close();
    refused(garbage.fileName(), kiln::ErrorKind::CorruptFile, "");
    try {
      (void)kiln::models::loadTextualInversion(sdxl.toStdString()).forEncoder(32, false);
      QFAIL("fitted");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::ShapeMismatch);
      QVERIFY2(std::string(e.what()).find("another model family") != std::string::npos, e.what());
    }
  }

  // An embedding made of the token vectors of "red star" encodes as "red star" does, with
  // weights, on SD 1.x; it is not split across a 75-token window.
  void injectsVectorsSd1() {
    QTemporaryDir folder;
    writeEmbedding(folder.filePath("redstar.safetensors"),
                   {{"emb_params", tokenRows(kSd1, kSd1Token, "red star")}});
    const EmbeddingLibrary library({folder.path().toStdString()});
    const kiln::pipelines::SdPipeline pipe(
        kiln::models::openCheckpoint(kiln::testing::conformancePath(kSd1)), at::kFloat);
    const auto as_words = pipe.encodeWeighted("a (red star:1.3) on white");
    const auto as_embedding =
        pipe.encodeWeighted("a (embedding:redstar:1.3) on white", 1, &library);
    QVERIFY(at::equal(as_words.context, as_embedding.context));
    QVERIFY(at::equal(pipe.encodeWeighted("redstar", 1, &library).context,
                      pipe.encodeWeighted("red star").context));
    QVERIFY(!at::equal(pipe.encodeWeighted("redstar").context,
                       pipe.encodeWeighted("red star").context));
    // 74 words then the 2-vector embedding: it starts the second window.
    std::string filler;
    for (int i = 0; i < 74; ++i) filler += "cat ";
    const auto moved = pipe.encodeWeighted(filler + "redstar", 1, &library);
    QCOMPARE(moved.context.size(1), int64_t{154});
    QCOMPARE(moved.ids[0][1][1].item<int64_t>(),
             int64_t{49408});  // the first vector past the vocabulary
    // (batched with the first window, so equal to float rounding)
    QVERIFY(at::allclose(moved.context.narrow(1, 77, 77), pipe.encodeWeighted("red star").context,
                         1e-5, 1e-6));
  }

  // SDXL: clip_l feeds the first encoder and clip_g the second; the pooled output too.
  void injectsVectorsSdxl() {
    QTemporaryDir folder;
    writeEmbedding(
        folder.filePath("redstar.safetensors"),
        {{"clip_l", tokenRows(kSdxl,
                              "conditioner.embedders.0.transformer.text_model.embeddings."
                              "token_embedding.weight",
                              "red star")},
         {"clip_g",
          tokenRows(kSdxl, "conditioner.embedders.1.model.token_embedding.weight", "red star")}});
    const EmbeddingLibrary library({folder.path().toStdString()});
    const kiln::pipelines::SdPipeline pipe(
        kiln::models::openCheckpoint(kiln::testing::conformancePath(kSdxl)), at::kFloat);
    const auto as_words = pipe.encodeWeighted("a red star");
    const auto as_embedding = pipe.encodeWeighted("a embedding:redstar", 1, &library);
    QVERIFY(at::equal(as_words.context, as_embedding.context));
    QVERIFY(at::equal(as_words.pooled, as_embedding.pooled));
    // An SD 1.x-only embedding does not fit SDXL's second encoder.
    writeEmbedding(folder.filePath("sd1only.safetensors"),
                   {{"emb_params", tokenRows(kSd1, kSd1Token, "red")}});
    const EmbeddingLibrary with_sd1({folder.path().toStdString()});
    try {
      (void)pipe.encodeWeighted("embedding:sd1only", 1, &with_sd1);
      QFAIL("encoded");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::ShapeMismatch);
      QVERIFY2(std::string(e.what()).find("'sd1only'") != std::string::npos, e.what());
    }
  }

  // The render API finds embeddings in RenderParams::prompt.embedding_dirs.
  void renderUsesEmbeddingFolders() {
    QTemporaryDir folder;
    writeEmbedding(folder.filePath("redstar.safetensors"),
                   {{"emb_params", tokenRows(kSd1, kSd1Token, "red star")}});
    kiln::RenderParams p;
    p.model.path = kiln::testing::conformancePath(kSd1);
    p.prompt.text = "a red star";
    p.sampling.steps = 2;
    p.size.width = p.size.height = 64;
    const kiln::Image words = kiln::render(p).image;
    p.prompt.text = "a embedding:redstar";
    p.prompt.embedding_dirs = {folder.path().toStdString()};
    const kiln::Image embedded = kiln::render(p).image;
    QVERIFY(embedded.pixels == words.pixels);
    p.prompt.embedding_dirs.clear();
    try {
      (void)kiln::render(p);
      QFAIL("rendered");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::FileNotFound);
    }
  }
};

QTEST_APPLESS_MAIN(TestEmbeddings)
#include "test_embeddings.moc"
