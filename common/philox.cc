#include "common/philox.h"

namespace tpusim {

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kM0) * ctr[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * ctr[2];
    ctr = {static_cast<uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += kW0;
    key[1] += kW1;
  }
  return ctr;
}

}  // namespace tpusim
