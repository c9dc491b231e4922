#include "core/store/keys.h"

namespace voxcol::store {

std::string EncodeKey(char prefix, const Int3& key) {
  std::string out(13, '\0');
  out[0] = prefix;
  for (int a = 0; a < 3; ++a) {
    uint32_t u = uint32_t(key[a]) ^ 0x80000000u;  // flip the sign: negatives sort first
    for (int b = 0; b < 4; ++b) out[1 + 4 * a + b] = char(u >> (24 - 8 * b));
  }
  return out;
}

bool DecodeKey(std::string_view encoded, char prefix, Int3* key) {
  if (encoded.size() != 13 || encoded[0] != prefix) return false;
  for (int a = 0; a < 3; ++a) {
    uint32_t u = 0;
    for (int b = 0; b < 4; ++b) u = (u << 8) | uint8_t(encoded[1 + 4 * a + b]);
    (*key)[a] = int32_t(u ^ 0x80000000u);
  }
  return true;
}

std::string EncodeVersion(uint64_t version) {
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[b] = char(version >> (56 - 8 * b));
  return out;
}

std::string FeedKey(uint64_t version) {
  return std::string(1, kFeedPrefix) + EncodeVersion(version);
}

bool DecodeVersion(std::string_view encoded, uint64_t* version) {
  if (encoded.size() != 8) return false;
  *version = 0;
  for (int b = 0; b < 8; ++b) *version = (*version << 8) | uint8_t(encoded[b]);
  return true;
}

std::string EncodeAck(uint64_t fingerprint, uint64_t version, uint32_t changed_chunks) {
  std::string out = EncodeVersion(fingerprint) + EncodeVersion(version);
  for (int b = 0; b < 4; ++b) out.push_back(char(changed_chunks >> (24 - 8 * b)));
  return out;
}

bool DecodeAck(std::string_view encoded, uint64_t* fingerprint, uint64_t* version,
               uint32_t* changed_chunks) {
  if (encoded.size() != 20 || !DecodeVersion(encoded.substr(0, 8), fingerprint) ||
      !DecodeVersion(encoded.substr(8, 8), version)) {
    return false;
  }
  *changed_chunks = 0;
  for (int b = 0; b < 4; ++b) *changed_chunks = (*changed_chunks << 8) | uint8_t(encoded[16 + b]);
  return true;
}

}  // namespace voxcol::store
