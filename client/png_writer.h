// Writes 8-bit RGB images as PNG files with libpng.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace voxcol::client {

// Writes `rgb` (width * height * 3 bytes, rows top to bottom) to `path`. INVALID_ARGUMENT when
// the sizes do not match, INTERNAL naming the path and libpng's message when writing fails.
absl::Status WritePng(const std::string& path, int width, int height,
                      const std::vector<uint8_t>& rgb);

}  // namespace voxcol::client
