// The interface's language and colour theme, switched while Kiln runs: widgets receive
// a LanguageChange event and set their texts again.
#pragma once

#include <QString>

namespace kiln::ui {

// "system", "en" or a language code with a kiln_<code>.qm in `dir` (the translations
// compiled into the application by default), with Qt's own texts in that language where
// Qt's translations are installed. False when a language asked for by name has no
// translation, in which case the interface is in English (as it is, silently, for a
// system language without one).
bool setLanguage(const QString& language, const QString& dir = QStringLiteral(":/i18n"));
QString currentLanguage();  // "en" when no translation is installed

// "system" (the platform's style and colours), "light" or "dark" (Fusion with a light or
// dark palette).
void setTheme(const QString& theme);

}  // namespace kiln::ui
