#include "sampling/sampler_names.h"

#include "kiln/error.h"

namespace kiln::sampling {

namespace {

struct NamedSampler {
  const char* name;
  const char* label;
  SamplerKind kind;
};
constexpr NamedSampler kSamplers[] = {
    {"euler", "Euler", SamplerKind::Euler},
    {"euler_ancestral", "Euler a", SamplerKind::EulerAncestral},
    {"heun", "Heun", SamplerKind::Heun},
    {"dpm_2", "DPM2", SamplerKind::Dpm2},
    {"dpmpp_2m", "DPM++ 2M", SamplerKind::DpmPP2M},
    {"dpmpp_2m_sde", "DPM++ 2M SDE", SamplerKind::DpmPP2MSde},
    {"dpmpp_sde", "DPM++ SDE", SamplerKind::DpmPPSde},
    {"ddim", "DDIM", SamplerKind::Ddim},
    {"lcm", "LCM", SamplerKind::Lcm},
    {"uni_pc", "UniPC", SamplerKind::UniPC},
    {"uni_pc_bh2", "UniPC (bh2)", SamplerKind::UniPCBh2},
};

struct NamedSchedule {
  const char* name;
  Schedule schedule;
};
constexpr NamedSchedule kSchedules[] = {
    {"normal", Schedule::Normal},           {"karras", Schedule::Karras},
    {"exponential", Schedule::Exponential}, {"simple", Schedule::Simple},
    {"sgm_uniform", Schedule::SgmUniform},  {"ddim_uniform", Schedule::DdimUniform},
    {"diffusers", Schedule::Diffusers},
};

}  // namespace

const std::vector<std::string>& scheduleNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& s : kSchedules) n.emplace_back(s.name);
    return n;
  }();
  return names;
}

Schedule parseSchedule(const std::string& name) {
  for (const auto& s : kSchedules)
    if (name == s.name) return s.schedule;
  std::string all;
  for (const auto& n : scheduleNames()) all += (all.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::InvalidArgument, "unknown schedule '" + name + "' (Kiln has " + all + ")");
}

const std::vector<std::string>& samplerNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& s : kSamplers) n.emplace_back(s.name);
    return n;
  }();
  return names;
}

SamplerKind parseSampler(const std::string& name) {
  for (const auto& s : kSamplers)
    if (name == s.name) return s.kind;
  std::string all;
  for (const auto& n : samplerNames()) all += (all.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::InvalidArgument, "unknown sampler '" + name + "' (Kiln has " + all + ")");
}

std::string samplerLabel(SamplerKind kind) {
  for (const auto& s : kSamplers)
    if (s.kind == kind) return s.label;
  return "?";
}

std::string a1111SamplerName(SamplerKind kind, Schedule schedule) {
  std::string name = samplerLabel(kind);
  if (schedule == Schedule::Karras) name += " Karras";
  if (schedule == Schedule::Exponential) name += " Exponential";
  return name;
}

bool addsNoise(SamplerKind kind) {
  return kind == SamplerKind::EulerAncestral || kind == SamplerKind::DpmPP2MSde ||
         kind == SamplerKind::DpmPPSde || kind == SamplerKind::Lcm;
}

}  // namespace kiln::sampling
