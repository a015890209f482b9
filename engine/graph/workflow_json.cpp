// Workflow files: versioned JSON, read strictly (every field's type checked) and written
// in a stable order.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>

#include "kiln/error.h"
#include "kiln/workflow.h"

namespace kiln {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) {
  throw Error(ErrorKind::InvalidWorkflow, "not a valid Kiln workflow: " + what);
}

const json& field(const json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) bad(where + " has no \"" + key + "\"");
  return *it;
}

std::string stringField(const json& object, const char* key, const std::string& where,
                        bool required = true) {
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) bad(where + " has no \"" + key + "\"");
    return {};
  }
  if (!it->is_string()) bad(where + ": \"" + key + "\" must be a string");
  return it->get<std::string>();
}

ParamValue paramFromJson(const json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    bad(where + " is too large");
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  bad(where + " must be a number, a string or true/false");
}

json paramToJson(const ParamValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return nullptr;
}

// Brings a document of an older version to the current one, step by step. Version 1 is
// the first; each later version adds its step here.
void migrate(json& doc, int version) {
  if (version < 1)
    bad("version " + std::to_string(version) + " does not exist (versions start at 1)");
  if (version > kWorkflowVersion)
    bad("it was written by a newer Kiln (workflow version " + std::to_string(version) +
        "; this Kiln reads up to " + std::to_string(kWorkflowVersion) + ")");
  doc["kiln_workflow"] = kWorkflowVersion;
}

}  // namespace

Workflow parseWorkflow(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // syntax errors, and numbers too large for a double
    bad(std::string("the JSON does not parse (") + e.what() + ")");
  }
  if (!doc.is_object()) bad("the document is not a JSON object");
  const auto version = doc.find("kiln_workflow");
  if (version == doc.end() || !version->is_number_integer())
    bad("it has no \"kiln_workflow\" version number (a ComfyUI workflow is imported, not opened)");
  const int64_t number = version->is_number_unsigned() && version->get<uint64_t>() > 1000000
                             ? 1000000
                             : version->get<int64_t>();
  migrate(doc, static_cast<int>(std::clamp<int64_t>(number, -1, 1000000)));

  Workflow w;
  const json& nodes = field(doc, "nodes", "the workflow");
  if (!nodes.is_array()) bad("\"nodes\" must be an array");
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const json& n = nodes[i];
    const std::string where = "node #" + std::to_string(i + 1);
    if (!n.is_object()) bad(where + " is not an object");
    WorkflowNode node;
    node.id = stringField(n, "id", where);
    node.type = stringField(n, "type", where + " ('" + node.id + "')");
    node.title = stringField(n, "title", where, false);
    if (const auto pos = n.find("position"); pos != n.end()) {
      if (!pos->is_array() || pos->size() != 2 || !(*pos)[0].is_number() || !(*pos)[1].is_number())
        bad(where + ": \"position\" must be [x, y]");
      node.x = (*pos)[0].get<double>();
      node.y = (*pos)[1].get<double>();
    }
    if (const auto params = n.find("params"); params != n.end()) {
      if (!params->is_object()) bad(where + ": \"params\" must be an object");
      for (const auto& [key, value] : params->items())
        node.params[key] = paramFromJson(value, "node " + node.id + ": parameter '" + key + "'");
    }
    w.nodes.push_back(std::move(node));
  }
  if (const auto links = doc.find("links"); links != doc.end()) {
    if (!links->is_array()) bad("\"links\" must be an array");
    for (std::size_t i = 0; i < links->size(); ++i) {
      const json& l = (*links)[i];
      const std::string where = "link #" + std::to_string(i + 1);
      if (!l.is_object()) bad(where + " is not an object");
      w.links.push_back({stringField(l, "from", where), stringField(l, "output", where),
                         stringField(l, "to", where), stringField(l, "input", where)});
    }
  }
  if (const auto exposed = doc.find("exposed"); exposed != doc.end()) {
    if (!exposed->is_array()) bad("\"exposed\" must be an array");
    for (std::size_t i = 0; i < exposed->size(); ++i) {
      const json& e = (*exposed)[i];
      const std::string where = "exposed parameter #" + std::to_string(i + 1);
      if (!e.is_object()) bad(where + " is not an object");
      w.exposed.push_back({stringField(e, "node", where), stringField(e, "param", where),
                           stringField(e, "label", where, false)});
    }
  }
  if (const auto groups = doc.find("groups"); groups != doc.end()) {
    if (!groups->is_array()) bad("\"groups\" must be an array");
    for (std::size_t i = 0; i < groups->size(); ++i) {
      const json& g = (*groups)[i];
      const std::string where = "group #" + std::to_string(i + 1);
      if (!g.is_object()) bad(where + " is not an object");
      WorkflowGroup group;
      group.title = stringField(g, "title", where, false);
      group.color = stringField(g, "color", where, false);
      const json& members = field(g, "nodes", where);
      if (!members.is_array()) bad(where + ": \"nodes\" must be an array of node ids");
      for (const json& m : members) {
        if (!m.is_string()) bad(where + ": \"nodes\" must be an array of node ids");
        group.nodes.push_back(m.get<std::string>());
      }
      w.groups.push_back(std::move(group));
    }
  }
  return w;
}

std::string workflowToJson(const Workflow& w) {
  json doc = json::object();
  doc["kiln_workflow"] = kWorkflowVersion;
  json nodes = json::array();
  for (const WorkflowNode& n : w.nodes) {
    json node = json::object();
    node["id"] = n.id;
    node["type"] = n.type;
    if (!n.title.empty()) node["title"] = n.title;
    node["position"] = json::array({n.x, n.y});
    json params = json::object();
    for (const auto& [key, value] : n.params) params[key] = paramToJson(value);
    node["params"] = std::move(params);
    nodes.push_back(std::move(node));
  }
  doc["nodes"] = std::move(nodes);
  json links = json::array();
  for (const WorkflowLink& l : w.links)
    links.push_back({{"from", l.from_node},
                     {"output", l.from_output},
                     {"to", l.to_node},
                     {"input", l.to_input}});
  doc["links"] = std::move(links);
  json exposed = json::array();
  for (const ExposedParam& e : w.exposed)
    exposed.push_back({{"node", e.node}, {"param", e.param}, {"label", e.label}});
  doc["exposed"] = std::move(exposed);
  if (!w.groups.empty()) {
    json groups = json::array();
    for (const WorkflowGroup& g : w.groups) {
      json group = {{"title", g.title}, {"nodes", g.nodes}};
      if (!g.color.empty()) group["color"] = g.color;
      groups.push_back(std::move(group));
    }
    doc["groups"] = std::move(groups);
  }
  // Text that is not UTF-8 (from a command line, say) is written with replacement characters.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace kiln
