// Workflows: graphs of typed nodes. A node schema declares a node type's inputs (links
// from other nodes' outputs), parameters and outputs; a workflow names its nodes, sets
// their parameters and links them. Workflow files are versioned JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln {

// What travels along a link (MODEL ... VIDEO) or what a parameter holds (INT ... FILE).
enum class ValueType {
  Invalid = 0,
  Model,
  Clip,
  Vae,
  Conditioning,
  Latent,
  Image,
  Mask,
  Video,
  Int,
  Float,
  String,
  Bool,
  Enum,
  Seed,
  File,
};
const char* valueTypeName(ValueType type) noexcept;        // "MODEL", "INT", ...
ValueType parseValueType(std::string_view name) noexcept;  // Invalid when unknown

// A parameter's value as a workflow file holds it. INT and SEED hold int64_t; FLOAT holds
// double (an int64_t is accepted); STRING, ENUM and FILE hold strings; BOOL holds bool.
using ParamValue = std::variant<std::monostate, bool, int64_t, double, std::string>;
std::string formatParamValue(const ParamValue& v);  // as a person reads it: 7, 0.5, "euler"

struct ParamSpec {
  std::string name;  // the key in the workflow file: "steps"
  ValueType type = ValueType::Invalid;
  ParamValue default_value;          // monostate: required
  double min = 0, max = 0;           // INT, FLOAT, SEED: the allowed range (min == max: unbounded)
  double step = 0;                   // the editor's increment (0: its own choice)
  std::vector<std::string> choices;  // ENUM
  std::string display_name;          // translatable: "Steps"
  std::string description;
  bool multiline = false;  // STRING: edited in a text box (prompts)

  bool required() const noexcept { return std::holds_alternative<std::monostate>(default_value); }
};

struct InputSpec {
  std::string name;  // "model"
  ValueType type = ValueType::Invalid;
  bool optional = false;
  std::string display_name;
};

struct OutputSpec {
  std::string name;  // "LATENT"
  ValueType type = ValueType::Invalid;
  std::string display_name;
};

struct NodeSchema {
  std::string type;          // "Sampler"
  std::string display_name;  // translatable: "Sampler"
  std::string category;      // "sampling", "loaders", "image", "latent", "conditioning"
  std::string description;
  std::vector<InputSpec> inputs;
  std::vector<ParamSpec> params;
  std::vector<OutputSpec> outputs;
  bool output_node = false;  // saves or shows something: what makes its ancestors run

  const InputSpec* input(std::string_view name) const noexcept;
  const ParamSpec* param(std::string_view name) const noexcept;
  const OutputSpec* output(std::string_view name) const noexcept;
};

// The current workflow file version. Files of older versions are migrated on load; files
// of newer versions are refused with a message saying so.
inline constexpr int kWorkflowVersion = 1;

struct WorkflowNode {
  std::string id;                            // unique in the workflow: "3", "sampler"
  std::string type;                          // a NodeSchema::type
  std::map<std::string, ParamValue> params;  // missing ones take the schema's default
  double x = 0, y = 0;                       // position in the editor
  std::string title;                         // the editor's label; empty: the type's name
};

struct WorkflowLink {
  std::string from_node, from_output;  // a node's output, by the output's name
  std::string to_node, to_input;       // another node's input, by the input's name
};

// A parameter the simple panel shows, under `label`.
struct ExposedParam {
  std::string node, param, label;
};

// A titled frame the editor draws around some nodes; moving it moves them. It does not
// change what the workflow computes.
struct WorkflowGroup {
  std::string title;
  std::vector<std::string> nodes;  // the ids of its nodes
  std::string color;               // "#rrggbb"; empty: the theme's
};

struct Workflow {
  int version = kWorkflowVersion;
  std::vector<WorkflowNode> nodes;
  std::vector<WorkflowLink> links;
  std::vector<ExposedParam> exposed;
  std::vector<WorkflowGroup> groups;

  const WorkflowNode* node(std::string_view id) const noexcept;
  WorkflowNode* node(std::string_view id) noexcept;
};

// The schemas of Kiln's built-in nodes (what Engine::nodeSchemas() lists), for tools that
// check workflows without an engine.
std::vector<NodeSchema> builtinNodeSchemas();

// Parses a workflow file's text. Throws kiln::Error(InvalidWorkflow) for text that is not
// a workflow (bad JSON, wrong field types, a newer version), naming what is wrong; checks
// against the node schemas are validateWorkflow's.
Workflow parseWorkflow(std::string_view json);
// The file text (version, nodes in order, links, exposed parameters, groups), indented.
std::string workflowToJson(const Workflow& workflow);

struct WorkflowProblem {
  std::string node;  // the node it concerns ("" for the workflow as a whole)
  std::string message;
};

// Every problem against `schemas`: unknown node types, duplicate ids, unknown or
// missing parameters, parameters of the wrong type or out of range, unknown enum choices,
// links from or to unknown nodes, outputs or inputs (dangling links), type mismatches,
// inputs linked twice, required inputs not linked, cycles, exposed parameters that do
// not exist, groups naming nodes that do not exist, and a workflow with no output node.
// Empty: the workflow can run.
std::vector<WorkflowProblem> validateWorkflow(const Workflow& workflow,
                                              const std::vector<NodeSchema>& schemas);
// "node 3 (Sampler): steps 0 is below the minimum 1" per problem, one per line.
std::string describeProblems(const std::vector<WorkflowProblem>& problems);

// Applies "NODE.PARAM=VALUE" (NODE is a node's id or its title), converting VALUE to the
// parameter's type. Throws kiln::Error(InvalidArgument) naming what does not exist or
// does not convert.
void setWorkflowParameter(Workflow& workflow, const std::vector<NodeSchema>& schemas,
                          std::string_view assignment);

}  // namespace kiln
