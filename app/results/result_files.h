// Results on disk: the PNGs a job wrote, their metadata (the A1111 parameters text and
// the Kiln workflow), and the render settings read back from the parameters text.
#pragma once

#include <QDateTime>
#include <QList>
#include <QMap>
#include <QString>

#include <optional>

namespace kiln::app {

struct ResultFile {
  QString path;
  QDateTime modified;
  QString parameters;  // the "parameters" text chunk ("" when absent)
  QString workflow;    // the "kiln_workflow" text chunk ("" when absent)
};

// The PNG files of `folder`, newest first, at most `limit`, with their metadata (read
// from the headers, without decoding the pictures).
QList<ResultFile> listResults(const QString& folder, int limit = 500);
ResultFile readResult(const QString& path);
// A PNG's text chunks (tEXt, zTXt, iTXt) by keyword, read from the header only; a
// compressed chunk that is damaged or inflates past 16 MiB is left out.
QMap<QString, QString> readPngText(const QString& path);

// The settings an A1111 "parameters" text records (Kiln writes that format too):
// the prompt lines, "Negative prompt: ...", then "Steps: 20, Sampler: Euler, ...".
struct RecordedSettings {
  QString prompt, negative_prompt;
  QString model, sampler;  // as recorded: the model's name, not its path
  qint64 seed = 0;
  int steps = 0;
  double cfg_scale = 0;
  int width = 0, height = 0;
};
// Empty when the text has no settings line (not a render's parameters).
std::optional<RecordedSettings> parseParametersText(const QString& text);

}  // namespace kiln::app
