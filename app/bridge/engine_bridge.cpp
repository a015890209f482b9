#include "engine_bridge.h"

#include <cmath>

#include "kiln/error.h"
#include "kiln/image_io.h"

namespace kiln::app {

QImage toQImage(const kiln::Image& image) {
  QImage out(image.width, image.height, QImage::Format_RGB888);
  for (int y = 0; y < image.height; ++y) {
    uchar* row = out.scanLine(y);
    for (int x = 0; x < image.width * 3; ++x) {
      const float v = image.pixels[static_cast<std::size_t>(y) * image.width * 3 + x];
      row[x] = static_cast<uchar>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
    }
  }
  return out;
}

EngineBridge::EngineBridge(QObject* parent) : QObject(parent), worker_(new QObject) {
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.setObjectName("kiln-engine");
  thread_.start();
}

EngineBridge::~EngineBridge() {
  thread_.quit();
  thread_.wait();
}

bool EngineBridge::generate(const kiln::RenderParams& params) {
  if (busy_) return false;
  busy_ = true;
  // Runs on the worker thread; every result crosses back through a queued call.
  QMetaObject::invokeMethod(
      worker_,
      [this, params] {
        try {
          kiln::RenderResult result = kiln::render(params, [this](const kiln::RenderProgress& p) {
            QMetaObject::invokeMethod(
                this,
                [this, p] {
                  Q_EMIT progress(QString::fromStdString(p.stage), p.done, p.total,
                                  QString::fromStdString(p.unit));
                },
                Qt::QueuedConnection);
          });
          QMetaObject::invokeMethod(
              this,
              [this, result = std::move(result)] {
                busy_ = false;
                last_ = result.image;
                QStringList notices;
                for (const auto& n : result.notices) notices << QString::fromStdString(n);
                Q_EMIT finished(toQImage(result.image),
                                QString::fromStdString(result.image.text.at("parameters")),
                                notices);
              },
              Qt::QueuedConnection);
        } catch (const std::exception& e) {
          const QString message = QString::fromUtf8(e.what());
          QMetaObject::invokeMethod(
              this,
              [this, message] {
                busy_ = false;
                Q_EMIT failed(message);
              },
              Qt::QueuedConnection);
        }
      },
      Qt::QueuedConnection);
  return true;
}

QString EngineBridge::saveLast(const QString& path) const {
  if (last_.empty()) return tr("There is no image to save yet.");
  try {
    kiln::writeImage(path.toStdString(), last_);
    return {};
  } catch (const kiln::Error& e) {
    return QString::fromUtf8(e.what());
  }
}

}  // namespace kiln::app
