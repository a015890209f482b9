// Checking a workflow against the node schemas, and the small helpers around schemas and
// parameter values.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "kiln/error.h"
#include "kiln/workflow.h"

namespace kiln {
namespace {

struct TypeName {
  ValueType type;
  const char* name;
};
constexpr TypeName kTypeNames[] = {
    {ValueType::Model, "MODEL"},   {ValueType::Clip, "CLIP"},
    {ValueType::Vae, "VAE"},       {ValueType::Conditioning, "CONDITIONING"},
    {ValueType::Latent, "LATENT"}, {ValueType::Image, "IMAGE"},
    {ValueType::Mask, "MASK"},     {ValueType::Video, "VIDEO"},
    {ValueType::Int, "INT"},       {ValueType::Float, "FLOAT"},
    {ValueType::String, "STRING"}, {ValueType::Bool, "BOOL"},
    {ValueType::Enum, "ENUM"},     {ValueType::Seed, "SEED"},
    {ValueType::File, "FILE"},
};

template <typename T>
const T* byName(const std::vector<T>& items, std::string_view name) noexcept {
  for (const T& item : items)
    if (item.name == name) return &item;
  return nullptr;
}

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

// The problem with `value` for `spec`, or "" when it fits.
std::string paramProblem(const ParamSpec& spec, const ParamValue& value) {
  const std::string name = quoted(spec.name);
  double number = 0;
  switch (spec.type) {
    case ValueType::Int:
    case ValueType::Seed:
      if (const auto* d = std::get_if<double>(&value);
          d && std::floor(*d) == *d && std::abs(*d) < 9e15) {
        number = *d;
      } else if (const auto* i = std::get_if<int64_t>(&value)) {
        number = static_cast<double>(*i);
      } else {
        return name + " must be a whole number, got " + formatParamValue(value);
      }
      break;
    case ValueType::Float:
      if (const auto* d = std::get_if<double>(&value))
        number = *d;
      else if (const auto* i = std::get_if<int64_t>(&value))
        number = static_cast<double>(*i);
      else
        return name + " must be a number, got " + formatParamValue(value);
      if (!std::isfinite(number)) return name + " must be a finite number";
      break;
    case ValueType::Bool:
      if (!std::holds_alternative<bool>(value))
        return name + " must be true or false, got " + formatParamValue(value);
      return {};
    case ValueType::Enum: {
      const auto* s = std::get_if<std::string>(&value);
      if (!s) return name + " must be one of the choices, got " + formatParamValue(value);
      if (std::find(spec.choices.begin(), spec.choices.end(), *s) == spec.choices.end()) {
        std::string all;
        for (const auto& c : spec.choices) all += (all.empty() ? "" : ", ") + c;
        return name + " is " + quoted(*s) + ", which is not one of: " + all;
      }
      return {};
    }
    case ValueType::String:
    case ValueType::File: {
      const auto* s = std::get_if<std::string>(&value);
      if (!s) return name + " must be text, got " + formatParamValue(value);
      if (spec.type == ValueType::File && s->empty() && spec.required())
        return name + " needs a file";
      return {};
    }
    default:
      return name + " has a type no parameter can have";
  }
  if (spec.min < spec.max && (number < spec.min || number > spec.max))
    return name + " is " + formatParamValue(value) + ", outside " + formatParamValue(spec.min) +
           " to " + formatParamValue(spec.max);
  return {};
}

}  // namespace

const char* valueTypeName(ValueType type) noexcept {
  for (const TypeName& t : kTypeNames)
    if (t.type == type) return t.name;
  return "INVALID";
}

ValueType parseValueType(std::string_view name) noexcept {
  for (const TypeName& t : kTypeNames)
    if (name == t.name) return t.type;
  return ValueType::Invalid;
}

std::string formatParamValue(const ParamValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *d);
    return buf;
  }
  if (const auto* s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  return "nothing";
}

const InputSpec* NodeSchema::input(std::string_view name) const noexcept {
  return byName(inputs, name);
}
const ParamSpec* NodeSchema::param(std::string_view name) const noexcept {
  return byName(params, name);
}
const OutputSpec* NodeSchema::output(std::string_view name) const noexcept {
  return byName(outputs, name);
}

const WorkflowNode* Workflow::node(std::string_view id) const noexcept {
  for (const WorkflowNode& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}
WorkflowNode* Workflow::node(std::string_view id) noexcept {
  for (WorkflowNode& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

std::vector<WorkflowProblem> validateWorkflow(const Workflow& w,
                                              const std::vector<NodeSchema>& schemas) {
  std::vector<WorkflowProblem> problems;
  const auto report = [&](const std::string& node, std::string message) {
    problems.push_back({node, std::move(message)});
  };
  std::map<std::string, const NodeSchema*> schema_of;
  for (const NodeSchema& s : schemas) schema_of[s.type] = &s;
  std::map<std::string, const NodeSchema*> nodes;  // id -> schema (null: unknown type)
  bool any_output = false;

  for (const WorkflowNode& n : w.nodes) {
    if (n.id.empty()) {
      report("", "a " + n.type + " node has no id");
      continue;
    }
    if (nodes.count(n.id)) {
      report(n.id, "the id is used by more than one node");
      continue;
    }
    const auto it = schema_of.find(n.type);
    const NodeSchema* schema = it == schema_of.end() ? nullptr : it->second;
    nodes[n.id] = schema;
    if (!schema) {
      report(n.id, "unknown node type " + quoted(n.type));
      continue;
    }
    any_output = any_output || schema->output_node;
    for (const auto& [key, value] : n.params)
      if (!schema->param(key)) report(n.id, n.type + " has no parameter " + quoted(key));
    for (const ParamSpec& spec : schema->params) {
      const auto p = n.params.find(spec.name);
      if (p == n.params.end()) {
        if (spec.required())
          report(n.id, n.type + ": parameter " + quoted(spec.name) + " is required");
        continue;
      }
      const std::string problem = paramProblem(spec, p->second);
      if (!problem.empty()) report(n.id, n.type + ": " + problem);
    }
  }

  std::map<std::pair<std::string, std::string>, int> linked;  // (node, input) -> count
  std::map<std::string, std::vector<std::string>> edges;      // from -> to, between known nodes
  for (const WorkflowLink& l : w.links) {
    const std::string what = "the link from " + l.from_node + "." + l.from_output + " to " +
                             l.to_node + "." + l.to_input;
    const auto from = nodes.find(l.from_node), to = nodes.find(l.to_node);
    if (from == nodes.end() || to == nodes.end()) {
      report(l.to_node, what + " refers to a node that does not exist (" +
                            (from == nodes.end() ? l.from_node : l.to_node) + ")");
      continue;
    }
    if (!from->second || !to->second) continue;  // unknown type, reported above
    const OutputSpec* out = from->second->output(l.from_output);
    const InputSpec* in = to->second->input(l.to_input);
    if (!out)
      report(l.to_node,
             what + ": " + from->second->type + " has no output " + quoted(l.from_output));
    if (!in)
      report(l.to_node, what + ": " + to->second->type + " has no input " + quoted(l.to_input));
    if (!out || !in) continue;
    if (out->type != in->type)
      report(l.to_node, what + " connects " + valueTypeName(out->type) + " to an input of type " +
                            valueTypeName(in->type));
    if (++linked[{l.to_node, l.to_input}] == 2)
      report(l.to_node, "input " + quoted(l.to_input) + " is linked twice");
    edges[l.from_node].push_back(l.to_node);
  }
  for (const WorkflowNode& n : w.nodes) {
    const auto it = nodes.find(n.id);
    if (it == nodes.end() || !it->second || w.node(n.id) != &n) continue;
    for (const InputSpec& in : it->second->inputs)
      if (!in.optional && !linked.count({n.id, in.name}))
        report(n.id, n.type + ": input " + quoted(in.name) + " (" + valueTypeName(in.type) +
                         ") is not linked");
  }

  // Cycles: depth-first search; a back edge closes one, reported once with its path.
  std::map<std::string, int> state;  // 1: on the stack, 2: done
  std::vector<std::string> stack;
  std::function<void(const std::string&)> visit = [&](const std::string& id) {
    state[id] = 1;
    stack.push_back(id);
    for (const std::string& next : edges[id]) {
      if (state[next] == 1) {
        std::string path;
        for (auto it = std::find(stack.begin(), stack.end(), next); it != stack.end(); ++it)
          path += *it + " -> ";
        report(next, "the links form a cycle: " + path + next);
      } else if (state[next] == 0) {
        visit(next);
      }
    }
    stack.pop_back();
    state[id] = 2;
  };
  for (const auto& [id, schema] : nodes)
    if (state[id] == 0) visit(id);

  for (const ExposedParam& e : w.exposed) {
    const auto it = nodes.find(e.node);
    if (it == nodes.end())
      report(e.node,
             "the exposed parameter " + quoted(e.param) + " belongs to a node that does not exist");
    else if (it->second && !it->second->param(e.param))
      report(e.node, "the exposed parameter " + quoted(e.param) + " is not a parameter of " +
                         it->second->type);
  }
  for (const WorkflowGroup& g : w.groups)
    for (const std::string& member : g.nodes)
      if (!nodes.count(member))
        report(member, "the group " + quoted(g.title) + " names a node that does not exist");
  if (!any_output && !w.nodes.empty())
    report(
        "",
        "nothing would run: the workflow has no output node (SaveImage, SaveVideo, PreviewImage)");
  if (w.nodes.empty()) report("", "the workflow has no nodes");
  return problems;
}

std::string describeProblems(const std::vector<WorkflowProblem>& problems) {
  std::string out;
  for (const WorkflowProblem& p : problems) {
    if (!out.empty()) out += "\n";
    out += p.node.empty() ? p.message : "node " + p.node + ": " + p.message;
  }
  return out;
}

void setWorkflowParameter(Workflow& w, const std::vector<NodeSchema>& schemas,
                          std::string_view assignment) {
  const std::string text(assignment);
  const auto eq = text.find('=');
  const auto dot = eq == std::string::npos ? std::string::npos : text.rfind('.', eq);
  if (eq == std::string::npos || dot == std::string::npos || dot == 0)
    throw Error(ErrorKind::InvalidArgument, "'" + text + "' is not NODE.PARAM=VALUE");
  const std::string node_name = text.substr(0, dot), param = text.substr(dot + 1, eq - dot - 1),
                    value = text.substr(eq + 1);
  WorkflowNode* node = w.node(node_name);
  if (!node) {
    for (WorkflowNode& n : w.nodes)
      if (!n.title.empty() && n.title == node_name) {
        if (node)
          throw Error(ErrorKind::InvalidArgument,
                      "more than one node is titled '" + node_name + "'; use its id");
        node = &n;
      }
  }
  if (!node)
    throw Error(ErrorKind::InvalidArgument, "the workflow has no node '" + node_name + "'");
  const NodeSchema* schema = nullptr;
  for (const NodeSchema& s : schemas)
    if (s.type == node->type) schema = &s;
  const ParamSpec* spec = schema ? schema->param(param) : nullptr;
  if (!spec)
    throw Error(ErrorKind::InvalidArgument,
                "node " + node->id + " (" + node->type + ") has no parameter '" + param + "'");
  const auto fail = [&](const char* what) {
    throw Error(ErrorKind::InvalidArgument,
                node->id + "." + param + " needs " + what + ", got '" + value + "'");
  };
  ParamValue v;
  try {
    std::size_t used = 0;
    switch (spec->type) {
      case ValueType::Int:
      case ValueType::Seed:
        v = static_cast<int64_t>(std::stoll(value, &used));
        if (used != value.size()) fail("a whole number");
        break;
      case ValueType::Float:
        v = std::stod(value, &used);
        if (used != value.size()) fail("a number");
        break;
      case ValueType::Bool:
        if (value == "true" || value == "1" || value == "yes")
          v = true;
        else if (value == "false" || value == "0" || value == "no")
          v = false;
        else
          fail("true or false");
        break;
      default:
        v = value;
    }
  } catch (const std::logic_error&) {  // stoll / stod: no number, or out of range
    fail(spec->type == ValueType::Float ? "a number" : "a whole number");
  }
  const std::string problem = paramProblem(*spec, v);
  if (!problem.empty())
    throw Error(ErrorKind::InvalidArgument, "node " + node->id + ": " + problem);
  node->params[param] = std::move(v);
}

}  // namespace kiln
