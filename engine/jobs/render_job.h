// A render job (kiln::render, kiln-cli render, a job without a workflow): its settings
// checked, then drawn as its template workflow (render_graph.h) by the workflow runner.
#pragma once

#include <string>

#include "nodes/model_loading.h"
#include "nodes/node_library.h"
#include "nodes/run_environment.h"

namespace kiln::jobs {

// The node layer's names the job layer uses.
using nodes::builtinNodes;
using nodes::checkComputeDtype;
using nodes::computeDtypeName;
using nodes::computeScalarType;
using nodes::GraphLayout;
using nodes::hasImage;
using nodes::JobBytes;
using nodes::JobResult;
using nodes::LoadedModel;
using nodes::logEvent;
using nodes::modelKey;
using nodes::NodeCall;
using nodes::NodeDefinition;
using nodes::nodeEvent;
using nodes::NodeLibrary;
using nodes::numberedPath;
using nodes::ProgressTracker;
using nodes::RunEnvironment;
using nodes::TimingKey;
using nodes::WorkflowRun;

// Throws kiln::Error(InvalidArgument) for parameters that can never work.
void validateJob(const Job& job);

// The workflow (JSON) that draws `image`, one picture of the render asked with `asked`,
// for the picture to carry; empty where a workflow cannot hold its settings yet.
std::string drawingWorkflow(const RenderParams& asked, const RenderParams& image);

// Runs a render job (kiln::render, kiln-cli render, Engine::submit without a workflow) as
// its template workflow (see render_graph.h), a video model's as the video template.
// Throws kiln::Error (Cancelled when interrupted) or whatever libtorch throws (see
// core::rethrowAsError). `failed_stage` receives the index of the stage that was running when
// it threw (-1 outside any stage).
JobResult runJob(const Job& job, RunEnvironment& env, int* failed_stage = nullptr);

}  // namespace kiln::jobs
