// LoRA requests and what applying them did: the part of the LoRA module the app, the
// command line and workflows see.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln {

// How LoRAs reach the weights. Merge: each patched weight is rebuilt as original plus
// differences (no cost per step). Hook: weights stay untouched and each patched layer adds
// the LoRA's term in its forward (strength may change per step). Auto: merge when the
// weights are resident and no strength changes over the steps, hook otherwise.
enum class LoraMode { Invalid = 0, Auto, Merge, Hook };
const char* loraModeName(LoraMode mode) noexcept;
LoraMode parseLoraMode(const std::string& text) noexcept;  // Invalid when unknown

// From fraction `at` of the sampling steps on, the denoiser's strength is `strength`.
struct LoraKeyframe {
  double at = 0;
  double strength = 0;
  bool operator==(const LoraKeyframe&) const = default;
};

struct LoraSpec {
  LoraSpec() = default;
  LoraSpec(std::string file, double unet = 1.0, double text = 1.0,
           std::vector<LoraKeyframe> frames = {})
      : path(std::move(file)),
        unet_strength(unet),
        text_strength(text),
        keyframes(std::move(frames)) {}

  std::string path;            // a .safetensors LoRA (kohya, PEFT, diffusers, LoHa, LoKr, full)
  double unet_strength = 1.0;  // the denoiser's, before the first keyframe
  double text_strength = 1.0;  // the text encoders'
  std::vector<LoraKeyframe> keyframes;  // ascending `at`; needs hook mode

  // The denoiser's strength at `progress` (step / steps).
  double unetStrengthAt(double progress) const;
  bool operator==(const LoraSpec&) const = default;
};

// "FILE[:STRENGTH[:TEXT_ENCODER_STRENGTH]]"; the text strength defaults to the first.
// STRENGTH may be a schedule "1,40%=0.3" (1 until 40% of the steps, 0.3 from there),
// in which case the text encoders take its first value. Throws kiln::Error(
// InvalidArgument) for an empty path, a strength that is not a finite number, or
// keyframes out of order or outside 0-100%.
LoraSpec parseLoraSpec(const std::string& text);

// Keyframes alone, as a schedule's tail: "40%=0.3,80%=0" (empty: none); throws as
// parseLoraSpec does. formatLoraKeyframes writes them back in that form.
std::vector<LoraKeyframe> parseLoraKeyframes(const std::string& text);
std::string formatLoraKeyframes(const std::vector<LoraKeyframe>& keyframes);

struct LoraReport {
  std::string path;
  std::string format;                     // "kohya", "peft", "lycoris", ...
  LoraMode mode = LoraMode::Merge;        // how it was applied: merge or hook
  int applied = 0;                        // modules that patched a weight
  int modules = 0;                        // modules in the file
  std::vector<std::string> unmatched;     // module names that fit no weight of this model
  std::vector<std::string> unrecognised;  // tensor names in no LoRA layout

  // "applied 12 of 14 modules of style.safetensors (kohya, merged); 2 matched nothing: ..."
  std::string describe() const;
};

}  // namespace kiln
