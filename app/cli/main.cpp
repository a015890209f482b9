// kiln-cli: headless access to the Kiln engine.
#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>

#include "../process_env.h"
#include "kiln/build_info.h"
#include "render_command.h"
#include "workflow_command.h"

namespace {

void printUsage(FILE* out) {
  std::fputs(
      "Usage: kiln-cli <command> [options]\n"
      "\n"
      "Commands:\n"
      "  render     render one image from a prompt (kiln-cli render --help)\n"
      "  run        run a workflow file or a picture's workflow (kiln-cli run --help)\n"
      "  validate   check a workflow and print every problem\n"
      "  --version  print the version, the libtorch version, GPU backends and the data folder\n"
      "  --help     print this help\n",
      out);
}

}  // namespace

int main(int argc, char** argv) {
  kiln::app::ensureShortOpenMpSpin(argv);
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName("kiln-cli");
  QCoreApplication::setApplicationVersion(KILN_VERSION);
  const QStringList args = QCoreApplication::arguments();
  if (args.size() < 2) {
    printUsage(stderr);
    return 2;
  }
  const QString command = args.at(1);
  if (command == "--version" || command == "-v") {
    std::fputs(kiln::versionText("kiln-cli").c_str(), stdout);
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    printUsage(stdout);
    return 0;
  }
  if (command == "render") return kiln::cli::runRender(args.mid(1));
  if (command == "run") return kiln::cli::runWorkflowCommand(args.mid(1));
  if (command == "validate") return kiln::cli::runValidateCommand(args.mid(1));
  std::fprintf(stderr, "kiln-cli: unknown command '%s' (try kiln-cli --help)\n",
               qPrintable(command));
  return 2;
}
