// Exact results of the ICI collectives, on byte buffers (one per rank, in rank order). The
// interpreter uses them, and the simulator must too: it times ring steps, but the values a
// collective produces are defined here, independent of the algorithm that moves them (docs/isa.md
// "Collectives").
//
// Reductions combine ranks in rank order r = 0, 1, ..., n-1: acc = x_0; acc = fl(acc op x_r), in
// f32 for bf16/f32 (rounded once to the dtype at the end) and in s32 with wrap-around for s8/s32;
// for pred, sum and max are logical or, min is logical and.
//
// Memory: a collective's cost is one rank's input at a time beside the result, never a copy per
// rank of what every rank receives alike (an all-reduce or all-gather result is made once and
// written to every rank; RankReduction folds one rank's input at a time).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "isa/types.h"

namespace tpusim::isa {

struct CollectiveArgs {
  DType dtype = DType::kF32;
  uint64_t count = 0;  // the instruction's `count` (elements per rank or per chunk)
  ReduceOp op = ReduceOp::kSum;
};

/// The reduction over ranks of `elements` elements per rank, one rank at a time in rank order:
/// Fold(x_0), Fold(x_1), ..., then Store. all-reduce stores all elements for every rank;
/// reduce-scatter (each rank's input n * count elements) stores chunk r for rank r. Holds one
/// accumulator per element (f32 for float dtypes, 64-bit for integers and pred).
class RankReduction {
 public:
  RankReduction(const CollectiveArgs& a, uint64_t elements);
  /// Folds the next rank's input: `elements` values of the dtype (rank 0's initializes).
  void Fold(const std::string& rank);
  /// Elements [begin, begin + count) rounded to the dtype, into `out` (count elements' bytes).
  void Store(uint64_t begin, uint64_t count, std::string& out) const;

 private:
  CollectiveArgs a_;
  uint64_t elements_;
  bool first_ = true;
  std::vector<float> f_;    // float dtypes
  std::vector<int64_t> i_;  // integers and pred
};

/// all-to-all, rank r's output: in[q] holds n chunks of count elements -> chunk q = chunk r of
/// in[q].
std::string AllToAllOutput(const std::vector<std::string>& in, const CollectiveArgs& a, size_t r);
/// collective-permute over `ranks` ranks: (source rank, target rank) pairs -> per target rank its
/// source rank, or -1 for a rank that is no target (it receives zeros). InvalidArgument if a rank
/// is the target of two pairs.
StatusOr<std::vector<int>> PermuteSources(size_t ranks,
                                          const std::vector<std::pair<int, int>>& pairs);

}  // namespace tpusim::isa
