// Exact results of the ICI collectives, on byte buffers (one per rank, in rank order). The
// interpreter uses them, and the simulator must too: it times ring steps, but the values a
// collective produces are defined here, independent of the algorithm that moves them (docs/isa.md
// "Collectives").
//
// Reductions combine ranks in rank order r = 0, 1, ..., n-1: acc = x_0; acc = fl(acc op x_r), in
// f32 for bf16/f32 (rounded once to the dtype at the end) and in s32 with wrap-around for s8/s32;
// for pred, sum and max are logical or, min is logical and.
#pragma once

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

/// in[r]: count elements -> out[r]: count elements, the reduction over ranks.
std::vector<std::string> AllReduce(const std::vector<std::string>& in, const CollectiveArgs& a);
/// in[r]: count elements -> out[r]: n * count elements, rank q's input at offset q * count.
std::vector<std::string> AllGather(const std::vector<std::string>& in, const CollectiveArgs& a);
/// in[r]: n * count elements -> out[r]: count elements = reduction of chunk r over ranks.
std::vector<std::string> ReduceScatter(const std::vector<std::string>& in, const CollectiveArgs& a);
/// in[r]: n chunks of count -> out[r]: chunk q = chunk r of in[q].
std::vector<std::string> AllToAll(const std::vector<std::string>& in, const CollectiveArgs& a);
/// in[r]: count elements; (source rank, target rank) pairs -> out[t] = in[s], zeros for a rank that
/// is no target. InvalidArgument if a rank is the target of two pairs.
StatusOr<std::vector<std::string>> CollectivePermute(const std::vector<std::string>& in,
                                                     const CollectiveArgs& a,
                                                     const std::vector<std::pair<int, int>>& pairs);

}  // namespace tpusim::isa
