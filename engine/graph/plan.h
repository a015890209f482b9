// What a validated workflow runs, in which order, and each node's input signature: the
// key its results are cached under.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/workflow.h"

namespace kiln::graph {

struct PlannedNode {
  const WorkflowNode* node = nullptr;
  const NodeSchema* schema = nullptr;
  // Every parameter of the schema: the workflow's value or the default.
  std::map<std::string, ParamValue> params;
  // Input name -> (source node id, source output name).
  std::map<std::string, std::pair<std::string, std::string>> inputs;
  // The node's type, parameters (a FILE parameter with the file's size and modification
  // time, so an edited file is read again) and its inputs' signatures, hashed.
  std::string signature;
};

// State outside the workflow that a node's result depends on (the files in a folder it
// searches), signed with it and so with everything downstream of it.
using OutsideState = std::function<std::string(const PlannedNode&)>;

// The nodes that feed an output node (the output nodes included), each after the nodes
// it reads from, ties broken by the workflow's order. The workflow must have passed
// validateWorkflow; the plan points into it and into `schemas`.
std::vector<PlannedNode> planExecution(const Workflow& workflow,
                                       const std::vector<NodeSchema>& schemas,
                                       const OutsideState& outside = {});

}  // namespace kiln::graph
