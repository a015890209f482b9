// libFuzzer target for how a LoRA file is classified from its tensors' names and shapes
// (lora/lora_layout.h): the step that runs on every LoRA an artist drops in, before any of
// its data is read. The input is a header in the text form of tensor_lines.h. Only
// kiln::Error may reject it; a crash, a sanitizer report, another exception, or a layout
// that breaks the promises checked below is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kiln/error.h"
#include "lora/lora_layout.h"
#include "tensor_lines.h"

namespace {

using kiln::ErrorKind;
using kiln::lora::LoraKind;
using kiln::lora::LoraModuleLayout;

void require(bool condition) {
  if (!condition) std::abort();
}

// The roles a module of each kind cannot do without: what the merge and the hook read.
void checkRoles(const LoraModuleLayout& m) {
  switch (m.kind) {
    case LoraKind::LowRank:
      require(m.has("down") && m.has("up"));
      break;
    case LoraKind::LoHa:
      require(m.has("hada_w1_a") && m.has("hada_w1_b") && m.has("hada_w2_a") && m.has("hada_w2_b"));
      break;
    case LoraKind::LoKr:
      require(m.has("lokr_w1") || (m.has("lokr_w1_a") && m.has("lokr_w1_b")));
      require(m.has("lokr_w2") || (m.has("lokr_w2_a") && m.has("lokr_w2_b")));
      break;
    case LoraKind::Full:
      require(m.has("diff") || m.has("diff_b"));
      break;
    case LoraKind::Invalid:
      require(false);
  }
  for (const auto& [role, shape] : m.shapes)
    for (int64_t d : shape) require(d > 0);
  if (m.has("alpha")) require(m.shape("alpha").size() <= 1);
}

// A module's change must fit a weight of its own shape, and no weight with another first
// dimension; its rank is what alpha divides by, never negative.
void checkShapes(const LoraModuleLayout& m) {
  kiln::lora::Shape delta;
  try {
    delta = kiln::lora::loraDeltaShape(m);
  } catch (const kiln::Error& e) {
    require(e.kind() == ErrorKind::ShapeMismatch);
    return;
  }
  require(!delta.empty());
  for (int64_t d : delta) require(d > 0);
  kiln::lora::checkLoraFits(m, delta);
  kiln::lora::Shape other = delta;
  other[0] = delta[0] == 1 ? 2 : delta[0] - 1;
  try {
    kiln::lora::checkLoraFits(m, other);
    require(false);
  } catch (const kiln::Error& e) {
    require(e.kind() == ErrorKind::ShapeMismatch);
  }
  const int64_t rank = kiln::lora::loraRank(m);
  require(rank >= 0);
  if (m.kind == LoraKind::LowRank) require(rank == m.shape("down")[0]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto lines = kiln::fuzz::parseTensorLines(
      std::string_view(reinterpret_cast<const char*>(data), size), uint64_t{1} << 40);
  if (!lines) return 0;
  try {
    const kiln::lora::LoraLayout layout =
        kiln::lora::readLoraLayout(lines->tensors, "fuzz.safetensors");
    require(!layout.modules.empty());
    for (const LoraModuleLayout& m : layout.modules) {
      require(!m.name.empty() && !m.file_name.empty());
      require(kiln::lora::normaliseLoraModule(m.file_name) == m.name);
      checkRoles(m);
      checkShapes(m);
    }
  } catch (const kiln::Error& e) {
    require(e.kind() == ErrorKind::CorruptFile || e.kind() == ErrorKind::UnsupportedModel);
  }
  return 0;
}
