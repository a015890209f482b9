// The results the gallery lists: pictures and videos with their settings and thumbnails.
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>

#include <map>
#include <string>

#include "engine_bridge.h"
#include "kiln/error.h"
#include "kiln/video_io.h"
#include "result_files.h"

namespace kiln::app {

ResultFile readResult(const QString& path) {
  ResultFile r;
  r.path = path;
  r.modified = QFileInfo(path).lastModified();
  if (kiln::videoFormatFor(path.toStdString()) != kiln::VideoFormat::Invalid) {
    try {
      const std::map<std::string, std::string> tags =
          kiln::readVideo(path.toStdString(), 0).metadata;
      const auto text = [&](const char* key) {
        const auto it = tags.find(key);
        return it == tags.end() ? QString() : QString::fromStdString(it->second);
      };
      r.parameters = text("parameters");
      r.workflow = text("kiln_workflow");
    } catch (const kiln::Error&) {  // unreadable: listed without settings
    }
    return r;
  }
  const QMap<QString, QString> texts = readPngText(path);
  r.parameters = texts.value("parameters");
  r.workflow = texts.value("kiln_workflow");
  return r;
}

QImage readThumbnail(const QString& path, int side) {
  if (kiln::videoFormatFor(path.toStdString()) != kiln::VideoFormat::Invalid) {
    try {
      const kiln::Video video = kiln::readVideo(path.toStdString(), 1);
      if (video.frames.empty()) return {};
      return toQImage(video.frames.front())
          .scaled(side, side, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    } catch (const kiln::Error&) {
      return {};
    }
  }
  QImageReader reader(path);
  const QSize size = reader.size();
  if (size.isValid()) reader.setScaledSize(size.scaled(side, side, Qt::KeepAspectRatio));
  return reader.read();
}

QList<ResultFile> listResults(const QString& folder, int limit) {
  QFileInfoList files = QDir(folder).entryInfoList({"*.png", "*.PNG", "*.mp4", "*.webm", "*.mov"},
                                                   QDir::Files | QDir::Readable, QDir::Time);
  QList<ResultFile> results;
  for (const QFileInfo& f : files) {
    if (results.size() >= limit) break;
    results.push_back(readResult(f.absoluteFilePath()));
  }
  return results;
}

}  // namespace kiln::app
