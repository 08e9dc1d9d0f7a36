#include "common/threefry.h"

namespace tpusim {

std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::array<uint32_t, 3> ks = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int block = 0; block < 5; ++block) {  // 4 rounds, then a key injection, 5 times
    for (int r = 0; r < 4; ++r) {
      const int rot = kRotations[(block % 2) * 4 + r];
      x[0] += x[1];
      x[1] = (x[1] << rot) | (x[1] >> (32 - rot));
      x[1] ^= x[0];
    }
    x[0] += ks[(block + 1) % 3];
    x[1] += ks[(block + 2) % 3] + static_cast<uint32_t>(block + 1);
  }
  return x;
}

}  // namespace tpusim
