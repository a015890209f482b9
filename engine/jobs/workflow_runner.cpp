#include "jobs/workflow_runner.h"

#include <ATen/Parallel.h>

#include <thread>

#include "core/interrupt.h"
#include "memory/device.h"

namespace kiln::jobs {
namespace {

std::size_t outputIndex(const NodeSchema& schema, const std::string& name) {
  for (std::size_t i = 0; i < schema.outputs.size(); ++i)
    if (schema.outputs[i].name == name) return i;
  throw Error(ErrorKind::Internal, schema.type + " has no output " + name);
}

int imageOf(const GraphLayout& layout, const graph::PlannedNode& p) {
  const auto it = layout.image_of.find(p.node->id);
  return it == layout.image_of.end() ? -1 : it->second;
}

// Which stage each planned node runs as (-1: none), and for a stage several nodes share,
// where each node's units start among the stage's.
struct NodeStages {
  std::vector<int> stage;
  std::vector<int64_t> before, total;  // total 0: the node's stage is its own
  std::vector<bool> last;              // the node finishes its stage
};

// The job's stages: one per node that runs and has work to report, named after its kind
// (with its picture's number, or its title where the kind appears more than once); nodes
// the layout lists together share one.
NodeStages planStages(const std::vector<graph::PlannedNode>& plan,
                      const std::vector<std::optional<graph::NodeOutputs>>& cached,
                      const NodeLibrary& library, const GraphLayout& layout,
                      const RunEnvironment& env, ProgressTracker& tracker) {
  const std::size_t n = plan.size();
  std::map<std::string, std::size_t> group_of;
  for (std::size_t g = 0; g < layout.shared_stages.size(); ++g)
    for (const std::string& id : layout.shared_stages[g]) group_of[id] = g;
  std::vector<bool> staged(n, false);
  std::vector<int64_t> units(n, 0);
  std::map<StageKind, int> kinds;
  std::map<std::size_t, int64_t> group_units;
  for (std::size_t i = 0; i < n; ++i) {
    const NodeDefinition* def = library.find(plan[i].node->type);
    staged[i] = !cached[i] && def->stage != StageKind::Invalid &&
                (!def->stage_needed || def->stage_needed(plan[i], env));
    if (!staged[i]) continue;
    units[i] = def->units ? std::max<int64_t>(def->units(plan[i]), 0) : 0;
    if (const auto u = layout.units.find(plan[i].node->id); u != layout.units.end())
      units[i] = u->second;
    if (const auto g = group_of.find(plan[i].node->id); g != group_of.end())
      group_units[g->second] += std::max<int64_t>(units[i], 1);
    if (imageOf(layout, plan[i]) < 0 && !group_of.count(plan[i].node->id)) ++kinds[def->stage];
  }
  NodeStages s{std::vector<int>(n, -1), std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0),
               std::vector<bool>(n, false)};
  std::map<std::size_t, std::vector<std::size_t>> members;  // group -> its staged nodes
  for (std::size_t i = 0; i < n; ++i) {
    if (!staged[i]) continue;
    const NodeDefinition* def = library.find(plan[i].node->type);
    const auto group = group_of.find(plan[i].node->id);
    if (group != group_of.end() && !members[group->second].empty()) {
      s.stage[i] = s.stage[members[group->second].front()];
      members[group->second].push_back(i);
      continue;
    }
    const int image = imageOf(layout, plan[i]);
    std::string name = def->stage_name;
    if (image >= 0 && layout.images > 1)
      name += " image " + std::to_string(image + 1) + " of " + std::to_string(layout.images);
    else if (image < 0 && group == group_of.end() && kinds[def->stage] > 1)
      name += " (" +
              (plan[i].node->title.empty() ? plan[i].node->type + " " + plan[i].node->id
                                           : plan[i].node->title) +
              ")";
    const int64_t total = group != group_of.end() ? group_units[group->second] : units[i];
    s.stage[i] =
        tracker.add(def->stage, name, def->unit, total, image, std::max<int64_t>(total, 1));
    if (group != group_of.end()) members[group->second].push_back(i);
  }
  // A shared stage counts its nodes' units together, each node's from where the last ended.
  for (const auto& [group, nodes] : members) {
    int64_t before = 0;
    for (std::size_t i : nodes) {
      s.before[i] = before;
      s.total[i] = group_units[group];
      before += std::max<int64_t>(units[i], 1);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (s.stage[i] < 0) continue;
    bool later = false;
    for (std::size_t k = i + 1; k < n && !later; ++k) later = s.stage[k] == s.stage[i];
    s.last[i] = !later;
  }
  return s;
}

// After node `i` ran: when Skip was asked and it finished its picture of a batch drawn
// one after another, the later pictures' stages stop counting. True when the run stops.
bool skipsTheRest(std::size_t i, const std::vector<graph::PlannedNode>& plan,
                  const NodeStages& stages, const GraphLayout& layout, RunEnvironment& env,
                  ProgressTracker& tracker) {
  if (!env.skip || !env.skip->load() || layout.images < 2) return false;
  const int image = imageOf(layout, plan[i]);
  if (image < 0 || image + 1 >= layout.images) return false;
  for (std::size_t k = i + 1; k < plan.size(); ++k)
    if (imageOf(layout, plan[k]) <= image) return false;  // its picture is not finished yet
  for (std::size_t k = i + 1; k < plan.size(); ++k)
    if (stages.stage[k] >= 0) {
      tracker.drop(stages.stage[k]);
      break;
    }
  env.emit(logEvent("skipped the batch's remaining " + std::to_string(layout.images - image - 1) +
                    " image(s)"));
  return true;
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
  return runGraph(job, *job.workflow, env, library, cache, GraphLayout{}, failed_stage);
}

JobResult runGraph(const Job& job, const Workflow& workflow, RunEnvironment& env,
                   const NodeLibrary& library, graph::ResultCache& cache, const GraphLayout& layout,
                   int* failed_stage) {
  at::set_num_threads(layout.threads > 0
                          ? layout.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  const std::vector<graph::PlannedNode> plan =
      graph::planExecution(workflow, library.schemas(), [&](const graph::PlannedNode& p) {
        const NodeDefinition* def = library.find(p.node->type);
        return def && def->outside_state ? def->outside_state(env, job) : std::string();
      });
  memory::CpuDevice cpu;
  memory::Device& device = env.device ? *env.device : cpu;

  // What the node cache still holds; the rest runs, in stages.
  std::vector<std::optional<graph::NodeOutputs>> cached(plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const NodeDefinition* def = library.find(plan[i].node->type);
    if (auto hit = cache.find(plan[i].signature);
        hit && (!def->still_valid || def->still_valid(*hit, env)))
      cached[i] = std::move(hit);
  }
  JobResult result;
  ProgressTracker tracker(env, layout.timing);
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (const NodeDefinition* def = library.find(plan[i].node->type); cached[i] && def->reused)
      def->reused(*cached[i], tracker);
  const NodeStages stages = planStages(plan, cached, library, layout, env, tracker);
  for (const graph::PlannedNode& p : plan) env.emit(nodeEvent(p.node->id, NodeState::Queued));
  tracker.plan();

  WorkflowRun run{env, device, tracker, job, result, {}, {}, &layout};
  JobBytes bytes(env.job_bytes);
  std::map<std::string, graph::NodeOutputs> values;
  std::map<std::string, const NodeSchema*> schema_of;
  for (const graph::PlannedNode& p : plan) schema_of[p.node->id] = p.schema;
  std::vector<bool> started(static_cast<std::size_t>(tracker.size()), false);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const graph::PlannedNode& p = plan[i];
    core::checkInterrupt();
    if (cached[i]) {
      values[p.node->id] = std::move(*cached[i]);
      env.emit(nodeEvent(p.node->id, NodeState::Cached));
      continue;
    }
    const NodeDefinition* def = library.find(p.node->type);
    NodeCall call{run, p, {}, stages.stage[i], imageOf(layout, p)};
    for (const auto& [input, source] : p.inputs)
      call.inputs[input] =
          values.at(source.first).at(outputIndex(*schema_of.at(source.first), source.second));
    env.emit(nodeEvent(p.node->id, NodeState::Running));
    try {
      if (const int s = call.stage; s >= 0) {
        if (!started[static_cast<std::size_t>(s)]) tracker.start(s);
        started[static_cast<std::size_t>(s)] = true;
        if (stages.total[i] > 0) tracker.share(s, stages.before[i], stages.total[i]);
      }
      graph::NodeOutputs outputs = def->run(call);
      if (call.stage >= 0 && stages.last[i]) tracker.finish(call.stage);
      for (const graph::Value& v : outputs) bytes.add(v.bytes);
      if (!p.schema->output_node) cache.put(p.signature, outputs);
      values[p.node->id] = std::move(outputs);
    } catch (const std::exception& e) {
      if (failed_stage) *failed_stage = tracker.current();
      env.emit(nodeEvent(p.node->id, NodeState::Failed, e.what()));
      throw;
    }
    env.emit(nodeEvent(p.node->id, NodeState::Done));
    if (skipsTheRest(i, plan, stages, layout, env, tracker)) break;
  }
  return result;
}

}  // namespace kiln::jobs
