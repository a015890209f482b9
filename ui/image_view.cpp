#include "image_view.h"

#include <QApplication>
#include <QEvent>
#include <QGraphicsPixmapItem>
#include <QKeyEvent>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace kiln::ui {

namespace {
constexpr double kMinZoom = 1.0 / 16, kMaxZoom = 32;
}

ImageView::ImageView(QWidget* parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  item_ = scene()->addPixmap({});
  item_->setTransformationMode(Qt::SmoothTransformation);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setRenderHint(QPainter::SmoothPixmapTransform);
  followTheme();
  qApp->installEventFilter(this);  // the application's palette changes reach the app object
  setMinimumSize(256, 256);
}

bool ImageView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == qApp && event->type() == QEvent::ApplicationPaletteChange) followTheme();
  return QGraphicsView::eventFilter(watched, event);
}

// The application's window colour: a scroll area's own palette may come from the style's
// per-class palettes, which a dark theme does not replace.
void ImageView::followTheme() {
  setBackgroundBrush(QApplication::palette().color(QPalette::Window));
}

void ImageView::setSmoothScaling(bool smooth) {
  smooth_ = smooth;
  updateScaling();
}

// Reduced pictures are always interpolated; enlarged ones only with smooth scaling.
void ImageView::updateScaling() {
  item_->setTransformationMode(zoom() > 1.0 && !smooth_ ? Qt::FastTransformation
                                                        : Qt::SmoothTransformation);
  viewport()->update();
}

void ImageView::setImage(const QImage& image) {
  image_ = image;
  item_->setPixmap(QPixmap::fromImage(image));
  scene()->setSceneRect(item_->boundingRect());
  if (fit_) fitToWindow();
}

double ImageView::zoom() const {
  return transform().m11();
}

void ImageView::zoomBy(double factor) {
  const double target = std::clamp(zoom() * factor, kMinZoom, kMaxZoom);
  fit_ = false;
  setTransform(QTransform::fromScale(target, target));
  updateScaling();  // past 1:1 the pixels are blocks, the way artists inspect detail
  Q_EMIT zoomChanged(target);
}

void ImageView::fitToWindow() {
  fit_ = true;
  if (image_.isNull()) {
    resetTransform();
  } else {
    fitInView(item_, Qt::KeepAspectRatio);  // small pictures are enlarged to the window
    if (zoom() > kMaxZoom) setTransform(QTransform::fromScale(kMaxZoom, kMaxZoom));
  }
  updateScaling();
  Q_EMIT zoomChanged(zoom());
}

void ImageView::actualSize() {
  zoomBy(1.0 / zoom());
}

void ImageView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) return QGraphicsView::wheelEvent(event);
  zoomBy(std::pow(1.25, steps));
  event->accept();
}

void ImageView::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoomBy(1.25);
      break;
    case Qt::Key_Minus:
      zoomBy(1 / 1.25);
      break;
    case Qt::Key_0:
      fitToWindow();
      break;
    case Qt::Key_1:
      actualSize();
      break;
    default:
      QGraphicsView::keyPressEvent(event);
      return;
  }
  event->accept();
}

void ImageView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  if (fit_) fitToWindow();
}

}  // namespace kiln::ui
