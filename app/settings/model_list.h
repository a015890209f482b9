// The checkpoints the model picker offers: the starter model, then the .safetensors
// files in the configured model folders, including ComfyUI and A1111 model trees.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace kiln::app {

struct ModelChoice {
  QString name;  // "sd_xl_base_1.0" or "subfolder/name"
  QString path;
};

// Looks in each root, its checkpoints/ and Stable-diffusion/ folders (also under
// models/), and one level of subfolders of those; each file once, sorted by name.
QList<ModelChoice> findCheckpoints(const QStringList& roots);

}  // namespace kiln::app
