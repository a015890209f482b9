// libFuzzer target for workflow files: parsing, validation against a small schema set,
// planning and writing, and the ComfyUI import of the same text. kiln::Error is the only accepted
// way to reject an input; any other exception, a sanitizer report, or a broken invariant below is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "graph/plan.h"
#include "kiln/comfy_import.h"
#include "kiln/error.h"
#include "kiln/workflow.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// Node types shaped like the built-in ones: a source, a pass-through with every kind of
// parameter, and an output.
std::vector<kiln::NodeSchema> schemas() {
  using kiln::ValueType;
  kiln::NodeSchema source{
      "Source", "Source", "test", "d", {}, {}, {{"LATENT", ValueType::Latent, "Latent"}}};
  kiln::ParamSpec n{"n", ValueType::Int, int64_t{1}, 0, 100, 1, {}, "N", "", false};
  kiln::ParamSpec x{"x", ValueType::Float, 0.5, -1, 1, 0, {}, "X", "", false};
  kiln::ParamSpec s{"s", ValueType::String, std::string(), 0, 0, 0, {}, "S", "", true};
  kiln::ParamSpec e{"e", ValueType::Enum, std::string("a"), 0, 0, 0, {"a", "b"}, "E", "", false};
  kiln::ParamSpec b{"b", ValueType::Bool, false, 0, 0, 0, {}, "B", "", false};
  kiln::ParamSpec f{"f", ValueType::File, kiln::ParamValue(), 0, 0, 0, {}, "F", "", false};
  source.params = {n, x, s, e, b};
  kiln::NodeSchema pass{"Pass",
                        "Pass",
                        "test",
                        "d",
                        {{"in", ValueType::Latent, false, "In"}},
                        {n, x, e, f},
                        {{"LATENT", ValueType::Latent, "Latent"}}};
  pass.params.back().default_value = std::string();
  kiln::NodeSchema sink{"Sink", "Sink", "test", "d", {{"in", ValueType::Latent, false, "In"}},
                        {s},    {}};
  sink.output_node = true;
  return {source, pass, sink};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<kiln::NodeSchema> kSchemas = schemas();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The same text as a ComfyUI workflow: imported, or refused with kiln::Error.
  try {
    const kiln::ComfyImport imported = kiln::importComfyWorkflow(text, {});
    (void)kiln::validateWorkflow(imported.workflow, kSchemas);
    require(kiln::parseWorkflow(kiln::workflowToJson(imported.workflow)).nodes.size() ==
            imported.workflow.nodes.size());
  } catch (const kiln::Error& e) {
    require(e.kind() == kiln::ErrorKind::InvalidWorkflow);
  }
  kiln::Workflow w;
  try {
    w = kiln::parseWorkflow(text);
  } catch (const kiln::Error& e) {
    require(e.kind() == kiln::ErrorKind::InvalidWorkflow);
    return 0;
  }
  // What was written reads back as the same workflow.
  const std::string written = kiln::workflowToJson(w);
  kiln::Workflow again;
  try {
    again = kiln::parseWorkflow(written);
  } catch (const kiln::Error&) {
    std::abort();
  }
  require(kiln::workflowToJson(again) == written);
  const auto problems = kiln::validateWorkflow(w, kSchemas);
  (void)kiln::describeProblems(problems);
  if (problems.empty()) {
    // A valid workflow plans: every planned node comes after the nodes it reads.
    const auto plan = kiln::graph::planExecution(w, kSchemas);
    for (std::size_t i = 0; i < plan.size(); ++i)
      for (const auto& [input, source] : plan[i].inputs) {
        bool before = false;
        for (std::size_t j = 0; j < i; ++j) before = before || plan[j].node->id == source.first;
        require(before);
      }
  }
  return 0;
}
