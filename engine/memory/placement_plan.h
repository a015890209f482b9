// Where a component's weights go, decided and sized from the settings and the weights'
// sizes alone: the same arithmetic places weights (ComponentPlacement::apply,
// LoadedModel::place) and draws the Preferences memory map before settings are applied
// (Engine::planMemory), so the map shows what Apply will do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/memory_plan.h"
#include "kiln/offload.h"
#include "weights/params.h"

namespace kiln::memory {

using kiln::OffloadMode;
using kiln::offloadModeName;
using kiln::OffloadSettings;
using kiln::parseOffloadMode;
using kiln::PinMode;

enum class ComponentRole { Invalid = 0, TextEncoder, Denoiser, Vae };

struct ComponentInfo {
  std::string name;         // "unet", "vae", "text_encoder", "text_encoder_2"
  std::string model_class;  // "UNetModel", "AutoencoderKL", "ClipTextModel"
  ComponentRole role = ComponentRole::Invalid;
  const weights::ParamList* params = nullptr;
  // Offloaded as if in the always list unless the settings name the component.
  bool offloaded_by_default = false;
};

// What placement decided for one component.
struct PlacementDecision {
  OffloadMode mode = OffloadMode::None;
  int blocks_per_group = 1;
  bool streams = false;
  bool record_stream = false;       // streams: copies allocated on the copy stream (GPU)
  bool offload_after_call = false;  // model mode: back to the host when the call ends
  PinMode pin = PinMode::Off;       // host copies of the streamed weights in pinned memory
  std::string reason;               // why, when it differs from the settings
  bool operator==(const PlacementDecision&) const = default;
};

// Decides a component's placement from the settings and its role (never from its name
// alone): never/always lists first, then the per-component mode, then role rules (text
// encoders go leaf level without streams; a VAE is onloaded whole for each call and leaves
// afterwards only when larger than the threshold; block modes need blocks).
PlacementDecision decidePlacement(const ComponentInfo& component, int64_t weight_bytes,
                                  const OffloadSettings& settings);

// When the pinned memory a placement asks for (`needed`, of `streamed` bytes streamed)
// exceeds what is `allowed`, the decision falls back to block level without streams,
// unpinned, and says what that costs; returns false then. A component with blocks in
// model mode goes block by block instead.
bool fitPinnedMemory(PlacementDecision& decision, int64_t needed, int64_t allowed, int64_t streamed,
                     bool has_blocks);

// "group-block, 1 block per group, streams, 1.20 GiB resident, pinned (why)": the words
// ComponentPlacement::describe() puts after a component's name and size.
std::string describeDecision(const PlacementDecision& decision, int64_t resident_bytes);

// A component's weights as placement sees them: each slot's bytes, block and leaf flag,
// taken once when the component is loaded. Weights keep their size and dtype for as long
// as they are loaded (LoRA merges write in place), so a layout never changes and may be
// read from any thread while the model is alive.
struct WeightLayout {
  struct Slot {
    int64_t bytes = 0;
    int group = -1;  // index into groups, -1 outside any
    bool leaf = false;
  };
  struct Group {
    std::size_t first = 0, count = 0;  // slots [first, first + count)
  };
  std::vector<Slot> slots;
  std::vector<Group> groups;

  static WeightLayout of(const weights::ParamList& params);
  int64_t totalBytes() const;
};

// The slots kept on the device between calls: all of them for a resident component; for
// balanced, the loose weights and then whole blocks in the order they run while they fit
// in `balanced_budget_bytes`; none for the other modes.
std::vector<bool> residentSlots(const WeightLayout& layout, const PlacementDecision& decision,
                                int64_t balanced_budget_bytes);
int64_t residentBytes(const WeightLayout& layout, const std::vector<bool>& resident);

// The most weight bytes on the device during a call, given which slots stay resident
// (with streams, the next group arrives while the current one runs).
int64_t peakBytes(const WeightLayout& layout, const std::vector<bool>& resident,
                  const PlacementDecision& decision);

// The pinned bytes a placement asks for: every streamed weight, or for per-group pinning
// a staging copy of the largest transfer; none when it pins nothing.
int64_t pinnedBytesNeeded(const WeightLayout& layout, const std::vector<bool>& resident,
                          const PlacementDecision& decision);

// One component of a model to plan.
struct PlanInput {
  const ComponentInfo* component = nullptr;
  const WeightLayout* layout = nullptr;
};

// One component as placing it would leave it.
struct PlannedPlacement {
  PlacementDecision decision;  // after the pinned-memory check
  std::vector<bool> resident;
  int64_t balanced_budget_bytes = 0;  // what its balanced part may keep resident
  int64_t weight_bytes = 0, resident_bytes = 0, peak_bytes = 0, pinned_bytes = 0;
};

// Plans a model's components in order. A balanced component may keep resident what
// `balanced_budget_bytes` leaves after the other components' resident weights. Pins are
// counted against `pinned_allowed_bytes` in order (negative: no pinned memory on this
// device, so nothing is pinned), a denied one falling back as fitPinnedMemory says.
std::vector<PlannedPlacement> planPlacements(const std::vector<PlanInput>& components,
                                             const OffloadSettings& settings,
                                             int64_t balanced_budget_bytes,
                                             int64_t pinned_allowed_bytes);

// What the device offers one model's plan.
struct PlanRoom {
  int64_t device_bytes = 0;  // device memory Kiln may use for it
  // Pinned host memory the settings allow (free host memory less the reserve, plus what
  // the model pins already); negative where the device has no pinned memory.
  int64_t pinned_bytes = -1;
};

// The memory map of one model: its placements with the room the device offers, the
// working memory of the size asked for and the working reserve; problems say what does
// not fit and what to change. Balanced mode keeps resident what fits beside
// `balanced_working_bytes` and the reserve, as nodes::placeModel places it.
ModelMemoryPlan planModelMemory(const std::string& model, const std::vector<PlanInput>& components,
                                const OffloadSettings& settings, const PlanRoom& room,
                                int64_t working_bytes, int64_t balanced_working_bytes);

}  // namespace kiln::memory
