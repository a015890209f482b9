// Runs a workflow job: validates it, plans the nodes that feed an output, takes what the
// node cache still holds, runs the rest in order as the job's stages, and reports each
// node's state (queued, cached, running, done, failed).
#pragma once

#include "graph/result_cache.h"
#include "jobs/render_job.h"
#include "nodes/node_library.h"

namespace kiln::jobs {

// Throws kiln::Error(InvalidWorkflow) listing every problem of an invalid workflow.
void validateWorkflowJob(const Job& job, const NodeLibrary& library);

// Throws what runJob throws; `failed_stage` as there.
JobResult runWorkflow(const Job& job, RunEnvironment& env, const NodeLibrary& library,
                      graph::ResultCache& cache, int* failed_stage = nullptr);

// Runs `workflow` (valid for `library`) for `job` as `layout` lays it out: what runWorkflow
// and the render jobs (runJob) share.
JobResult runGraph(const Job& job, const Workflow& workflow, RunEnvironment& env,
                   const NodeLibrary& library, graph::ResultCache& cache, const GraphLayout& layout,
                   int* failed_stage = nullptr);

}  // namespace kiln::jobs
