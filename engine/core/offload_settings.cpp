#include "kiln/error.h"
#include "kiln/offload.h"

namespace kiln {

const char* offloadModeName(OffloadMode mode) noexcept {
  switch (mode) {
    case OffloadMode::None:
      return "none";
    case OffloadMode::Model:
      return "model";
    case OffloadMode::GroupBlock:
      return "group-block";
    case OffloadMode::GroupLeaf:
      return "group-leaf";
    case OffloadMode::Balanced:
      return "balanced";
    case OffloadMode::Invalid:
      break;
  }
  return "invalid";
}

OffloadMode parseOffloadMode(std::string_view text) noexcept {
  for (OffloadMode m : {OffloadMode::None, OffloadMode::Model, OffloadMode::GroupBlock,
                        OffloadMode::GroupLeaf, OffloadMode::Balanced})
    if (text == offloadModeName(m)) return m;
  return OffloadMode::Invalid;
}

const char* pinModeName(PinMode mode) noexcept {
  switch (mode) {
    case PinMode::Off:
      return "off";
    case PinMode::On:
      return "on";
    case PinMode::PerGroup:
      return "per-group";
    case PinMode::Invalid:
      break;
  }
  return "invalid";
}

PinMode parsePinMode(std::string_view text) noexcept {
  for (PinMode m : {PinMode::Off, PinMode::On, PinMode::PerGroup})
    if (text == pinModeName(m)) return m;
  return PinMode::Invalid;
}

void OffloadSettings::validate() const {
  const auto check = [](OffloadMode m, const std::string& what) {
    if (m == OffloadMode::Invalid)
      throw Error(ErrorKind::InvalidArgument,
                  "no offload mode set for " + what +
                      "; use none, model, group-block, group-leaf or balanced");
  };
  check(mode, "the components");
  for (const auto& [name, m] : per_component) check(m, name);
  if (blocks_per_group < 1)
    throw Error(ErrorKind::InvalidArgument,
                "blocks per group must be at least 1, got " + std::to_string(blocks_per_group));
  if (working_reserve_bytes < 0 || pin_reserve_bytes < 0)
    throw Error(ErrorKind::InvalidArgument, "memory reserves cannot be negative");
  if (record_stream && !streams)
    throw Error(ErrorKind::InvalidArgument,
                "record-stream needs streams; turn streams on or record-stream off");
  if (pin == PinMode::Invalid)
    throw Error(ErrorKind::InvalidArgument, "no pinned-memory mode set; use on, off or per-group");
  if (pin_reserve_bytes < 0)
    throw Error(ErrorKind::InvalidArgument, "the pinned-memory reserve cannot be negative");
  if (vae_resident_threshold_bytes < 0)
    throw Error(ErrorKind::InvalidArgument, "the VAE threshold cannot be negative");
}

}  // namespace kiln
