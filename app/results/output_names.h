// Where results are saved: file names from the template in Preferences, never
// overwriting an earlier result.
#pragma once

#include <QDateTime>
#include <QString>

#include "kiln/render.h"

namespace kiln::app {

// Fills in {date} (2026-12-03), {time} (143502), {seed}, {model} (the model file's base
// name), {steps}, {width} and {height}; other text is kept, and characters that cannot be
// in a file name become '_'. Never empty.
QString expandNameTemplate(const QString& name_template, const kiln::RenderParams& params,
                           const QDateTime& when);

// "<folder>/<name>.png", or "<folder>/<name>_2.png" and so on when that file (or one of
// the batch's "<name>-<i>.png" siblings) already exists.
QString uniqueOutputPath(const QString& folder, const QString& name, int batch);

}  // namespace kiln::app
