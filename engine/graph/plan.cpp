#include "graph/plan.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>

#include "kiln/error.h"

namespace kiln::graph {
namespace {

// FNV-1a, 64 bits, as 16 hex digits.
std::string hashText(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The file's identity for caching: its path, size and modification time ("missing" when
// it cannot be read, so the node runs and reports the problem).
std::string fileStamp(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return "missing";
  const auto time = std::filesystem::last_write_time(path, ec);
  if (ec) return "missing";
  return std::to_string(size) + "@" + std::to_string(time.time_since_epoch().count());
}

}  // namespace

std::vector<PlannedNode> planExecution(const Workflow& w, const std::vector<NodeSchema>& schemas,
                                       const OutsideState& outside) {
  std::map<std::string, const NodeSchema*> schema_of;
  for (const NodeSchema& s : schemas) schema_of[s.type] = &s;
  std::map<std::string, PlannedNode> planned;
  for (const WorkflowNode& n : w.nodes) {
    const auto it = schema_of.find(n.type);
    if (it == schema_of.end())
      throw Error(ErrorKind::InvalidWorkflow,
                  "node " + n.id + ": unknown node type '" + n.type + "'");
    PlannedNode& p = planned[n.id];
    p.node = &n;
    p.schema = it->second;
    for (const ParamSpec& spec : p.schema->params) {
      const auto v = n.params.find(spec.name);
      p.params[spec.name] = v == n.params.end() ? spec.default_value : v->second;
    }
  }
  for (const WorkflowLink& l : w.links)
    planned.at(l.to_node).inputs[l.to_input] = {l.from_node, l.from_output};

  // Needed: the output nodes and everything upstream of them.
  std::set<std::string> needed;
  std::vector<std::string> todo;
  for (const WorkflowNode& n : w.nodes)
    if (planned.at(n.id).schema->output_node) todo.push_back(n.id);
  while (!todo.empty()) {
    const std::string id = todo.back();
    todo.pop_back();
    if (!needed.insert(id).second) continue;
    for (const auto& [input, source] : planned.at(id).inputs) todo.push_back(source.first);
  }

  // Kahn's order over the needed nodes, repeatedly taking the first ready node in the
  // workflow's order; signatures follow, since every input is signed before it is read.
  std::vector<PlannedNode> order;
  std::set<std::string> done;
  while (done.size() < needed.size()) {
    bool progressed = false;
    for (const WorkflowNode& n : w.nodes) {
      if (!needed.count(n.id) || done.count(n.id)) continue;
      PlannedNode& p = planned.at(n.id);
      bool ready = true;
      for (const auto& [input, source] : p.inputs) ready = ready && done.count(source.first);
      if (!ready) continue;
      std::string canon = "type=" + n.type + "\n";
      for (const auto& [name, value] : p.params) {
        canon += "param " + name + "=" + formatParamValue(value);
        if (p.schema->param(name)->type == ValueType::File)
          if (const auto* path = std::get_if<std::string>(&value)) canon += " " + fileStamp(*path);
        canon += "\n";
      }
      for (const auto& [input, source] : p.inputs)
        canon += "input " + input + "=" + planned.at(source.first).signature + "." + source.second +
                 "\n";
      if (outside)
        if (const std::string state = outside(p); !state.empty())
          canon += "outside " + state + "\n";
      p.signature = hashText(canon);
      order.push_back(p);
      done.insert(n.id);
      progressed = true;
      break;
    }
    if (!progressed) throw Error(ErrorKind::InvalidWorkflow, "the workflow's links form a cycle");
  }
  return order;
}

}  // namespace kiln::graph
