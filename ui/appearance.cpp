#include "appearance.h"

#include <QApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>
#include <QTranslator>

#include <memory>

namespace kiln::ui {

namespace {

std::unique_ptr<QTranslator>& translator() {
  static std::unique_ptr<QTranslator> t;
  return t;
}

// Qt's own texts (the Cancel and Apply buttons, file dialogs) in that language.
std::unique_ptr<QTranslator>& qtTranslator() {
  static std::unique_ptr<QTranslator> t;
  return t;
}

void announceLanguageChange() {
  QEvent change(QEvent::LanguageChange);
  QApplication::sendEvent(qApp, &change);
}

struct SystemLook {
  QString style;
  QPalette palette;
};

const SystemLook& systemLook() {
  static const SystemLook look{QApplication::style()->name(), QApplication::palette()};
  return look;
}

QPalette darkPalette() {
  QPalette p;
  const QColor window(45, 45, 48), base(30, 30, 32), text(225, 225, 225), disabled(130, 130, 130);
  const QColor highlight(214, 110, 52);  // the kiln's ember
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::white);
  p.setColor(QPalette::Highlight, highlight);
  p.setColor(QPalette::HighlightedText, Qt::black);
  p.setColor(QPalette::Link, highlight.lighter(130));
  p.setColor(QPalette::Light, QColor(90, 90, 95));
  p.setColor(QPalette::Midlight, QColor(70, 70, 74));
  p.setColor(QPalette::Mid, QColor(62, 62, 66));
  p.setColor(QPalette::Dark, QColor(25, 25, 27));
  p.setColor(QPalette::Shadow, QColor(10, 10, 10));
  for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  return p;
}

}  // namespace

bool setLanguage(const QString& language, const QString& dir) {
  for (auto* t : {&translator(), &qtTranslator()})
    if (*t) {
      QApplication::removeTranslator(t->get());
      t->reset();
    }
  const bool system = language.isEmpty() || language == "system";
  const QLocale locale = system ? QLocale() : QLocale(language);
  if (language == "en" || locale.language() == QLocale::English) {
    // The interface's own strings are English: nothing to install, but widgets still
    // hear that the language changed.
    announceLanguageChange();
    return true;
  }
  auto t = std::make_unique<QTranslator>();
  if (!t->load(locale, "kiln", "_", dir)) {
    announceLanguageChange();
    return system;  // a system language Kiln has no translation for: English, as expected
  }
  auto qt = std::make_unique<QTranslator>();
  if (qt->load(locale, "qtbase", "_", QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
    QApplication::installTranslator(qt.get());
    qtTranslator() = std::move(qt);
  }
  QApplication::installTranslator(t.get());  // sends LanguageChange to every widget
  translator() = std::move(t);
  return true;
}

QString currentLanguage() {
  return translator() ? translator()->language() : QStringLiteral("en");
}

void setTheme(const QString& theme) {
  const SystemLook& system = systemLook();
  if (theme == "dark" || theme == "light") {
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setPalette(theme == "dark" ? darkPalette()
                                             : QApplication::style()->standardPalette());
  } else {
    QApplication::setStyle(QStyleFactory::create(system.style));
    QApplication::setPalette(system.palette);
  }
}

}  // namespace kiln::ui
