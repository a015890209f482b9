// What this machine's CPU can compute fast. bf16 arithmetic is native only with
// AVX-512 BF16 or AMX (x86) or the BF16 extension (Arm); elsewhere libtorch emulates it
// and a bf16 render or training step is 10 to 40 times slower than fp32.
#pragma once

#include <string>

namespace kiln::core {

// Whether the text of /proc/cpuinfo names a bf16 instruction set ("avx512_bf16",
// "amx_bf16" on a flags line; "bf16" on an Arm features line).
bool cpuinfoHasNativeBf16(const std::string& cpuinfo);

// The same for this machine (read once; false where /proc/cpuinfo cannot be read).
bool cpuHasNativeBf16();

}  // namespace kiln::core
