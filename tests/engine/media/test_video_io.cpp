// Video files through FFmpeg's libraries: each format written and decoded back (frame
// count, size, frame rate, metadata, first frame), cancelled and refused writes leaving
// nothing behind, damaged files refused.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "kiln/error.h"
#include "kiln/image_io.h"
#include "kiln/video_io.h"

namespace fs = std::filesystem;

namespace {

// A moving soft gradient with a square, so frames differ and encode well.
std::vector<kiln::Image> testFrames(int count, int width, int height) {
  std::vector<kiln::Image> frames;
  for (int f = 0; f < count; ++f) {
    kiln::Image im;
    im.width = width;
    im.height = height;
    im.channels = 3;
    im.pixels.resize(static_cast<std::size_t>(width) * height * 3);
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        float* p = &im.pixels[(static_cast<std::size_t>(y) * width + x) * 3];
        const bool square = x >= 8 + 2 * f && x < 24 + 2 * f && y >= 12 && y < 28;
        p[0] = square ? 0.9f : 0.2f + 0.6f * x / width;
        p[1] = square ? 0.1f : 0.3f + 0.4f * y / height;
        p[2] = square ? 0.2f : 0.5f;
      }
    frames.push_back(std::move(im));
  }
  return frames;
}

double meanAbsDiff(const kiln::Image& a, const kiln::Image& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) sum += std::abs(a.pixels[i] - b.pixels[i]);
  return sum / static_cast<double>(a.pixels.size());
}

std::size_t entries(const QString& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.toStdString())) ++n;
  return n;
}

}  // namespace

namespace {

// PNG's CRC-32 (ISO 3309) over a chunk's type and data.
uint32_t crc32(const std::string& bytes) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

}  // namespace

class TestVideoIo : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void formatsByName() {
    QCOMPARE(kiln::videoFormatFor("a.mp4"), kiln::VideoFormat::Mp4);
    QCOMPARE(kiln::videoFormatFor("a.WebM"), kiln::VideoFormat::WebM);
    QCOMPARE(kiln::videoFormatFor("a.mov"), kiln::VideoFormat::Mov);
    QCOMPARE(kiln::videoFormatFor("frames/"), kiln::VideoFormat::PngSequence);
    QCOMPARE(kiln::videoFormatFor("a.gif"), kiln::VideoFormat::Invalid);
  }

  void writesAndReadsBack_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("tolerance");  // mean abs difference of the first frame
    QTest::addColumn<QString>("codec");
    QTest::addColumn<QString>("pixels");
    QTest::newRow("mp4") << "clip.mp4" << 0.02 << "h264"
                         << "yuv420p";
    QTest::newRow("webm") << "clip.webm" << 0.03 << "vp9"
                          << "yuv420p";
    QTest::newRow("mov") << "clip.mov" << 0.01 << "prores"
                         << "yuv422p10le";
    QTest::newRow("png") << "frames/" << 0.003 << "png"
                         << "rgb";
  }
  void writesAndReadsBack() {
    QFETCH(QString, name);
    QFETCH(double, tolerance);
    QFETCH(QString, codec);
    QFETCH(QString, pixels);
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/" + name).toStdString();
    const auto frames = testFrames(9, 64, 48);
    kiln::VideoWriteOptions options;
    options.fps = 16;
    options.metadata["kiln_workflow"] = R"({"nodes": [{"id": "1", "type": "SaveVideo"}]})";
    options.metadata["parameters"] = "a red square, Steps: 4, Seed: 7";
    std::vector<int> reported;
    options.progress = [&](int done, int total) {
      QCOMPARE(total, 9);
      reported.push_back(done);
    };
    kiln::writeVideo(path, frames, options);
    QCOMPARE(reported, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
    QCOMPARE(entries(dir.path()), std::size_t{1});  // no temporary left beside it
    const kiln::Video v = kiln::readVideo(path);
    QCOMPARE(v.width, 64);
    QCOMPARE(v.height, 48);
    QCOMPARE(QString::fromStdString(v.codec), codec);
    QCOMPARE(QString::fromStdString(v.pixel_format), pixels);
    QCOMPARE(static_cast<int>(v.frames.size()), 9);
    QVERIFY2(std::abs(v.fps - 16.0) < 1e-6, std::to_string(v.fps).c_str());
    QCOMPARE(v.metadata.at("kiln_workflow"), options.metadata["kiln_workflow"]);
    QCOMPARE(v.metadata.at("parameters"), options.metadata["parameters"]);
    const double first = meanAbsDiff(v.frames.front(), frames.front());
    QVERIFY2(first < tolerance, ("first frame differs by " + std::to_string(first)).c_str());
    // the last frame is the last one written, not a copy of the first
    QVERIFY(meanAbsDiff(v.frames.back(), frames.back()) <
            meanAbsDiff(v.frames.back(), frames.front()));
    QCOMPARE(static_cast<int>(kiln::readVideo(path, 3).frames.size()), 3);
    const kiln::Video tags = kiln::readVideo(path, 0);  // the metadata alone
    QVERIFY(tags.frames.empty());
    QCOMPARE(tags.metadata.at("kiln_workflow"), options.metadata["kiln_workflow"]);
  }

  void cancelledWriteLeavesNothing_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("mp4") << "clip.mp4";
    QTest::newRow("png") << "frames/";
  }
  void cancelledWriteLeavesNothing() {
    QFETCH(QString, name);
    QTemporaryDir dir;
    kiln::VideoWriteOptions options;
    options.progress = [](int done, int) {
      if (done == 3) throw kiln::Error(kiln::ErrorKind::Cancelled, "interrupted");
    };
    try {
      kiln::writeVideo((dir.path() + "/" + name).toStdString(), testFrames(6, 32, 32), options);
      QFAIL("no error");
    } catch (const kiln::Error& e) {
      QCOMPARE(e.kind(), kiln::ErrorKind::Cancelled);
    }
    QCOMPARE(entries(dir.path()), std::size_t{0});
  }

  void refusesBadWrites() {
    QTemporaryDir dir;
    const auto attempt = [&](const std::string& name, const std::vector<kiln::Image>& frames,
                             double fps) {
      kiln::VideoWriteOptions o;
      o.fps = fps;
      try {
        kiln::writeVideo(dir.path().toStdString() + "/" + name, frames, o);
      } catch (const kiln::Error& e) {
        return e.kind();
      }
      return kiln::ErrorKind::Invalid;
    };
    QCOMPARE(attempt("odd.mp4", testFrames(2, 31, 32), 16), kiln::ErrorKind::InvalidArgument);
    QCOMPARE(attempt("none.mp4", {}, 16), kiln::ErrorKind::InvalidArgument);
    QCOMPARE(attempt("clip.gif", testFrames(2, 32, 32), 16), kiln::ErrorKind::InvalidArgument);
    QCOMPARE(attempt("rate.mp4", testFrames(2, 32, 32), 0), kiln::ErrorKind::InvalidArgument);
    auto mixed = testFrames(2, 32, 32);
    mixed.push_back(testFrames(1, 64, 32).front());
    QCOMPARE(attempt("mixed.webm", mixed, 16), kiln::ErrorKind::InvalidArgument);
    QVERIFY(QDir(dir.path()).mkpath("full"));
    std::ofstream(dir.path().toStdString() + "/full/keep.txt") << "mine";
    QCOMPARE(attempt("full/", testFrames(2, 32, 32), 16), kiln::ErrorKind::InvalidArgument);
    QVERIFY(fs::exists(dir.path().toStdString() + "/full/keep.txt"));
    QCOMPARE(entries(dir.path()), std::size_t{1});  // only "full"
  }

  // A picture whose header claims 100000 x 100000 pixels is refused from the header, with
  // no memory taken for it; its text chunks are read without decoding (as opening a
  // workflow from a picture does).
  void hugePicturesAreRefusedFromTheirHeader() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("huge.png").toStdString();
    {
      std::ofstream out(path, std::ios::binary);
      out.write("\x89PNG\r\n\x1a\n", 8);
      const auto be32 = [](uint32_t v) {
        return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                           static_cast<char>(v >> 8), static_cast<char>(v)};
      };
      const auto chunk = [&](const std::string& type, const std::string& data) {
        const std::string body = type + data;
        out << be32(static_cast<uint32_t>(data.size())) << body << be32(crc32(body));
      };
      chunk("IHDR", be32(100000) + be32(100000) + std::string("\x08\x02\x00\x00\x00", 5));
      chunk("tEXt", std::string("parameters") + '\0' + "a red circle");
      chunk("IDAT", std::string("\x78\x9c", 2));  // where the pixels would start; never reached
      chunk("IEND", "");
    }
    try {
      (void)kiln::readImage(path);
      QFAIL("a 100000 x 100000 picture was decoded");
    } catch (const kiln::Error& e) {
      QVERIFY2(e.kind() == kiln::ErrorKind::InvalidArgument, e.what());
      QVERIFY2(std::string(e.what()).find("100000x100000") != std::string::npos, e.what());
    }
    const auto text = kiln::readImageText(path);
    QCOMPARE(text.count("parameters"), std::size_t{1});
    QCOMPARE(text.at("parameters"), std::string("a red circle"));
  }

  void refusesDamagedFiles() {
    QTemporaryDir dir;
    const std::string path = dir.path().toStdString() + "/clip.mp4";
    kiln::writeVideo(path, testFrames(5, 32, 32), {});
    fs::resize_file(path, 200);  // the header survives, the rest is gone
    QVERIFY_THROWS_EXCEPTION(kiln::Error, kiln::readVideo(path));
    std::ofstream(dir.path().toStdString() + "/noise.mp4") << "not a video at all";
    QVERIFY_THROWS_EXCEPTION(kiln::Error, kiln::readVideo(dir.path().toStdString() + "/noise.mp4"));
    QVERIFY_THROWS_EXCEPTION(kiln::Error,
                             kiln::readVideo(dir.path().toStdString() + "/missing.mp4"));
  }
};

QTEST_GUILESS_MAIN(TestVideoIo)
#include "test_video_io.moc"
