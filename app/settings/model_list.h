// The checkpoints the model picker offers: the starter model, then the .safetensors
// files in the configured model folders, including ComfyUI and A1111 model trees.
#pragma once

#include <QList>
#include <QSize>
#include <QString>
#include <QStringList>

namespace kiln::app {

struct ModelChoice {
  QString name;  // "sd_xl_base_1.0" or "subfolder/name"
  QString path;
  QString problem;  // why the file is not a usable checkpoint ("": it looks like one)
};

// Why `path` cannot be a checkpoint, from its header only (cheap enough for listing):
// too short, a header that is not safetensors JSON, no tensors, or tensors beyond the end
// of the file (a partial download). "" for a file that looks right and for a diffusers
// folder with model_index.json.
QString checkpointProblem(const QString& path);

// Looks in each root, its checkpoints/ and Stable-diffusion/ folders (also under
// models/), InvokeAI's models/<base>/main folders, and one level of subfolders of those
// (a subfolder holding model_index.json is one diffusers model); each file once, sorted by
// name, with its problem when its header shows it is no checkpoint.
QList<ModelChoice> findCheckpoints(const QStringList& roots);
// The usable ones among them (what the first-start assistant counts).
int countCheckpoints(const QList<ModelChoice>& choices);

// The picture size a checkpoint was trained at, read from its header only: the file's
// "modelspec.resolution", else 1024 for SDXL layouts and 512 for SD 1.x; for a diffusers
// folder its UNet's sample_size x 8. Invalid when the file cannot be read as a checkpoint.
QSize nativeSize(const QString& model_path);

}  // namespace kiln::app
