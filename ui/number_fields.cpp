#include "number_fields.h"

#include <QLineEdit>
#include <QRegularExpression>
#include <QStyle>
#include <QStyleOptionSpinBox>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <optional>

namespace kiln::ui {

namespace {

// A whole number as typed, in the field's locale or plainly; nullopt when it is none.
// Digits too many for 64 bits read as the largest (or smallest) 64-bit value.
std::optional<qlonglong> parseWhole(const QLocale& locale, const QString& text) {
  const QString t = text.trimmed();
  bool ok = false;
  qlonglong v = locale.toLongLong(t, &ok);
  if (!ok) v = t.toLongLong(&ok);
  if (ok) return v;
  static const QRegularExpression digits(QStringLiteral("^[+-]?\\d+$"));
  if (digits.match(t).hasMatch()) return t.startsWith('-') ? LLONG_MIN : LLONG_MAX;
  return std::nullopt;
}

// A start of a number someone is still typing ("", "-", "1e", "2.").
bool partialNumber(const QString& text) {
  static const QRegularExpression partial(QStringLiteral("^[+-]?\\d*([.,]\\d*)?([eE][+-]?\\d*)?$"));
  return partial.match(text.trimmed()).hasMatch();
}

std::optional<double> parseReal(const QLocale& locale, const QString& text) {
  const QString t = text.trimmed();
  bool ok = false;
  double v = locale.toDouble(t, &ok);
  if (!ok) v = QLocale::c().toDouble(t, &ok);
  if (!ok || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

IntField::IntField(QWidget* parent) : QSpinBox(parent) {
  setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
}

QValidator::State IntField::validate(QString& text, int&) const {
  const std::optional<qlonglong> v = parseWhole(locale(), text);
  if (!v)
    return partialNumber(text) && !text.contains(QRegularExpression("[.,eE]"))
               ? QValidator::Intermediate
               : QValidator::Invalid;
  if (*v < minimum() || *v > maximum()) return QValidator::Intermediate;
  if (snap_ > 1 && *v % snap_ != 0) return QValidator::Intermediate;
  return QValidator::Acceptable;
}

void IntField::fixup(QString& text) const {
  const std::optional<qlonglong> typed = parseWhole(locale(), text);
  if (!typed) return;
  qlonglong v = std::clamp<qlonglong>(*typed, minimum(), maximum());
  const QString shown = text.trimmed();
  QString why;
  if (*typed > maximum())
    why = tr("%1 is above the most, %2").arg(shown).arg(maximum());
  else if (*typed < minimum())
    why = tr("%1 is below the least, %2").arg(shown).arg(minimum());
  if (snap_ > 1 && v % snap_ != 0) {
    v = std::max<qlonglong>(v / snap_ * snap_, (minimum() + snap_ - 1) / snap_ * snap_);
    if (why.isEmpty()) why = tr("%1 is not a multiple of %2").arg(shown).arg(snap_);
  }
  text = textFromValue(static_cast<int>(v));
  if (!why.isEmpty())
    Q_EMIT const_cast<IntField*>(this)->adjusted(tr("%1: set to %2").arg(why, text));
}

DoubleField::DoubleField(QWidget* parent) : QDoubleSpinBox(parent) {
  setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
}

QValidator::State DoubleField::validate(QString& text, int&) const {
  const std::optional<double> v = parseReal(locale(), text);
  if (!v) return partialNumber(text) ? QValidator::Intermediate : QValidator::Invalid;
  if (*v < minimum() || *v > maximum()) return QValidator::Intermediate;
  return QValidator::Acceptable;
}

void DoubleField::fixup(QString& text) const {
  const std::optional<double> typed = parseReal(locale(), text);
  if (!typed) return;
  const double v = std::clamp(*typed, minimum(), maximum());
  const QString shown = text.trimmed();
  text = textFromValue(v);
  QString why;
  if (*typed > maximum())
    why = tr("%1 is above the most, %2").arg(shown, textFromValue(maximum()));
  else if (*typed < minimum())
    why = tr("%1 is below the least, %2").arg(shown, textFromValue(minimum()));
  if (!why.isEmpty())
    Q_EMIT const_cast<DoubleField*>(this)->adjusted(tr("%1: set to %2").arg(why, text));
}

double DoubleField::valueFromText(const QString& text) const {
  return std::clamp(parseReal(locale(), text).value_or(value()), minimum(), maximum());
}

SeedField::SeedField(QWidget* parent) : QAbstractSpinBox(parent) {
  lineEdit()->setText(QStringLiteral("0"));
  connect(lineEdit(), &QLineEdit::textEdited, this, &SeedField::takeText);
  connect(this, &QAbstractSpinBox::editingFinished, this, [this] {
    QString text = lineEdit()->text();
    int pos = 0;
    if (validate(text, pos) != QValidator::Acceptable) fixup(text);
    if (validate(text, pos) == QValidator::Acceptable)
      lineEdit()->setText(text);
    else
      lineEdit()->setText(QString::number(value_));
    takeText();
  });
}

void SeedField::setValue(qint64 value) {
  value = std::max<qint64>(value, 0);
  lineEdit()->setText(QString::number(value));
  if (value == value_) return;
  value_ = value;
  Q_EMIT valueChanged(value_);
}

void SeedField::takeText() {
  QString text = lineEdit()->text();
  int pos = 0;
  if (validate(text, pos) != QValidator::Acceptable) return;  // still being typed
  const qint64 v = text.trimmed().toLongLong();
  if (v == value_) return;
  value_ = v;
  Q_EMIT valueChanged(value_);
}

QValidator::State SeedField::validate(QString& text, int&) const {
  const QString t = text.trimmed();
  if (t.isEmpty()) return QValidator::Intermediate;
  static const QRegularExpression digits(QStringLiteral("^\\d+$"));
  if (!digits.match(t).hasMatch()) return QValidator::Invalid;
  bool ok = false;
  (void)t.toLongLong(&ok);
  return ok ? QValidator::Acceptable : QValidator::Intermediate;  // beyond 2^63 - 1: clamped
}

void SeedField::fixup(QString& text) const {
  const QString t = text.trimmed();
  if (t.isEmpty()) {
    text = QString::number(value_);
    return;
  }
  static const QRegularExpression digits(QStringLiteral("^\\d+$"));
  bool ok = false;
  (void)t.toLongLong(&ok);
  if (ok || !digits.match(t).hasMatch()) return;
  text = QString::number(std::numeric_limits<qint64>::max());
  Q_EMIT const_cast<SeedField*>(this)->adjusted(
      tr("%1: set to %2").arg(tr("%1 is above the most, %2").arg(t, text), text));
}

void SeedField::stepBy(int steps) {
  const qint64 max = std::numeric_limits<qint64>::max();
  qint64 v = value_;
  if (steps > 0)
    v = v > max - steps ? max : v + steps;
  else
    v = std::max<qint64>(0, v + steps);
  setValue(v);
  selectAll();
}

QAbstractSpinBox::StepEnabled SeedField::stepEnabled() const {
  if (isReadOnly()) return StepNone;
  StepEnabled e = StepNone;
  if (value_ > 0) e |= StepDownEnabled;
  if (value_ < std::numeric_limits<qint64>::max()) e |= StepUpEnabled;
  return e;
}

QSize SeedField::sizeHint() const {
  ensurePolished();
  const int w = fontMetrics().horizontalAdvance(QString(12, QLatin1Char('9'))) + 4;
  QStyleOptionSpinBox opt;
  initStyleOption(&opt);
  return style()->sizeFromContents(QStyle::CT_SpinBox, &opt,
                                   QSize(w, lineEdit()->sizeHint().height()), this);
}

QSize SeedField::minimumSizeHint() const {
  return sizeHint();
}

}  // namespace kiln::ui
