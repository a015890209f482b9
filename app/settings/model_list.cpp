#include "model_list.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>

namespace kiln::app {

QList<ModelChoice> findCheckpoints(const QStringList& roots) {
  // Flat folders, ComfyUI, A1111 and InvokeAI (models/<base>/main) trees.
  static const QStringList kTrees{"",
                                  "checkpoints",
                                  "models/checkpoints",
                                  "Stable-diffusion",
                                  "models/Stable-diffusion",
                                  "models/sd-1/main",
                                  "models/sd-2/main",
                                  "models/sdxl/main",
                                  "models/sdxl-refiner/main"};
  QList<ModelChoice> found;
  QSet<QString> seen;
  const auto add = [&](const QDir& dir, const QString& prefix) {
    for (const QFileInfo& f : dir.entryInfoList({"*.safetensors"}, QDir::Files | QDir::Readable)) {
      const QString path = f.canonicalFilePath();
      if (path.isEmpty() || seen.contains(path)) continue;
      seen.insert(path);
      found.push_back({prefix + f.completeBaseName(), f.absoluteFilePath()});
    }
  };
  for (const QString& root : roots) {
    if (root.trimmed().isEmpty()) continue;
    for (const QString& tree : kTrees) {
      const QDir dir(tree.isEmpty() ? root : QDir(root).filePath(tree));
      if (!dir.exists()) continue;
      add(dir, {});
      if (tree.isEmpty()) continue;  // a root's own subfolders are other trees, not groups
      for (const QString& sub : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Readable)) {
        const QDir folder(dir.filePath(sub));
        if (folder.exists("model_index.json")) {  // a diffusers folder is one model
          const QString path = QFileInfo(folder.path()).canonicalFilePath();
          if (!path.isEmpty() && !seen.contains(path)) {
            seen.insert(path);
            found.push_back({sub, folder.path()});
          }
          continue;
        }
        add(folder, sub + "/");
      }
    }
  }
  std::sort(found.begin(), found.end(),
            [](const ModelChoice& a, const ModelChoice& b) { return a.name.compare(b.name, Qt::CaseInsensitive) < 0; });
  return found;
}

QSize nativeSize(const QString& model_path) {
  const QFileInfo info(model_path);
  if (info.isDir()) {
    QFile config(QDir(model_path).filePath("unet/config.json"));
    if (!config.open(QIODevice::ReadOnly) || config.size() > (1 << 20)) return {};
    const int sample = QJsonDocument::fromJson(config.readAll()).object().value("sample_size").toInt();
    return sample > 0 ? QSize(sample * 8, sample * 8) : QSize();
  }
  QFile file(model_path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QByteArray length_bytes = file.read(8);
  if (length_bytes.size() != 8) return {};
  quint64 length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(length_bytes[i]);
  if (length < 2 || length > (100u << 20)) return {};
  const QJsonObject header = QJsonDocument::fromJson(file.read(static_cast<qint64>(length))).object();
  if (header.isEmpty()) return {};
  static const QRegularExpression size(R"(^\s*(\d+)\s*x\s*(\d+)\s*$)");
  const auto m = size.match(header.value("__metadata__").toObject().value("modelspec.resolution").toString());
  if (m.hasMatch()) return {m.captured(1).toInt(), m.captured(2).toInt()};
  for (auto it = header.begin(); it != header.end(); ++it)
    if (it.key().startsWith("conditioner.embedders.")) return {1024, 1024};  // SDXL base or refiner
  return {512, 512};
}

}  // namespace kiln::app
