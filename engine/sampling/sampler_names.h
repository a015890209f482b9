// The samplers and schedules by name (ComfyUI's names), without libtorch: workflow import
// and validation use these too.
#pragma once

#include <string>
#include <vector>

namespace kiln::sampling {

enum class SamplerKind {
  Euler,
  EulerAncestral,
  Heun,
  Dpm2,
  DpmPP2M,
  DpmPP2MSde,
  DpmPPSde,
  Ddim,
  Lcm,
  UniPC,     // UniPC multistep, B(h) = h (bh1), order up to 3: ComfyUI's uni_pc
  UniPCBh2,  // the same with B(h) = e^h - 1: ComfyUI's uni_pc_bh2
};
SamplerKind parseSampler(const std::string& name);  // throws kiln::Error(InvalidArgument)
const std::vector<std::string>& samplerNames();     // "euler", "euler_ancestral", ...
std::string samplerLabel(SamplerKind kind);         // as A1111 names it: "DPM++ 2M", ...
bool addsNoise(SamplerKind kind);

enum class Schedule {
  Normal,       // timesteps evenly spaced from the last to the first, sigma by log-interpolation
  Karras,       // Karras et al. (2022), rho = 7
  Exponential,  // evenly spaced in log sigma
  Simple,       // every (1000 / steps)-th entry of the table, from the top
  SgmUniform,   // like normal over steps + 1 points, the last dropped (SGM's uniform spacing)
  DdimUniform,  // DDIM's integer timestep stride (1000 // steps) from timestep 1
  Diffusers,    // the model's scheduler config as diffusers' EulerDiscreteScheduler computes it
};
Schedule parseSchedule(const std::string& name);  // throws kiln::Error(InvalidArgument)
const std::vector<std::string>& scheduleNames();  // in the order the editor lists them

// The name A1111 writes in a picture's parameters: "DPM++ 2M Karras".
std::string a1111SamplerName(SamplerKind kind, Schedule schedule);

}  // namespace kiln::sampling
