// LoRA requests and what applying them did: the part of the LoRA module the app, the
// command line and workflows see.
#pragma once

#include <string>
#include <vector>

namespace kiln {

struct LoraSpec {
  std::string path;           // a .safetensors LoRA (kohya, PEFT, diffusers, LoHa, LoKr, full)
  double unet_strength = 1.0;  // the denoiser's
  double text_strength = 1.0;  // the text encoders'

  bool operator==(const LoraSpec&) const = default;
};

// "FILE[:STRENGTH[:TEXT_ENCODER_STRENGTH]]" (the text strength defaults to the first).
// Throws kiln::Error(InvalidArgument) for an empty path or a strength that is not a
// finite number.
LoraSpec parseLoraSpec(const std::string& text);

struct LoraReport {
  std::string path;
  std::string format;                  // "kohya", "peft", "lycoris", ...
  int applied = 0;                     // modules that patched a weight
  int modules = 0;                     // modules in the file
  std::vector<std::string> unmatched;  // module names that fit no weight of this model
  std::vector<std::string> unrecognised;  // tensor names in no LoRA layout

  // "applied 12 of 14 modules of style.safetensors (kohya); 2 matched nothing: ..."
  std::string describe() const;
};

}  // namespace kiln
