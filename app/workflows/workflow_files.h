// Reading workflows from files: Kiln workflow files, ComfyUI workflows (API and UI
// formats) and pictures and videos that carry either in their metadata. Shared by kiln-cli and
// the desktop app.
#pragma once

#include <QString>
#include <QStringList>

#include "kiln/workflow.h"

namespace kiln::app {

struct LoadedWorkflow {
  kiln::Workflow workflow;
  QString source;     // "Kiln" or "ComfyUI"
  QString format;     // a ComfyUI workflow's: "api" or "ui"
  QStringList notes;  // what a ComfyUI import could not map, one line each
};

// Model and image names of ComfyUI workflows resolve in `model_folders` and then in the
// default model folders. Throws kiln::Error (FileNotFound, Io, InvalidWorkflow, ...)
// with a message naming the file.
LoadedWorkflow loadWorkflowFile(const QString& path, const QStringList& model_folders);

// The same from text already read (a file's or a picture's "kiln_workflow", "prompt" or
// "workflow" metadata).
LoadedWorkflow loadWorkflowText(const std::string& text, const QStringList& model_folders);

}  // namespace kiln::app
