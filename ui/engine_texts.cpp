#include "engine_texts.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <QStringList>

#include <iterator>

#include "kiln/units.h"

namespace kiln::ui {

namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("kiln::ui::EngineTexts", text);
}

// The engine's stage names (jobs/ and the workflow nodes), longest first.
constexpr const char* kStages[] = {
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "Encoding prompt"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "Encoding image"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "Encoding video"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "Loading model"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "Loading VAE"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "Denoising"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "Decoding"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "Saving"),
};

constexpr const char* kUnits[] = {
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "steps"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "tile passes"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "files"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "tensors"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "prompts"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "frames"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "encoders"),
};

constexpr const char* kPlacementPhrases[] = {
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "streams"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "no streams"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "back to the host after each call"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "pinned"),
    QT_TRANSLATE_NOOP("kiln::ui::EngineTexts", "pinned per group"),
};

QString translatedFrom(const char* const* table, std::size_t n, const QString& text) {
  for (std::size_t i = 0; i < n; ++i)
    if (text == QLatin1String(table[i])) return tr(table[i]);
  return text;
}

}  // namespace

QString stageText(const QString& stage) {
  for (const char* known : kStages) {
    const QLatin1String name(known);
    if (!stage.startsWith(name)) continue;
    QString rest = stage.mid(name.size());
    static const QRegularExpression image(QStringLiteral("^ image (\\d+) of (\\d+)"));
    if (const auto m = image.match(rest); m.hasMatch())
      rest = QCoreApplication::translate("kiln::ui::EngineTexts", " image %1 of %2")
                 .arg(m.captured(1), m.captured(2)) +
             rest.mid(m.capturedLength());
    return tr(known) + rest;
  }
  return stage;
}

QString progressAmountText(qint64 done, qint64 total, const QString& unit) {
  if (unit == QLatin1String("bytes"))
    return QString::fromStdString(kiln::formatProgressAmount(done, total, "bytes"));
  const QString amount = QStringLiteral("%1/%2").arg(done).arg(total);
  return unit.isEmpty() ? amount : amount + ' ' + translatedFrom(kUnits, std::size(kUnits), unit);
}

QString placementText(const QString& placement) {
  QStringList phrases;
  for (const QString& phrase : placement.split(QStringLiteral(", "))) {
    static const QRegularExpression blocks(QStringLiteral("^(\\d+) blocks? per group$"));
    static const QRegularExpression resident(QStringLiteral("^(.+) resident$"));
    if (const auto m = blocks.match(phrase); m.hasMatch())
      phrases << QCoreApplication::translate("kiln::ui::EngineTexts", "%1 block(s) per group")
                     .arg(m.captured(1));
    else if (const auto r = resident.match(phrase); r.hasMatch())
      phrases
          << QCoreApplication::translate("kiln::ui::EngineTexts", "%1 resident").arg(r.captured(1));
    else
      phrases << translatedFrom(kPlacementPhrases, std::size(kPlacementPhrases), phrase);
  }
  return phrases.join(QStringLiteral(", "));
}

}  // namespace kiln::ui
