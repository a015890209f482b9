// The safetensors reader and writer: round trips, atomic writes, and a table of malformed
// files that must each be rejected with a kiln::Error naming the file and the tensor.
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <QtTest>

#include "core/atomic_file.h"
#include "kiln/error.h"
#include "tensor_io/dtype.h"
#include "tensor_io/safetensors.h"

using kiln::Error;
using kiln::ErrorKind;
using namespace kiln::tensor_io;

namespace {

struct TensorSpec {
  std::string name;
  DType dtype = DType::Invalid;
  std::vector<int64_t> shape;
  bool operator==(const TensorSpec&) const = default;
};
using TensorSpecs = std::vector<TensorSpec>;
using Metadata = std::map<std::string, std::string>;

}  // namespace

Q_DECLARE_METATYPE(TensorSpecs)
Q_DECLARE_METATYPE(Metadata)

namespace {

QByteArray lengthPrefix(uint64_t n) {
  QByteArray bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(n >> (8 * i));
  return bytes;
}

// A file image: the 8-byte little-endian header length, the header, then the data area.
QByteArray fileImage(const QByteArray& header, const QByteArray& data = {}) {
  return lengthPrefix(static_cast<uint64_t>(header.size())) + header + data;
}

// Deterministic, distinct content for each tensor so that a mixed-up range shows.
std::vector<uint8_t> patternBytes(std::size_t count, std::size_t seed) {
  std::vector<uint8_t> bytes(count);
  for (std::size_t i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>(i * 31 + seed * 7 + 1);
  return bytes;
}

uint64_t byteCount(const TensorSpec& spec) {
  uint64_t n = dtypeSize(spec.dtype);
  for (int64_t d : spec.shape) n *= static_cast<uint64_t>(d);
  return n;
}

QByteArray shapeText(const std::vector<int64_t>& shape) {
  QByteArray s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + QByteArray::number(shape[i]);
  return s + "]";
}

QByteArray kindName(ErrorKind kind) {
  return kiln::errorKindName(kind);
}

bool writeFile(const QString& path, const QByteArray& contents) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(contents) == contents.size();
}

QByteArray readFile(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Every entry in a folder, hidden ones included, so a left-over temporary file shows.
QStringList folderEntries(const QString& path) {
  return QDir(path).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                              QDir::Name);
}

// The kiln::Error that fn throws, or nothing. Any other exception escapes to Qt Test,
// which fails the test.
std::optional<Error> errorFrom(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

// Checks the kind and that the message contains every fragment (file, tensor, reason).
void verifyError(const std::optional<Error>& error, ErrorKind kind, const QStringList& fragments) {
  QVERIFY2(error.has_value(), "no kiln::Error was thrown");
  const QString message = QString::fromUtf8(error->what());
  QVERIFY2(kindName(error->kind()) == kindName(kind),
           qPrintable("kind '" + QString(kindName(error->kind())) + "' instead of '" +
                      QString(kindName(kind)) + "': " + message));
  for (const QString& fragment : fragments) {
    QVERIFY2(message.contains(fragment),
             qPrintable("message lacks '" + fragment + "': " + message));
  }
}

// Lowers the file size limit of this process for its lifetime, so that writes past it
// fail with EFBIG as on a full disk (works as root, unlike a read-only folder).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t limit_bytes) {
    ok_ = ::getrlimit(RLIMIT_FSIZE, &saved_) == 0;
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lowered = saved_;
    lowered.rlim_cur = limit_bytes;
    ok_ = ok_ && ::setrlimit(RLIMIT_FSIZE, &lowered) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  bool ok() const noexcept { return ok_; }

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = SIG_DFL;
  bool ok_ = false;
};

}  // namespace

class TestSafetensors : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void roundTrip_data();
  void roundTrip();
  void everyDTypeParses_data();
  void everyDTypeParses();
  void overwriteReplacesFile();
  void commitIfAbsentNeverOverwrites();
  void writeIntoMissingFolderLeavesNothing();
  void failedWriteKeepsExistingFile_data();
  void failedWriteKeepsExistingFile();
  void openRejectsBadPath_data();
  void openRejectsBadPath();
  void openRejectsMalformedFile_data();
  void openRejectsMalformedFile();
  void maxHeaderBytesIsEnforced_data();
  void maxHeaderBytesIsEnforced();
};

void TestSafetensors::roundTrip_data() {
  QTest::addColumn<TensorSpecs>("specs");
  QTest::addColumn<Metadata>("metadata");

  QTest::newRow("no tensors") << TensorSpecs{} << Metadata{};
  QTest::newRow("metadata only") << TensorSpecs{} << Metadata{{"format", "pt"}};
  QTest::newRow("one F32") << TensorSpecs{{"w", DType::F32, {2, 3}}} << Metadata{};
  // Odd byte counts: the data area must still start 8-byte aligned.
  QTest::newRow("odd sizes") << TensorSpecs{{"a", DType::BF16, {3}},
                                            {"b", DType::I8, {5}},
                                            {"c", DType::F64, {2}},
                                            {"d", DType::Bool, {1}},
                                            {"e", DType::U8, {7}}}
                             << Metadata{{"format", "pt"}, {"step", "1000"}};
  QTest::newRow("scalar and empty") << TensorSpecs{{"scalar", DType::F32, {}},
                                                   {"empty", DType::F16, {0, 4}},
                                                   {"after", DType::I32, {2}}}
                                    << Metadata{};
  TensorSpecs every;
  for (DType dt : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::F8_E4M3, DType::F8_E5M2,
                   DType::I64, DType::I32, DType::I16, DType::I8, DType::U8, DType::Bool}) {
    every.push_back({std::string("t_") + dtypeName(dt), dt, {3}});
  }
  QTest::newRow("every dtype") << every << Metadata{};
  QTest::newRow("names and text that need escaping")
      << TensorSpecs{{"model.diffusion_model.input_blocks.0.0.weight", DType::F16, {4, 1, 1}},
                     {"名前 \"quoted\"", DType::F32, {1}},
                     {"", DType::U8, {2}}}
      << Metadata{{"description", "ünïcödé, \"quotes\", back\\slash\nand a newline"},
                  {"empty", ""}};
}

void TestSafetensors::roundTrip() {
  QFETCH(TensorSpecs, specs);
  QFETCH(Metadata, metadata);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dir.filePath("model.safetensors");

  std::vector<std::vector<uint8_t>> contents;
  std::vector<TensorToWrite> tensors;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    contents.push_back(patternBytes(byteCount(specs[i]), i));
    tensors.push_back({specs[i].name, specs[i].dtype, specs[i].shape, contents.back()});
  }
  writeSafetensors(path.toStdString(), tensors, metadata);
  QCOMPARE(folderEntries(dir.path()), QStringList{"model.safetensors"});

  const auto file = SafetensorsFile::open(path.toStdString());
  QCOMPARE(QString::fromStdString(file->path()), path);
  QCOMPARE(file->tensors().size(), specs.size());
  QVERIFY(file->metadata() == metadata);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& spec = specs[i];
    const TensorInfo* info = file->find(spec.name);
    QVERIFY2(info, spec.name.c_str());
    QCOMPARE(QByteArray(dtypeName(info->dtype)), QByteArray(dtypeName(spec.dtype)));
    QCOMPARE(shapeText(info->shape), shapeText(spec.shape));
    QCOMPARE(info->byteSize(), uint64_t(contents[i].size()));
    const auto bytes = file->bytes(*info);
    QVERIFY2(std::equal(bytes.begin(), bytes.end(), contents[i].begin(), contents[i].end()),
             spec.name.c_str());
  }
  QVERIFY(file->find("no such tensor") == nullptr);
  for (std::size_t i = 1; i < file->tensors().size(); ++i)
    QVERIFY(file->tensors()[i - 1].begin <= file->tensors()[i].begin);

  // The data area starts 8-byte aligned, and the file holds nothing after the last tensor.
  const auto& mapping = file->mapping();
  const auto header = parseSafetensorsHeader(mapping->data(), mapping->size(), path.toStdString());
  QCOMPARE(header.data_offset % 8, uint64_t(0));
  uint64_t data_bytes = 0;
  for (const auto& c : contents) data_bytes += c.size();
  QCOMPARE(mapping->size(), header.data_offset + data_bytes);
}

void TestSafetensors::everyDTypeParses_data() {
  QTest::addColumn<QByteArray>("name");
  QTest::addColumn<int>("dtype");
  QTest::addColumn<int>("size");

  QTest::newRow("F64") << QByteArray("F64") << int(DType::F64) << 8;
  QTest::newRow("F32") << QByteArray("F32") << int(DType::F32) << 4;
  QTest::newRow("F16") << QByteArray("F16") << int(DType::F16) << 2;
  QTest::newRow("BF16") << QByteArray("BF16") << int(DType::BF16) << 2;
  QTest::newRow("F8_E4M3") << QByteArray("F8_E4M3") << int(DType::F8_E4M3) << 1;
  QTest::newRow("F8_E5M2") << QByteArray("F8_E5M2") << int(DType::F8_E5M2) << 1;
  QTest::newRow("I64") << QByteArray("I64") << int(DType::I64) << 8;
  QTest::newRow("I32") << QByteArray("I32") << int(DType::I32) << 4;
  QTest::newRow("I16") << QByteArray("I16") << int(DType::I16) << 2;
  QTest::newRow("I8") << QByteArray("I8") << int(DType::I8) << 1;
  QTest::newRow("U8") << QByteArray("U8") << int(DType::U8) << 1;
  QTest::newRow("BOOL") << QByteArray("BOOL") << int(DType::Bool) << 1;
}

void TestSafetensors::everyDTypeParses() {
  QFETCH(QByteArray, name);
  QFETCH(int, dtype);
  QFETCH(int, size);
  QCOMPARE(int(parseDType(name.toStdString())), dtype);
  QCOMPARE(QByteArray(dtypeName(DType(dtype))), name);
  QCOMPARE(int(dtypeSize(DType(dtype))), size);

  // Written by hand, not by writeSafetensors, so the reader is checked on its own.
  const QByteArray end = QByteArray::number(6 * size);
  const QByteArray header =
      R"({"t":{"dtype":")" + name + R"(","shape":[2,3],"data_offsets":[0,)" + end + "]}}";
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dir.filePath("t.safetensors");
  QVERIFY(writeFile(path, fileImage(header, QByteArray(6 * size, '\x5a'))));

  const auto file = SafetensorsFile::open(path.toStdString());
  const TensorInfo* info = file->find("t");
  QVERIFY(info);
  QCOMPARE(int(info->dtype), dtype);
  QCOMPARE(info->numel(), uint64_t(6));
  QCOMPARE(info->byteSize(), uint64_t(6 * size));
}

void TestSafetensors::overwriteReplacesFile() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const std::string path = dir.filePath("model.safetensors").toStdString();
  const auto first = patternBytes(8, 1);
  const auto second = patternBytes(4, 2);
  writeSafetensors(path, {{"old", DType::F32, {2}, first}});
  writeSafetensors(path, {{"new", DType::I16, {2}, second}});
  QCOMPARE(folderEntries(dir.path()), QStringList{"model.safetensors"});

  const auto file = SafetensorsFile::open(path);
  QCOMPARE(file->tensors().size(), std::size_t(1));
  QVERIFY(file->find("old") == nullptr);
  const TensorInfo* info = file->find("new");
  QVERIFY(info);
  const auto bytes = file->bytes(*info);
  QVERIFY(std::equal(bytes.begin(), bytes.end(), second.begin(), second.end()));
}

// Claiming a new name never overwrites a file another writer put there first: the
// content waits under its temporary name for another name, and nothing is left behind.
void TestSafetensors::commitIfAbsentNeverOverwrites() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString taken = dir.filePath("kiln-00001.png"), free = dir.filePath("kiln-00002.png");
  QVERIFY(writeFile(taken, "theirs"));
  {
    kiln::core::AtomicFile file(taken.toStdString());
    QVERIFY(writeFile(QString::fromStdString(file.temporaryPath()), "ours"));
    QVERIFY(!file.commitIfAbsent());
    QVERIFY(QFile::exists(QString::fromStdString(file.temporaryPath())));
    file.retarget(free.toStdString());
    QVERIFY(file.commitIfAbsent());
  }
  QCOMPARE(folderEntries(dir.path()), (QStringList{"kiln-00001.png", "kiln-00002.png"}));
  QFile theirs(taken), ours(free);
  QVERIFY(theirs.open(QIODevice::ReadOnly) && ours.open(QIODevice::ReadOnly));
  QCOMPARE(theirs.readAll(), QByteArray("theirs"));
  QCOMPARE(ours.readAll(), QByteArray("ours"));
  // An abandoned one leaves no temporary file.
  {
    kiln::core::AtomicFile file(taken.toStdString());
    QVERIFY(writeFile(QString::fromStdString(file.temporaryPath()), "again"));
    QVERIFY(!file.commitIfAbsent());
  }
  QCOMPARE(folderEntries(dir.path()).size(), 2);
}

void TestSafetensors::writeIntoMissingFolderLeavesNothing() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString folder = dir.filePath("missing");
  const QString path = folder + "/model.safetensors";
  const auto bytes = patternBytes(4, 0);
  const auto error = errorFrom([&] {
    writeSafetensors(path.toStdString(), {{"w", DType::F32, {1}, bytes}});
  });
  verifyError(error, ErrorKind::Io, {folder});
  QVERIFY(!QFileInfo::exists(folder));
  QCOMPARE(folderEntries(dir.path()), QStringList{});
}

void TestSafetensors::failedWriteKeepsExistingFile_data() {
  QTest::addColumn<TensorSpecs>("specs");
  QTest::addColumn<int>("extraBytes");  // added to the matching byte count of the first tensor
  QTest::addColumn<int>("limitBytes");  // file size limit while writing; 0 for none
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("fragment");

  const auto invalid = int(ErrorKind::InvalidArgument);
  QTest::newRow("bytes too few") << TensorSpecs{{"w", DType::F32, {4}}} << -1 << 0 << invalid
                                 << "'w'";
  QTest::newRow("bytes too many") << TensorSpecs{{"w", DType::F32, {4}}} << 3 << 0 << invalid
                                  << "'w'";
  QTest::newRow("invalid dtype") << TensorSpecs{{"w", DType::Invalid, {4}}} << 0 << 0 << invalid
                                 << "'w'";
  // (2^64 - 1)^2 wraps to 1: a product without overflow checks would accept one byte.
  QTest::newRow("negative dims") << TensorSpecs{{"w", DType::U8, {-1, -1}}} << 0 << 0 << invalid
                                 << "'w'";
  QTest::newRow("shape product overflow")
      << TensorSpecs{{"w", DType::U8, {int64_t(1) << 32, int64_t(1) << 32}}} << 0 << 0 << invalid
      << "'w'";
  QTest::newRow("duplicate name") << TensorSpecs{{"w", DType::U8, {2}}, {"w", DType::U8, {2}}} << 0
                                  << 0 << invalid << "'w'";
  QTest::newRow("reserved name") << TensorSpecs{{"__metadata__", DType::U8, {2}}} << 0 << 0
                                 << invalid << "'__metadata__'";
  // The header is JSON, which cannot hold it; the writer says so rather than letting the
  // JSON library's exception out.
  QTest::newRow("name not UTF-8") << TensorSpecs{{"w\xff", DType::U8, {2}}} << 0 << 0 << invalid
                                  << "not UTF-8";
  QTest::newRow("disk full") << TensorSpecs{{"big", DType::F32, {256 * 1024}}} << 0 << 64 * 1024
                             << int(ErrorKind::Io) << "disk full";
}

void TestSafetensors::failedWriteKeepsExistingFile() {
  QFETCH(TensorSpecs, specs);
  QFETCH(int, extraBytes);
  QFETCH(int, limitBytes);
  QFETCH(int, kind);
  QFETCH(QString, fragment);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dir.filePath("model.safetensors");
  const auto original_bytes = patternBytes(8, 3);
  writeSafetensors(path.toStdString(), {{"original", DType::U8, {8}, original_bytes}});
  const QByteArray original = readFile(path);
  QVERIFY(!original.isEmpty());

  std::vector<std::vector<uint8_t>> contents;
  std::vector<TensorToWrite> tensors;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    // Computed with wrap-around on purpose: the writer must not be fooled by it.
    int64_t count = static_cast<int64_t>(byteCount(specs[i]));
    if (i == 0) count += extraBytes;
    contents.push_back(patternBytes(static_cast<std::size_t>(std::max<int64_t>(count, 0)), i));
    tensors.push_back({specs[i].name, specs[i].dtype, specs[i].shape, contents.back()});
  }
  std::optional<Error> error;
  if (limitBytes > 0) {
    FileSizeLimit limit(static_cast<rlim_t>(limitBytes));
    QVERIFY(limit.ok());
    error = errorFrom([&] { writeSafetensors(path.toStdString(), tensors); });
  } else {
    error = errorFrom([&] { writeSafetensors(path.toStdString(), tensors); });
  }
  verifyError(error, ErrorKind(kind), {dir.path(), fragment});
  QCOMPARE(readFile(path), original);
  QCOMPARE(folderEntries(dir.path()), QStringList{"model.safetensors"});
}

void TestSafetensors::openRejectsBadPath_data() {
  QTest::addColumn<QString>("relativePath");
  QTest::addColumn<int>("kind");

  QTest::newRow("missing file") << "absent.safetensors" << int(ErrorKind::FileNotFound);
  QTest::newRow("missing folder") << "absent/model.safetensors" << int(ErrorKind::FileNotFound);
  QTest::newRow("folder") << "folder.safetensors" << int(ErrorKind::Io);
}

void TestSafetensors::openRejectsBadPath() {
  QFETCH(QString, relativePath);
  QFETCH(int, kind);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QVERIFY(QDir(dir.path()).mkdir("folder.safetensors"));
  const QString path = dir.filePath(relativePath);
  verifyError(errorFrom([&] { SafetensorsFile::open(path.toStdString()); }), ErrorKind(kind),
              {path});
}

void TestSafetensors::openRejectsMalformedFile_data() {
  QTest::addColumn<QByteArray>("contents");
  QTest::addColumn<QStringList>("names");  // must appear quoted in the message
  QTest::addColumn<QString>("reason");     // the part of the message naming the violation

  // A header with the one tensor "w" whose entry is `entry`, and an 8-byte data area.
  const auto w = [](const QByteArray& entry, const QByteArray& data = QByteArray(8, '\0')) {
    return fileImage(R"({"w":)" + entry + "}", data);
  };
  const QByteArray eight(8, '\0');
  const QString notJson = "not well-formed JSON";
  const QString notObject = "the header is not a JSON object";
  const QString badDim = "invalid dimension";
  const QString badOffsets = "no valid data_offsets pair";
  const QString outside = "outside the data area";
  const QString tooLong = "after the length field";

  // The length field and the header text.
  QTest::newRow("empty file") << QByteArray() << QStringList{} << "shorter than the 8-byte";
  QTest::newRow("shorter than 8 bytes")
      << QByteArray("\x02\0\0\0\0", 5) << QStringList{} << "shorter than the 8-byte";
  QTest::newRow("zero header length") << lengthPrefix(0) << QStringList{} << notObject;
  QTest::newRow("header length larger than file")
      << lengthPrefix(64) + "{}" << QStringList{} << tooLong;
  QTest::newRow("header length one past the end")
      << lengthPrefix(3) + "{}" << QStringList{} << tooLong;
  QTest::newRow("header length 2^64-1")
      << lengthPrefix(~uint64_t(0)) + "{}" << QStringList{} << "more than the limit";
  QTest::newRow("header length just over the cap")
      << lengthPrefix(kDefaultMaxHeaderBytes + 1) + "{}" << QStringList{} << "more than the limit";
  QTest::newRow("header not JSON") << fileImage("{not json}") << QStringList{} << notJson;
  QTest::newRow("header not starting with a brace")
      << fileImage("hello") << QStringList{} << notObject;
  QTest::newRow("header JSON array") << fileImage("[1, 2]") << QStringList{} << notObject;
  QTest::newRow("header JSON string") << fileImage(R"("{}")") << QStringList{} << notObject;
  QTest::newRow("header with trailing text") << fileImage("{} {}") << QStringList{} << notJson;
  QTest::newRow("header cut inside JSON")
      << fileImage(R"({"w":{"dtype":"F32")") << QStringList{} << notJson;

  // Tensor names must be UTF-8 (nlohmann rejects the bytes, so there is no name to report).
  QTest::newRow("non-UTF-8 tensor name")
      << fileImage("{\"w\xff\xfe\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}")
      << QStringList{} << notJson;
  QTest::newRow("overlong UTF-8 in tensor name")
      << fileImage("{\"\xc0\xaf\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}")
      << QStringList{} << notJson;
  QTest::newRow("lone surrogate escape in tensor name")
      << fileImage(R"({"\ud800":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})") << QStringList{}
      << notJson;

  // The entry of one tensor.
  QTest::newRow("entry is a number") << w("5") << QStringList{"w"} << "is not a JSON object";
  QTest::newRow("entry is an array")
      << w(R"(["F32", [2], [0, 8]])") << QStringList{"w"} << "is not a JSON object";
  QTest::newRow("missing dtype") << w(R"({"shape":[2],"data_offsets":[0,8]})") << QStringList{"w"}
                                 << "no dtype string";
  QTest::newRow("dtype not a string") << w(R"({"dtype":4,"shape":[2],"data_offsets":[0,8]})")
                                      << QStringList{"w"} << "no dtype string";
  QTest::newRow("unknown dtype") << w(R"({"dtype":"F128","shape":[2],"data_offsets":[0,8]})")
                                 << QStringList{"w", "F128"} << "unknown dtype";
  QTest::newRow("lower-case dtype") << w(R"({"dtype":"f32","shape":[2],"data_offsets":[0,8]})")
                                    << QStringList{"w", "f32"} << "unknown dtype";
  QTest::newRow("missing shape") << w(R"({"dtype":"F32","data_offsets":[0,8]})") << QStringList{"w"}
                                 << "no shape array";
  QTest::newRow("shape not an array") << w(R"({"dtype":"F32","shape":2,"data_offsets":[0,8]})")
                                      << QStringList{"w"} << "no shape array";
  QTest::newRow("negative dim") << w(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})")
                                << QStringList{"w"} << badDim;
  QTest::newRow("fractional dim") << w(R"({"dtype":"F32","shape":[2.5],"data_offsets":[0,8]})")
                                  << QStringList{"w"} << badDim;
  QTest::newRow("dim written as a float")
      << w(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})") << QStringList{"w"} << badDim;
  QTest::newRow("dim as a string")
      << w(R"({"dtype":"F32","shape":["2"],"data_offsets":[0,8]})") << QStringList{"w"} << badDim;
  QTest::newRow("dim null") << w(R"({"dtype":"F32","shape":[null],"data_offsets":[0,8]})")
                            << QStringList{"w"} << badDim;
  QTest::newRow("dim above 2^62")
      << w(R"({"dtype":"U8","shape":[4611686018427387905],"data_offsets":[0,8]})")
      << QStringList{"w"} << badDim;
  QTest::newRow("dim above 2^64")
      << w(R"({"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,8]})")
      << QStringList{"w"} << badDim;
  QTest::newRow("missing data_offsets")
      << w(R"({"dtype":"F32","shape":[2]})") << QStringList{"w"} << badOffsets;
  QTest::newRow("data_offsets not an array")
      << w(R"({"dtype":"F32","shape":[2],"data_offsets":8})") << QStringList{"w"} << badOffsets;
  QTest::newRow("one data offset")
      << w(R"({"dtype":"F32","shape":[2],"data_offsets":[8]})") << QStringList{"w"} << badOffsets;
  QTest::newRow("three data offsets") << w(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8,8]})")
                                      << QStringList{"w"} << badOffsets;
  QTest::newRow("negative data offset") << w(R"({"dtype":"F32","shape":[2],"data_offsets":[-8,0]})")
                                        << QStringList{"w"} << badOffsets;
  QTest::newRow("fractional data offset")
      << w(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8.0]})") << QStringList{"w"}
      << badOffsets;
  QTest::newRow("begin after end") << w(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})")
                                   << QStringList{"w"} << "end before they begin";

  // Offsets against the data area.
  QTest::newRow("truncated data area")
      << w(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})", QByteArray(10, '\0'))
      << QStringList{"w"} << "[0, 16) outside the data area of 10 bytes";
  QTest::newRow("no data area") << w(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})", {})
                                << QStringList{"w"} << outside;
  QTest::newRow("range beyond the data area")
      << w(R"({"dtype":"F32","shape":[2],"data_offsets":[8,16]})") << QStringList{"w"} << outside;
  QTest::newRow("end offset 2^64-1")
      << w(R"({"dtype":"U8","shape":[1],"data_offsets":[18446744073709551614,18446744073709551615]})")
      << QStringList{"w"} << outside;
  QTest::newRow("empty range beyond the data area")
      << w(R"({"dtype":"U8","shape":[0],"data_offsets":[9,9]})") << QStringList{"w"} << outside;
  QTest::newRow("bad tensor after good ones")
      << fileImage(R"({"good.a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                   R"("good.b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]},)"
                   R"("model.bad":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})",
                   eight)
      << QStringList{"model.bad"} << outside;

  // Ranges against each other and against the shape.
  QTest::newRow("overlapping ranges")
      << fileImage(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                   R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                   QByteArray(12, '\0'))
      << QStringList{"a", "b"} << "overlap";
  QTest::newRow("identical ranges")
      << fileImage(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                   R"("b":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})",
                   eight)
      << QStringList{"a", "b"} << "overlap";
  QTest::newRow("range inside another")
      << fileImage(R"({"outer":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                   R"("inner":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}})",
                   eight)
      << QStringList{"outer", "inner"} << "overlap";
  QTest::newRow("shape larger than range")
      << w(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})") << QStringList{"w"}
      << "shape [3] of F32 (12 bytes) but its data range holds 8 bytes";
  QTest::newRow("shape smaller than range")
      << w(R"({"dtype":"F32","shape":[1],"data_offsets":[0,8]})") << QStringList{"w"}
      << "shape [1] of F32 (4 bytes) but its data range holds 8 bytes";
  QTest::newRow("scalar with an empty range")
      << w(R"({"dtype":"F32","shape":[],"data_offsets":[0,0]})") << QStringList{"w"}
      << "but its data range holds 0 bytes";
  QTest::newRow("shape product overflow")
      << w(R"({"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]})")
      << QStringList{"w"} << "overflows";
  QTest::newRow("shape times element size overflow")
      << w(R"({"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,0]})")
      << QStringList{"w"} << "overflows";
  // (2^61 + 1) x 8 wraps to exactly the 8 bytes of the range without an overflow check.
  QTest::newRow("shape product wrapping to the range")
      << w(R"({"dtype":"U8","shape":[2305843009213693953,8],"data_offsets":[0,8]})")
      << QStringList{"w"} << "overflows";

  // __metadata__.
  QTest::newRow("__metadata__ not an object")
      << fileImage(R"({"__metadata__":["pt"]})") << QStringList{} << "__metadata__ is not";
  QTest::newRow("__metadata__ number value")
      << fileImage(R"({"__metadata__":{"format":"pt","epochs":3}})") << QStringList{"epochs"}
      << "is not a string";
  QTest::newRow("__metadata__ null value")
      << fileImage(R"({"__metadata__":{"note":null}})") << QStringList{"note"} << "is not a string";
  QTest::newRow("__metadata__ nested object")
      << fileImage(R"({"__metadata__":{"config":{"a":"b"}}})") << QStringList{"config"}
      << "is not a string";
  QTest::newRow("__metadata__ array value") << fileImage(R"({"__metadata__":{"tags":["a"]}})")
                                            << QStringList{"tags"} << "is not a string";
}

void TestSafetensors::openRejectsMalformedFile() {
  QFETCH(QByteArray, contents);
  QFETCH(QStringList, names);
  QFETCH(QString, reason);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dir.filePath("model.safetensors");
  QVERIFY(writeFile(path, contents));

  QStringList fragments{path, reason};
  for (const QString& name : names) fragments << "'" + name + "'";
  verifyError(errorFrom([&] { SafetensorsFile::open(path.toStdString()); }), ErrorKind::CorruptFile,
              fragments);
}

void TestSafetensors::maxHeaderBytesIsEnforced_data() {
  QTest::addColumn<int>("limitMinusHeader");
  QTest::addColumn<bool>("accepted");

  QTest::newRow("limit above the header") << 100 << true;
  QTest::newRow("limit equal to the header") << 0 << true;
  QTest::newRow("limit one below the header") << -1 << false;
  QTest::newRow("limit far below the header") << -40 << false;
}

void TestSafetensors::maxHeaderBytesIsEnforced() {
  QFETCH(int, limitMinusHeader);
  QFETCH(bool, accepted);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dir.filePath("model.safetensors");
  const auto bytes = patternBytes(16, 0);
  writeSafetensors(path.toStdString(), {{"w", DType::F32, {4}, bytes}}, {{"format", "pt"}});
  const QByteArray image = readFile(path);
  QVERIFY(image.size() > 8);
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | uint8_t(image[i]);
  QVERIFY(header_bytes > 40);
  const uint64_t limit = header_bytes + limitMinusHeader;

  const auto error = errorFrom([&] { SafetensorsFile::open(path.toStdString(), limit).reset(); });
  if (accepted) {
    QVERIFY2(!error, error ? error->what() : "");
  } else {
    verifyError(error, ErrorKind::CorruptFile,
                {path, "more than the limit of " + QString::number(limit)});
  }
}

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
