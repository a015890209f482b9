// The result viewer: the picture fitted to the window (enlarged too) until zoomed; the
// wheel and +/- zoom around the cursor, 0 fits, 1 shows actual pixels; drag to pan.
// Enlarged pictures show their pixels as blocks unless smooth scaling is on.
#pragma once

#include <QGraphicsView>
#include <QImage>

class QGraphicsPixmapItem;

namespace kiln::ui {

class ImageView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit ImageView(QWidget* parent = nullptr);

  void setImage(const QImage& image);
  const QImage& image() const noexcept { return image_; }
  double zoom() const;  // view pixels per image pixel
  bool fitted() const noexcept { return fit_; }

  void zoomBy(double factor);
  void fitToWindow();
  void actualSize();
  // Whether enlarged pictures are interpolated (off: nearest neighbour, pixels as blocks).
  void setSmoothScaling(bool smooth);
  bool smoothScaling() const noexcept { return smooth_; }

 Q_SIGNALS:
  void zoomChanged(double zoom);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void updateScaling();
  void followTheme();

  QImage image_;
  QGraphicsPixmapItem* item_ = nullptr;
  bool fit_ = true;
  bool smooth_ = false;
};

}  // namespace kiln::ui
