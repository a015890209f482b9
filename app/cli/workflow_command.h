// `kiln-cli run` and `kiln-cli validate`: workflows headless.
#pragma once

#include <QStringList>

namespace kiln::cli {

// kiln-cli run WORKFLOW.json|IMAGE.png [--set NODE.PARAM=VALUE ...] [--out DIR]: exit 0 on
// success, 1 when the workflow is invalid or the job failed, 2 for bad usage, 130 when
// interrupted.
int runWorkflowCommand(const QStringList& arguments);

// kiln-cli validate WORKFLOW.json|IMAGE.png: prints every problem; exit 0 when there is
// none, 1 otherwise, 2 for bad usage.
int runValidateCommand(const QStringList& arguments);

}  // namespace kiln::cli
