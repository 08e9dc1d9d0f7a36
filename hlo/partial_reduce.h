// PartialReduce: the TPU custom-call that jax.lax.approx_max_k / approx_min_k (and
// tf.math.approx_max_k) lower to for a TPU, the first stage of the TPU-KNN approximate top-k
// (Chern et al. 2022, arXiv:2206.14286). XLA writes it in xla/hlo/builder/lib/approx_topk.cc
// (ApproxTopK): operands (x_1..x_k, init_1..init_k) — JAX passes (values, iota indices, -inf or
// +inf, -1) —, called_computations={comparator} (the sort comparator of the top-k: 2k scalar
// parameters, lhs and rhs of each operand in turn, a pred root), backend_config the JSON
// {"log2_reduction": R, "reduction_dim": d, "to_apply_type": "comparator", "top_k": K,
// "recall_target": r}, and a tuple result whose arrays have x's shape with dimension d shrunk to
// L bins (XLA's ApproxTopKReductionOutputSize; then a sort and a slice aggregate to top-k).
//
// Semantics tpusim gives it (the TPU kernel is closed source): bin j of dimension d keeps the
// element that wins the comparator among the elements i = m * L + j, m = 0 .. 2^R - 1, i < n —
// the reduction XLA builds from the comparator (BuildReductionComputation: select(cmp(acc, x),
// acc, x)) applied from the init values. The strided binning (element i in bin i mod L) is the
// paper's Algorithm 1 (an elementwise max over L-wide slices); which element a bin keeps when two
// tie under the comparator is not specified (the TPU kernel's order is unknown).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

inline constexpr std::string_view kPartialReduceTarget = "PartialReduce";

struct PartialReduceForm {
  int64_t operands = 0;   // k: arrays reduced together (values, indices: 2)
  int64_t dimension = 0;  // d: the reduced dimension
  int64_t n = 0;          // its size in the operands
  int64_t bins = 0;       // L: its size in the results
  int64_t log2_reduction = 0;  // R: each bin folds up to 2^R elements
};

bool IsPartialReduce(const HloInstruction& inst);

/// The form of `inst` (a PartialReduce custom-call); InvalidArgument naming what is wrong: the
/// operand count (2k), shapes (x_i arrays of one shape, init_i scalars of their types, results of
/// x's shape with L at d), the comparator (one called computation of 2k parameters), the
/// backend_config (a JSON object with integer log2_reduction in [0, 62] and reduction_dim in
/// [0, rank)), or bins that cannot hold the dimension (L * 2^R < n).
StatusOr<PartialReduceForm> GetPartialReduceForm(const HloInstruction& inst);

}  // namespace tpusim::hlo
