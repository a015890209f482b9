#include "workflow_command.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <unistd.h>

#include <cstdio>

#include "cli_session.h"
#include "kiln/comfy_import.h"
#include "kiln/error.h"
#include "kiln/image_io.h"
#include "kiln/workflow.h"
#include "workflow_files.h"

namespace kiln::cli {
namespace {

// A workflow file, a ComfyUI workflow (either format), or a picture Kiln or ComfyUI saved
// (the workflow rides in the file's metadata). What a ComfyUI import could not map is
// printed as notes.
Workflow loadWorkflow(const QString& path, const QStringList& model_dirs, const char* command) {
  app::LoadedWorkflow loaded = app::loadWorkflowFile(path, model_dirs);
  if (loaded.source != "Kiln")
    std::fprintf(stderr, "kiln-cli %s: imported a ComfyUI workflow (%s format) of %zu nodes\n",
                 command, qPrintable(loaded.format), loaded.workflow.nodes.size());
  for (const QString& line : loaded.notes) std::fprintf(stderr, "note: %s\n", qPrintable(line));
  return std::move(loaded.workflow);
}

int usage(const char* command, const QString& message) {
  std::fprintf(stderr, "kiln-cli %s: %s\n", command, qPrintable(message));
  return 2;
}

}  // namespace

int runValidateCommand(const QStringList& arguments) {
  QCommandLineParser p;
  p.setApplicationDescription("Check a workflow against Kiln's nodes and print every problem.");
  p.addHelpOption();
  p.addPositionalArgument("workflow",
                          "A workflow .json file (Kiln's or ComfyUI's) or a picture either saved.");
  p.addOption({"models", "Also look for ComfyUI model names in this folder (repeatable).", "dir"});
  if (!p.parse(arguments)) return usage("validate", p.errorText());
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return 0;
  }
  if (p.positionalArguments().size() != 1) return usage("validate", "give one workflow file");
  try {
    const Workflow w =
        loadWorkflow(p.positionalArguments().first(), p.values("models"), "validate");
    const std::vector<WorkflowProblem> problems = validateWorkflow(w, builtinNodeSchemas());
    for (const WorkflowProblem& problem : problems)
      std::printf("%s\n", describeProblems({problem}).c_str());
    if (!problems.empty()) {
      std::fprintf(stderr, "kiln-cli validate: %zu problem(s)\n", problems.size());
      return 1;
    }
    std::fprintf(stderr, "kiln-cli validate: %zu nodes, %zu links, no problems\n", w.nodes.size(),
                 w.links.size());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "kiln-cli validate: %s: %s\n", errorKindName(e.kind()), e.what());
    return 1;
  }
}

int runWorkflowCommand(const QStringList& arguments) {
  QCommandLineParser p;
  p.setApplicationDescription("Run a workflow headless: its SaveImage nodes write into --out.");
  p.addHelpOption();
  p.addPositionalArgument("workflow",
                          "A workflow .json file (Kiln's or ComfyUI's) or a picture either saved.");
  p.addOptions({
      {"models",
       "Also look for ComfyUI model names in this folder (repeatable; also $KILN_MODEL_DIRS).",
       "dir"},
      {"set",
       "Set a node's parameter before running: NODE.PARAM=VALUE (NODE: the node's id or title). "
       "Repeatable.",
       "assignment"},
      {"out", "Folder SaveImage writes into (default: your pictures folder).", "dir"},
  });
  addSessionOptions(p);
  if (!p.parse(arguments)) return usage("run", p.errorText());
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return 0;
  }
  if (p.positionalArguments().size() != 1) return usage("run", "give one workflow file");
  MemorySettings memory;
  try {
    memory = parseMemory(p);
  } catch (const UsageError& e) {
    return usage("run", e.message);
  }
  const QString out = p.isSet("out") ? p.value("out") : picturesFolder();
  if (out.isEmpty()) return usage("run", "--out needs a folder");
  if (!QDir().mkpath(out)) {
    std::fprintf(stderr, "kiln-cli run: cannot create the output folder '%s'\n", qPrintable(out));
    return 1;
  }
  Workflow workflow;
  try {
    workflow = loadWorkflow(p.positionalArguments().first(), p.values("models"), "run");
  } catch (const Error& e) {
    std::fprintf(stderr, "kiln-cli run: %s: %s\n", errorKindName(e.kind()), e.what());
    return 1;
  }
  const std::vector<NodeSchema> schemas = builtinNodeSchemas();
  for (const QString& assignment : p.values("set")) {
    try {
      setWorkflowParameter(workflow, schemas, assignment.toStdString());
    } catch (const Error& e) {
      return usage("run", QString("--set: ") + e.what());
    }
  }
  const bool quiet = p.isSet("quiet"), json = p.isSet("json-events");
  Job job;
  job.workflow = std::make_shared<const Workflow>(std::move(workflow));
  job.output_dir = QFileInfo(out).absoluteFilePath().toStdString();
  const ProgressDisplay::Mode mode =
      quiet || json ? ProgressDisplay::Mode::Silent
                    : (::isatty(::fileno(stderr)) ? ProgressDisplay::Mode::Live
                                                  : ProgressDisplay::Mode::Lines);
  Event end;
  try {
    end = runJob(job, memory, mode, json, p.isSet("memory-report"));
  } catch (const Error& e) {  // an invalid workflow is refused at submit with every problem
    std::fprintf(stderr, "kiln-cli run: %s: %s\n", errorKindName(e.kind()), e.what());
    return 1;
  }
  if (end.type == EventType::JobFinished) {
    if (!quiet && !json) {
      for (const auto& notice : end.notices) std::fprintf(stderr, "note: %s\n", notice.c_str());
      for (const auto& path : end.output_paths) std::fprintf(stderr, "wrote %s\n", path.c_str());
      if (end.output_paths.empty())
        std::fprintf(stderr, "finished: %zu picture(s) shown, none saved\n", end.outputs.size());
    }
    if (!json)
      for (const auto& path : end.output_paths) std::printf("%s\n", path.c_str());
    return 0;
  }
  if (end.type == EventType::JobCancelled) {
    if (!json) std::fprintf(stderr, "kiln-cli run: interrupted; nothing more was saved\n");
    return 130;
  }
  if (!json)
    std::fprintf(stderr, "kiln-cli run: %s: %s\n", errorKindName(end.error), end.message.c_str());
  return 1;
}

}  // namespace kiln::cli
