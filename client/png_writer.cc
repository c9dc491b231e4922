#include "client/png_writer.h"

#include <png.h>

#include <cstring>

namespace voxcol::client {

absl::Status WritePng(const std::string& path, int width, int height,
                      const std::vector<uint8_t>& rgb) {
  if (width < 1 || height < 1 || rgb.size() != size_t(width) * height * 3) {
    return absl::InvalidArgumentError("png: pixel buffer does not match width x height x 3");
  }
  // libpng's simplified API: one call for the whole image.
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&image, path.c_str(), 0, rgb.data(), 0, nullptr)) {
    std::string message = image.message;
    png_image_free(&image);
    return absl::InternalError("cannot write " + path + ": " + message);
  }
  return absl::OkStatus();
}

}  // namespace voxcol::client
