// Number fields that never change what was typed without saying so: a value beyond the
// range is clamped (not cut to its first digits), a size off its grid is snapped, and
// each adjustment is announced with adjusted(). Doubles take scientific notation ("1e3");
// seeds are 64-bit.
#pragma once

#include <QAbstractSpinBox>
#include <QDoubleSpinBox>
#include <QSpinBox>

namespace kiln::ui {

class IntField : public QSpinBox {
  Q_OBJECT

 public:
  explicit IntField(QWidget* parent = nullptr);
  // Values become multiples of `step` (rounded down, at least one step); 0: any value.
  void setSnap(int step) { snap_ = step; }
  int snap() const noexcept { return snap_; }

  QValidator::State validate(QString& text, int& pos) const override;
  void fixup(QString& text) const override;

 Q_SIGNALS:
  // What was typed was changed, and how ("5000 is above the most, 1000: set to 1000").
  void adjusted(const QString& message);

 private:
  int snap_ = 0;
};

class DoubleField : public QDoubleSpinBox {
  Q_OBJECT

 public:
  explicit DoubleField(QWidget* parent = nullptr);

  QValidator::State validate(QString& text, int& pos) const override;
  void fixup(QString& text) const override;
  double valueFromText(const QString& text) const override;

 Q_SIGNALS:
  void adjusted(const QString& message);
};

// A seed: 0 to 2^63 - 1, as the engine takes them.
class SeedField : public QAbstractSpinBox {
  Q_OBJECT

 public:
  explicit SeedField(QWidget* parent = nullptr);

  qint64 value() const noexcept { return value_; }
  void setValue(qint64 value);

  QValidator::State validate(QString& text, int& pos) const override;
  void fixup(QString& text) const override;
  void stepBy(int steps) override;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 Q_SIGNALS:
  void valueChanged(qint64 value);
  void adjusted(const QString& message);

 protected:
  StepEnabled stepEnabled() const override;

 private:
  void takeText();

  qint64 value_ = 0;
};

}  // namespace kiln::ui
