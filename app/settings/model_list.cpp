#include "model_list.h"

#include <QDir>
#include <QFileInfo>
#include <QSet>

#include <algorithm>

namespace kiln::app {

QList<ModelChoice> findCheckpoints(const QStringList& roots) {
  static const QStringList kTrees{"", "checkpoints", "models/checkpoints", "Stable-diffusion", "models/Stable-diffusion"};
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
      for (const QString& sub : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Readable))
        add(QDir(dir.filePath(sub)), sub + "/");
    }
  }
  std::sort(found.begin(), found.end(),
            [](const ModelChoice& a, const ModelChoice& b) { return a.name.compare(b.name, Qt::CaseInsensitive) < 0; });
  return found;
}

}  // namespace kiln::app
