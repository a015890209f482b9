#include "output_names.h"

#include <QDir>
#include <QFileInfo>

namespace kiln::app {

QString expandNameTemplate(const QString& name_template, const kiln::RenderParams& p,
                           const QDateTime& when) {
  QString model = QFileInfo(QString::fromStdString(p.model.path)).completeBaseName();
  if (model.isEmpty()) model = QStringLiteral("kiln-starter");
  QString name = name_template;
  name.replace("{date}", when.toString("yyyy-MM-dd"))
      .replace("{time}", when.toString("HHmmss"))
      .replace("{seed}", QString::number(p.sampling.seed))
      .replace("{model}", model)
      .replace("{steps}", QString::number(p.sampling.steps))
      .replace("{width}", QString::number(p.size.width))
      .replace("{height}", QString::number(p.size.height));
  for (QChar& c : name)
    if (c == '/' || c == '\\' || c == ':' || c.category() == QChar::Other_Control) c = '_';
  name = name.trimmed();
  if (name.isEmpty() || name == "." || name == "..") name = QStringLiteral("kiln");
  return name;
}

QString uniqueOutputPath(const QString& folder, const QString& name, int batch) {
  const QDir dir(folder);
  const auto taken = [&](const QString& stem) {
    if (QFileInfo::exists(dir.filePath(stem + ".png"))) return true;
    for (int i = 2; i <= batch; ++i)
      if (QFileInfo::exists(dir.filePath(stem + "-" + QString::number(i) + ".png"))) return true;
    return false;
  };
  QString stem = name;
  for (int n = 2; taken(stem); ++n) stem = name + "_" + QString::number(n);
  return dir.filePath(stem + ".png");
}

}  // namespace kiln::app
