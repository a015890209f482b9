#include "model_list.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>

namespace kiln::app {

QList<ModelChoice> findCheckpoints(const QStringList& roots) {
  // Flat folders, ComfyUI, A1111 and InvokeAI (models/<base>/main) trees; ComfyUI's
  // diffusion_models/ and unet/ hold lone transformers (FLUX.1, Wan 2.1), whose VAE and
  // text encoders the engine finds in the sibling folders.
  static const QStringList kTrees{"",
                                  "checkpoints",
                                  "models/checkpoints",
                                  "diffusion_models",
                                  "models/diffusion_models",
                                  "unet",
                                  "models/unet",
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
      found.push_back({prefix + f.completeBaseName(), f.absoluteFilePath(),
                       checkpointProblem(f.absoluteFilePath())});
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
            found.push_back({sub, folder.path(), {}});
          }
          continue;
        }
        add(folder, sub + "/");
      }
    }
  }
  std::sort(found.begin(), found.end(), [](const ModelChoice& a, const ModelChoice& b) {
    return a.name.compare(b.name, Qt::CaseInsensitive) < 0;
  });
  return found;
}

int countCheckpoints(const QList<ModelChoice>& choices) {
  return static_cast<int>(std::count_if(choices.begin(), choices.end(),
                                        [](const ModelChoice& c) { return c.problem.isEmpty(); }));
}

QString checkpointProblem(const QString& path) {
  const QFileInfo info(path);
  if (info.isDir())
    return QDir(path).exists("model_index.json")
               ? QString()
               : QCoreApplication::translate("kiln::app::ModelList",
                                             "a folder without model_index.json");
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly))
    return QCoreApplication::translate("kiln::app::ModelList", "it cannot be read");
  const qint64 size = file.size();
  const QByteArray length_bytes = file.read(8);
  if (length_bytes.size() != 8)
    return QCoreApplication::translate("kiln::app::ModelList",
                                       "it is too short to be a safetensors file");
  quint64 length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(length_bytes[i]);
  if (length < 2 || length > (100u << 20) || static_cast<qint64>(length) > size - 8)
    return QCoreApplication::translate(
        "kiln::app::ModelList",
        "it is not a safetensors file (its header length does not fit the file)");
  const QByteArray header = file.read(static_cast<qint64>(length));
  QJsonParseError error;
  const QJsonDocument doc = QJsonDocument::fromJson(header, &error);
  if (error.error != QJsonParseError::NoError || !doc.isObject())
    return QCoreApplication::translate("kiln::app::ModelList",
                                       "its header is not safetensors JSON");
  const qint64 data = size - 8 - static_cast<qint64>(length);
  const QJsonObject tensors = doc.object();
  int count = 0;
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    if (it.key() == QLatin1String("__metadata__")) continue;
    const QJsonArray offsets = it.value().toObject().value("data_offsets").toArray();
    if (offsets.size() != 2 || !it.value().toObject().contains("dtype"))
      return QCoreApplication::translate("kiln::app::ModelList",
                                         "its header is not safetensors JSON");
    if (offsets.at(1).toDouble() > static_cast<double>(data))
      return QCoreApplication::translate(
                 "kiln::app::ModelList",
                 "it is cut short: tensor %1 lies beyond its end (an unfinished download?)")
          .arg(it.key());
    ++count;
  }
  return count == 0 ? QCoreApplication::translate("kiln::app::ModelList", "it holds no tensors")
                    : QString();
}

QSize nativeSize(const QString& model_path) {
  const QFileInfo info(model_path);
  if (info.isDir()) {
    QFile config(QDir(model_path).filePath("unet/config.json"));
    if (!config.open(QIODevice::ReadOnly) || config.size() > (1 << 20)) return {};
    const int sample =
        QJsonDocument::fromJson(config.readAll()).object().value("sample_size").toInt();
    return sample > 0 ? QSize(sample * 8, sample * 8) : QSize();
  }
  QFile file(model_path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QByteArray length_bytes = file.read(8);
  if (length_bytes.size() != 8) return {};
  quint64 length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(length_bytes[i]);
  if (length < 2 || length > (100u << 20)) return {};
  const QJsonObject header =
      QJsonDocument::fromJson(file.read(static_cast<qint64>(length))).object();
  if (header.isEmpty()) return {};
  static const QRegularExpression size(R"(^\s*(\d+)\s*x\s*(\d+)\s*$)");
  const auto m =
      size.match(header.value("__metadata__").toObject().value("modelspec.resolution").toString());
  if (m.hasMatch()) return {m.captured(1).toInt(), m.captured(2).toInt()};
  for (auto it = header.begin(); it != header.end(); ++it)
    if (it.key().startsWith("conditioner.embedders.")) return {1024, 1024};  // SDXL base or refiner
  return {512, 512};
}

}  // namespace kiln::app
