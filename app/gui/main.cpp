// kiln: the desktop application.
#include <QApplication>
#include <QIcon>
#include <QLineEdit>

#include <cstdio>
#include <cstring>

#include "../process_env.h"
#include "appearance.h"
#include "first_start_wizard.h"
#include "kiln/build_info.h"
#include "main_window.h"
#include "settings.h"

namespace {

// Answered before Qt starts, so they work without a display.
bool printInfo(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "-v") == 0) {
      std::fputs(kiln::versionText("kiln").c_str(), stdout);
      return true;
    }
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(
          "Usage: kiln [--model FILE] [--no-first-start]\n"
          "Kiln, local image and video generation with diffusion models.\n"
          "\n"
          "  --model FILE       open with this checkpoint chosen (default: the starter model)\n"
          "  --no-first-start   do not show the first-start assistant\n"
          "  --version          print the version, the libtorch version and the GPU backends\n"
          "  --help             print this help\n"
          "\n"
          "Headless rendering: kiln-cli (see kiln-cli --help).\n",
          stdout);
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (printInfo(argc, argv)) return 0;
  kiln::app::ensureShortOpenMpSpin(argv);
  QApplication app(argc, argv);
  QApplication::setApplicationName("Kiln");
  QApplication::setOrganizationName("Kiln");
  QApplication::setApplicationVersion(KILN_VERSION);
  QApplication::setDesktopFileName("org.kiln.Kiln");
  QApplication::setWindowIcon(
      QIcon::fromTheme("org.kiln.Kiln", QIcon(":/icons/org.kiln.Kiln.svg")));
  kiln::app::Settings settings;
  // The language and theme chosen in Preferences, through the same switch Preferences
  // uses, so a later change of language replaces this one.
  kiln::ui::setLanguage(settings.value("appearance/language").toString());
  kiln::ui::setTheme(settings.value("appearance/theme").toString());
  const QStringList args = QApplication::arguments();
  // Before the main window, which starts the engine with the settings the assistant sets.
  if (settings.firstStartDue() && !args.contains("--no-first-start")) {
    kiln::ui::FirstStartWizard* wizard = kiln::ui::FirstStartWizard::detect(settings);
    wizard->exec();
    delete wizard;
  }
  kiln::ui::MainWindow window;
  const int model_arg = static_cast<int>(args.indexOf("--model"));
  if (model_arg > 0 && model_arg + 1 < args.size())
    window.modelEdit()->setText(args.at(model_arg + 1));
  window.show();
  return QApplication::exec();
}
