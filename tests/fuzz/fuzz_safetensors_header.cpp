// libFuzzer target for the safetensors header parser. The input is a whole file image.
// kiln::Error is the only accepted way to reject it; any other exception, a sanitizer
// report, or a parsed header that breaks the invariants checked below is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "kiln/error.h"
#include "tensor_io/dtype.h"
#include "tensor_io/safetensors.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// What a successful parse promises its callers: every tensor lies inside the data area,
// its byte range matches shape x element size, and non-empty ranges do not overlap.
void checkInvariants(const uint8_t* data, uint64_t size,
                     const kiln::tensor_io::SafetensorsHeader& header) {
  using kiln::tensor_io::dtypeSize;
  require(header.data_offset >= 8 && header.data_offset <= size);
  const uint64_t data_size = size - header.data_offset;
  const kiln::tensor_io::TensorInfo* previous = nullptr;
  for (const auto& t : header.tensors) {
    require(t.begin <= t.end && t.end <= data_size);
    uint64_t bytes = dtypeSize(t.dtype);
    require(bytes != 0);
    for (int64_t d : t.shape) {
      require(d >= 0);
      const auto dim = static_cast<uint64_t>(d);
      require(dim == 0 || bytes <= std::numeric_limits<uint64_t>::max() / dim);
      bytes *= dim;
    }
    require(bytes == t.byteSize());
    if (t.byteSize() != 0) {
      require(previous == nullptr || t.begin >= previous->end);
      previous = &t;
    }
    // Touch every byte so that AddressSanitizer sees a range that leaves the input.
    volatile uint8_t sink = 0;
    for (uint64_t i = t.begin; i < t.end; ++i) sink = sink ^ data[header.data_offset + i];
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto header = kiln::tensor_io::parseSafetensorsHeader(data, size, "fuzz");
    checkInvariants(data, size, header);
  } catch (const kiln::Error& e) {
    // Rejected with a typed error: the expected outcome for malformed input.
    require(e.kind() == kiln::ErrorKind::CorruptFile);
  }
  return 0;
}
