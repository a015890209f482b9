#include "workflow_files.h"

#include <QFile>

#include "kiln/comfy_import.h"
#include "kiln/error.h"
#include "kiln/image_io.h"
#include "kiln/video_io.h"

namespace kiln::app {

LoadedWorkflow loadWorkflowText(const std::string& text, const QStringList& model_folders) {
  LoadedWorkflow loaded;
  if (!looksLikeComfyWorkflow(text)) {
    loaded.workflow = parseWorkflow(text);
    loaded.source = QStringLiteral("Kiln");
    return loaded;
  }
  ModelFolders folders;
  for (const QString& d : model_folders) folders.roots.push_back(d.toStdString());
  for (std::string& d : defaultModelFolders().roots) folders.roots.push_back(std::move(d));
  ComfyImport imported = importComfyWorkflow(text, folders);
  loaded.workflow = std::move(imported.workflow);
  loaded.source = QStringLiteral("ComfyUI");
  loaded.format = QString::fromStdString(imported.format);
  for (const std::string& line : imported.unmapped) loaded.notes << QString::fromStdString(line);
  return loaded;
}

LoadedWorkflow loadWorkflowFile(const QString& path, const QStringList& model_folders) {
  if (path.endsWith(".json", Qt::CaseInsensitive)) {
    QFile f(path);
    if (!f.exists())
      throw Error(ErrorKind::FileNotFound, "'" + path.toStdString() + "' does not exist");
    if (!f.open(QIODevice::ReadOnly))
      throw Error(ErrorKind::Io, "cannot read '" + path.toStdString() + "'");
    const QByteArray bytes = f.readAll();
    return loadWorkflowText(std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())),
                            model_folders);
  }
  // A video file's container tags (or a PNG folder's first frame), else a picture's text.
  const std::string file = path.toStdString();
  const std::map<std::string, std::string> texts = videoFormatFor(file) != VideoFormat::Invalid
                                                       ? readVideo(file, 0).metadata
                                                       : readImageText(file);
  if (const auto it = texts.find("kiln_workflow"); it != texts.end())
    return loadWorkflowText(it->second, model_folders);
  for (const char* chunk : {"prompt", "workflow"})  // ComfyUI's API form is the more exact
    if (const auto it = texts.find(chunk); it != texts.end() && looksLikeComfyWorkflow(it->second))
      return loadWorkflowText(it->second, model_folders);
  throw Error(ErrorKind::InvalidWorkflow,
              "'" + path.toStdString() + "' holds no Kiln or ComfyUI workflow");
}

}  // namespace kiln::app
