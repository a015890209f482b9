// `kiln-cli render`: parses its arguments and renders one image to a file.
#pragma once

#include <QStringList>

namespace kiln::cli {

// Returns the process exit code: 0 on success, 1 when rendering failed, 2 for bad usage.
int runRender(const QStringList& arguments);

}  // namespace kiln::cli
