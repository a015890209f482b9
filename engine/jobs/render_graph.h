// The graph a render job runs: its settings as the template workflow (see
// kiln/render_workflow.h), with one sampler, decode and output chain per picture of the
// batch, drawn one after another.
#pragma once

#include "jobs/render_job.h"
#include "kiln/workflow.h"
#include "nodes/node_library.h"

namespace kiln::jobs {

struct RenderGraph {
  Workflow workflow;
  GraphLayout layout;
};

// `resolved` is the job's settings with the model and the size resolved. Picture i draws
// with seed + i; an init image and a mask come from the job (JobImage, JobMask, then
// VAEEncode); pictures are saved as Job::output_path says (SaveImageAs) or only returned
// (PreviewImage), each carrying its own template workflow where one can hold it.
RenderGraph renderJobGraph(const Job& job, const RenderParams& resolved);

// A video model's render (`resolved.video.frames` frames, its size resolved; the model snaps both
// to its grid): LoadVideoModel (with its VAE, text encoder and flow shift), the job's LoRAs,
// both prompts, EmptyVideoLatent, Sampler, VAEDecode, then SaveVideoAs (a video file, a
// PNG folder or, with no output path, the frames only) or SaveImageAs for a still saved as
// a picture.
RenderGraph renderVideoJobGraph(const Job& job, const RenderParams& resolved);

}  // namespace kiln::jobs
