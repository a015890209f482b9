// The Qt side of the engine: renders run on a worker thread; results and progress come
// back to the GUI thread by queued signals only, so the GUI never waits on the engine.
#pragma once

#include <QImage>
#include <QObject>
#include <QStringList>
#include <QThread>

#include "kiln/render.h"

namespace kiln::app {

class EngineBridge : public QObject {
  Q_OBJECT

 public:
  explicit EngineBridge(QObject* parent = nullptr);
  ~EngineBridge() override;

  bool busy() const noexcept { return busy_; }
  // Starts a render on the worker thread; ignored (returns false) while one runs.
  bool generate(const kiln::RenderParams& params);
  // Writes the last result (with its metadata) atomically. Returns an error message or "".
  QString saveLast(const QString& path) const;

 Q_SIGNALS:
  void progress(const QString& stage, qint64 done, qint64 total, const QString& unit);
  void finished(const QImage& image, const QString& parameters, const QStringList& notices);
  void failed(const QString& message);

 private:
  QThread thread_;
  QObject* worker_ = nullptr;  // lives on thread_
  bool busy_ = false;
  kiln::Image last_;
};

// Interleaved float RGB in [0, 1] -> QImage (RGB888).
QImage toQImage(const kiln::Image& image);

}  // namespace kiln::app
