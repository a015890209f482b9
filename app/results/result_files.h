// Results on disk: the PNGs and videos a job wrote, their metadata (the A1111 parameters text and
// the Kiln workflow), and the render settings read back from the parameters text.
#pragma once

#include <QDateTime>
#include <QList>
#include <QMap>
#include <QString>

#include <optional>

class QImage;

namespace kiln::app {

struct ResultFile {
  QString path;
  QDateTime modified;
  QString parameters;  // the "parameters" text chunk ("" when absent)
  QString workflow;    // the "kiln_workflow" text chunk ("" when absent)
};

// The PNG and video files of `folder`, newest first, at most `limit`, with their metadata (read
// from the headers, without decoding the pictures).
QList<ResultFile> listResults(const QString& folder, int limit = 500);
// A picture's text chunks, or a video's container tags (MP4, WebM, MOV; a PNG folder's
// first frame).
ResultFile readResult(const QString& path);
// A picture scaled to fit `side` x `side`, or a video's first frame; null when unreadable.
QImage readThumbnail(const QString& path, int side);
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
