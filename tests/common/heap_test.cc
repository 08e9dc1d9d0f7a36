// common/heap.h: ReleaseFreeHeap hands free pages inside the heap back to the OS (glibc's
// malloc_trim(0)), so the resident set follows what is live; live blocks keep their contents.
#include "common/heap.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace tpusim {
namespace {

// Resident bytes of this process (/proc/self/statm's second field, in pages).
[[maybe_unused]] int64_t ResidentBytes() {  // unused where the test skips
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(HeapTest, FreedSmallBlocksInsideTheHeapLeaveTheResidentSet) {
#if !defined(__GLIBC__) || !defined(__linux__)
  GTEST_SKIP() << "ReleaseFreeHeap has an effect only with glibc on Linux";
#elif defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer replaces malloc: freed blocks wait in its quarantine, outside glibc's heap,
  // so malloc_trim has nothing to hand back.
  GTEST_SKIP() << "under AddressSanitizer, freed blocks are held in its quarantine";
#else
  // 64 MiB in 4 KiB blocks (below the mmap threshold: they live in the heap), each touched; every
  // 64th block stays live, so no free run reaches the heap's top and free() cannot trim it itself.
  constexpr size_t kBlock = 4096, kBlocks = 16384;
  std::vector<std::unique_ptr<char[]>> blocks(kBlocks);
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks[i].reset(new char[kBlock]);
    std::memset(blocks[i].get(), static_cast<int>(i & 0x7f) + 1, kBlock);
  }
  for (size_t i = 0; i < kBlocks; ++i) {
    if (i % 64 != 63) blocks[i].reset();
  }
  const int64_t before = ResidentBytes();
  ReleaseFreeHeap();
  const int64_t after = ResidentBytes();
  // 63/64 of 64 MiB was freed in runs of 252 KiB; at least half of it must leave the resident set.
  EXPECT_LT(after, before - (int64_t{32} << 20)) << "before " << before << " after " << after;
  for (size_t i = 63; i < kBlocks; i += 64) {
    for (size_t j = 0; j < kBlock; j += 512) {
      ASSERT_EQ(blocks[i][j], static_cast<char>((i & 0x7f) + 1)) << i;
    }
  }
#endif
}

}  // namespace
}  // namespace tpusim
