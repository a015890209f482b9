// kiln: the desktop application.
#include <QApplication>
#include <QLineEdit>
#include <QLocale>
#include <QTranslator>

#include "../process_env.h"
#include "main_window.h"
#include "settings.h"

int main(int argc, char** argv) {
  kiln::app::ensureShortOpenMpSpin(argv);
  QApplication app(argc, argv);
  QApplication::setApplicationName("Kiln");
  QApplication::setOrganizationName("Kiln");
  QApplication::setApplicationVersion(KILN_VERSION);
  // The language chosen in Preferences (taking effect at start), else the system's.
  const QString language = kiln::app::Settings().value("appearance/language").toString();
  const QLocale locale = language.isEmpty() || language == "system" ? QLocale() : QLocale(language);
  QTranslator translator;
  if (translator.load(locale, "kiln", "_", ":/i18n")) QApplication::installTranslator(&translator);
  kiln::ui::MainWindow window;
  const QStringList args = QApplication::arguments();
  const int model_arg = static_cast<int>(args.indexOf("--model"));
  if (model_arg > 0 && model_arg + 1 < args.size())
    window.modelEdit()->setText(args.at(model_arg + 1));
  window.show();
  return QApplication::exec();
}
