// The memory map on the Preferences memory page: for each loaded model, what the settings
// on the page will put on the device before they are applied (Engine::planMemory): a bar
// of the device's memory (resident weights, the largest streamed group, working memory
// for the size below, the working reserve, what is left) and a bar of host memory (the
// weights kept there, of them pinned, against the pinned memory allowed), each
// component's placement, and what does not fit, said before Apply.
#pragma once

#include <QList>
#include <QWidget>

#include "kiln/memory_plan.h"

class QColor;
class QLabel;
class QSpinBox;
class QVBoxLayout;

namespace kiln::ui {

// One horizontal bar of named parts of a whole, drawn in proportion; the parts and their
// sizes are its tooltip. A total smaller than the parts draws them past a red end mark.
class MemoryBar : public QWidget {
  Q_OBJECT

 public:
  struct Part {
    QString name;
    qint64 bytes = 0;
    QColor color;
  };
  explicit MemoryBar(QWidget* parent = nullptr);
  void setParts(QList<Part> parts, qint64 total);
  const QList<Part>& parts() const noexcept { return parts_; }
  qint64 total() const noexcept { return total_; }
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QList<Part> parts_;
  qint64 total_ = 0;
};

class MemoryMapView : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryMapView(QWidget* parent = nullptr);

  void setPlan(const kiln::MemoryPlan& plan);
  // Instead of a plan: why there is none (settings that cannot work).
  void showError(const QString& message);
  // The size the working memory is for; 0 for each model's native size.
  void setSize(int width, int height, int frames);
  int planWidth() const;
  int planHeight() const;
  int planFrames() const;
  // For tests: the bars and the texts shown, per model in order.
  QList<MemoryBar*> deviceBars() const { return device_bars_; }
  QList<MemoryBar*> hostBars() const { return host_bars_; }
  QString shownText() const;
  // Whether every model fits (true with no model loaded).
  bool fits() const noexcept { return fits_; }

 Q_SIGNALS:
  // The size fields changed: the owner asks for a new plan.
  void sizeChanged();

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void rebuild();
  void addModel(const kiln::ModelMemoryPlan& model);
  QLabel* addText(const QString& text, const QColor& color = {});

  QSpinBox* width_ = nullptr;
  QSpinBox* height_ = nullptr;
  QSpinBox* frames_ = nullptr;
  QLabel* size_label_ = nullptr;
  QLabel* frames_label_ = nullptr;
  QWidget* content_ = nullptr;
  QVBoxLayout* content_layout_ = nullptr;
  kiln::MemoryPlan plan_;
  QString error_;
  bool fits_ = true;
  QList<MemoryBar*> device_bars_, host_bars_;
  QList<QLabel*> texts_;
};

}  // namespace kiln::ui
