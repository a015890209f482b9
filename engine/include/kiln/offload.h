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

// Host copies of offloaded weights in pinned (page-locked) memory, which the device can
// copy from asynchronously: all of a component's streamed weights, none, or one group at
// a time (a staging copy made just before each transfer).
enum class PinMode { Invalid = 0, Off, On, PerGroup };
const char* pinModeName(PinMode mode) noexcept;
// "off", "on", "per-group"; Invalid for anything else.
PinMode parsePinMode(std::string_view text) noexcept;

struct OffloadSettings {
  OffloadMode mode = OffloadMode::None;              // for every component...
  std::map<std::string, OffloadMode> per_component;  // ...unless named here (see below)
  int blocks_per_group = 1;
  bool streams = false;        // prefetch the next group while the current one runs
  bool record_stream = false;  // requires streams
  // Names here and in per_component match a component's own name ("text_encoder_2"), its
  // model class ("UNetModel") or its role: "unet" (also "transformer", "denoiser") is every
  // family's denoiser, "text_encoder" every text encoder, "vae" the VAE. A component's own
  // name or class wins over its role; `never` comes first.
  std::vector<std::string> never;   // kept resident whatever the mode
  std::vector<std::string> always;  // offloaded even when the mode says none (block level)
  int64_t vae_resident_threshold_bytes = int64_t{1} << 30;  // larger VAEs leave after each call
  PinMode pin = PinMode::On;
  // Pinned memory may take the host memory free when settings are applied, less this.
  int64_t pin_reserve_bytes = int64_t{2} << 30;
  // Device memory kept free for the work beside the weights: room is made for it before
  // models are placed, and balanced mode keeps that much less resident.
  int64_t working_reserve_bytes = 0;

  // Throws kiln::Error(InvalidArgument) for settings that cannot work.
  void validate() const;
};

}  // namespace kiln
