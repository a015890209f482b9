// Numbers as people write and read them: byte counts ("8G", "512 MiB", "1.5GB" in,
// "1.5 GiB" out) and plain numbers in messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

// Parses a byte count: a number with an optional unit, K/M/G/T (binary, like KiB/MiB/GiB/TiB)
// or KB/MB/GB/TB (decimal), case-insensitive, optionally separated by a space. Nothing
// when the text is not such a count, is negative, or exceeds 2^62.
std::optional<int64_t> parseBytes(std::string_view text);

// A number as printf's %g writes it: "7", "0.5", "0.666667".
std::string formatNumber(double v);

// "0 B", "512 B", "12.3 KiB", "1.50 GiB": three significant digits, binary units.
std::string formatBytes(int64_t bytes);

// A stage's progress as its label shows it: "12/30 steps", and for "bytes" both counts
// in the unit of the total, decimal like file sizes: "1.2/2.0 GB", "310/820 MB".
std::string formatProgressAmount(int64_t done, int64_t total, const std::string& unit);

}  // namespace kiln
