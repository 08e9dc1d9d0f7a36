// Deterministic parallel loops for the CPU evaluator.
//
// Work is cut into blocks whose boundaries depend only on the problem size and a fixed block size —
// never on the thread count — and each output element is computed by exactly one block in a fixed
// order. So results are bit-identical for any thread count (1, 2, 64); threads only decide which
// block runs where.
#pragma once

#include <cstdint>
#include <functional>

namespace tpusim::hlo {

/// Runs fn(begin, end) for the blocks [0,b), [b,2b), ... of [0, n) on up to `threads` std::threads
/// (threads <= 1 or a single block: inline on the caller). Blocks are handed out dynamically; fn
/// must write only outputs owned by its block.
void ParallelForBlocks(int64_t n, int64_t block, int threads,
                       const std::function<void(int64_t begin, int64_t end)>& fn);

/// std::thread::hardware_concurrency(), at least 1.
int DefaultThreadCount();

}  // namespace tpusim::hlo
