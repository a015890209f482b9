#include "jobs/workflow_runner.h"

#include <ATen/Parallel.h>

#include <thread>

#include "core/interrupt.h"
#include "memory/device.h"

namespace kiln::jobs {
namespace {

Event nodeEvent(const std::string& id, NodeState state, std::string message = {}) {
  Event e;
  e.type = EventType::NodeState;
  e.node = id;
  e.node_state = state;
  e.message = std::move(message);
  return e;
}

std::size_t outputIndex(const NodeSchema& schema, const std::string& name) {
  for (std::size_t i = 0; i < schema.outputs.size(); ++i)
    if (schema.outputs[i].name == name) return i;
  throw Error(ErrorKind::Internal, schema.type + " has no output " + name);
}

}  // namespace

void validateWorkflowJob(const Job& job, const NodeLibrary& library) {
  if (!job.workflow) throw Error(ErrorKind::InvalidArgument, "the job has no workflow");
  const std::vector<WorkflowProblem> problems = validateWorkflow(*job.workflow, library.schemas());
  if (!problems.empty())
    throw Error(ErrorKind::InvalidWorkflow,
                "the workflow cannot run:\n" + describeProblems(problems));
}

JobResult runWorkflow(const Job& job, RunEnvironment& env, const NodeLibrary& library,
                      graph::ResultCache& cache, int* failed_stage) {
  validateWorkflowJob(job, library);
  at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  const std::vector<graph::PlannedNode> plan =
      graph::planExecution(*job.workflow, library.schemas(), [&](const graph::PlannedNode& p) {
        const NodeDefinition* def = library.find(p.node->type);
        return def && def->outside_state ? def->outside_state(env) : std::string();
      });
  memory::CpuDevice cpu;
  memory::Device& device = env.device ? *env.device : cpu;

  // What the node cache still holds; the rest runs, each node with a stage of its own
  // kind (named after the node when a kind appears more than once).
  std::vector<std::optional<graph::NodeOutputs>> cached(plan.size());
  std::map<StageKind, int> kinds;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const NodeDefinition* def = library.find(plan[i].node->type);
    if (auto hit = cache.find(plan[i].signature);
        hit && (!def->still_valid || def->still_valid(*hit, env)))
      cached[i] = std::move(hit);
    else if (def->stage != StageKind::Invalid)
      ++kinds[def->stage];
  }
  JobResult result;
  ProgressTracker tracker(env, {StageKind::Invalid, "workflow", 512 * 512, "fp32"});
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (const NodeDefinition* def = library.find(plan[i].node->type); cached[i] && def->reused)
      def->reused(*cached[i], tracker);
  std::vector<int> stage_of(plan.size(), -1);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const NodeDefinition* def = library.find(plan[i].node->type);
    if (cached[i] || def->stage == StageKind::Invalid) continue;
    std::string name = def->stage_name;
    if (kinds[def->stage] > 1)
      name += " (" +
              (plan[i].node->title.empty() ? plan[i].node->type + " " + plan[i].node->id
                                           : plan[i].node->title) +
              ")";
    const int64_t units = def->units ? def->units(plan[i]) : 0;
    stage_of[i] = tracker.add(def->stage, name, def->unit, units, -1, std::max<int64_t>(units, 1));
  }
  for (const graph::PlannedNode& p : plan) env.emit(nodeEvent(p.node->id, NodeState::Queued));
  tracker.plan();

  WorkflowRun run{env, device, tracker, job, result, {}, {}};
  JobBytes bytes(env.job_bytes);
  std::map<std::string, graph::NodeOutputs> values;
  std::map<std::string, const NodeSchema*> schema_of;
  for (const graph::PlannedNode& p : plan) schema_of[p.node->id] = p.schema;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const graph::PlannedNode& p = plan[i];
    core::checkInterrupt();
    if (cached[i]) {
      values[p.node->id] = std::move(*cached[i]);
      env.emit(nodeEvent(p.node->id, NodeState::Cached));
      continue;
    }
    const NodeDefinition* def = library.find(p.node->type);
    NodeCall call{run, p, {}, stage_of[i]};
    for (const auto& [input, source] : p.inputs)
      call.inputs[input] =
          values.at(source.first).at(outputIndex(*schema_of.at(source.first), source.second));
    env.emit(nodeEvent(p.node->id, NodeState::Running));
    try {
      if (call.stage >= 0) tracker.start(call.stage);
      graph::NodeOutputs outputs = def->run(call);
      if (call.stage >= 0) tracker.finish(call.stage);
      for (const graph::Value& v : outputs) bytes.add(v.bytes);
      if (!p.schema->output_node) cache.put(p.signature, outputs);
      values[p.node->id] = std::move(outputs);
    } catch (const std::exception& e) {
      if (failed_stage) *failed_stage = tracker.current();
      env.emit(nodeEvent(p.node->id, NodeState::Failed, e.what()));
      throw;
    }
    env.emit(nodeEvent(p.node->id, NodeState::Done));
  }
  return result;
}

}  // namespace kiln::jobs
