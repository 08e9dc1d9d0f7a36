#include "hlo/eval/kernels/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace tpusim::hlo {

void ParallelForBlocks(int64_t n, int64_t block, int threads,
                       const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  block = std::max<int64_t>(block, 1);
  const int64_t num_blocks = (n + block - 1) / block;
  const int workers = static_cast<int>(std::min<int64_t>(std::max(threads, 1), num_blocks));
  if (workers <= 1) {
    for (int64_t b = 0; b < num_blocks; ++b) fn(b * block, std::min(n, (b + 1) * block));
    return;
  }
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t b = next.fetch_add(1); b < num_blocks; b = next.fetch_add(1)) {
      fn(b * block, std::min(n, (b + 1) * block));
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  for (int i = 1; i < workers; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

int DefaultThreadCount() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace tpusim::hlo
