// How model weights are spread between device and host memory: the settings Preferences
// and kiln-cli expose, applied by the engine's memory module (engine/memory/offload.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

enum class OffloadMode { Invalid = 0, None, Model, GroupBlock, GroupLeaf, Balanced };
const char* offloadModeName(OffloadMode mode) noexcept;
// "none", "model", "group-block", "group-leaf", "balanced"; Invalid for anything else.
OffloadMode parseOffloadMode(std::string_view text) noexcept;

struct OffloadSettings {
  OffloadMode mode = OffloadMode::None;                  // for every component...
  std::map<std::string, OffloadMode> per_component;      // ...unless named here ("unet", "vae")
  int blocks_per_group = 1;
  bool streams = false;        // prefetch the next group while the current one runs
  bool record_stream = false;  // requires streams
  // Matched against the component's name and its model class; `never` first.
  std::vector<std::string> never;   // kept resident whatever the mode
  std::vector<std::string> always;  // offloaded even when the mode says none (block level)
  int64_t vae_resident_threshold_bytes = int64_t{1} << 30;  // larger VAEs leave after each call

  // Throws kiln::Error(InvalidArgument) for settings that cannot work.
  void validate() const;
};

}  // namespace kiln
