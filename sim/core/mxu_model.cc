#include "sim/core/mxu_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "config/schema.h"
#include "sim/core/mxu_fast_model.h"
#include "sim/core/mxu_pe_model.h"

namespace tpusim::sim {

Status MxuArrayConfig::Validate() const {
  TPUSIM_RETURN_IF_ERROR(config::CheckConfigRange("core.mxu.rows", rows));
  TPUSIM_RETURN_IF_ERROR(config::CheckConfigRange("core.mxu.cols", cols));
  TPUSIM_RETURN_IF_ERROR(config::CheckConfigRange("core.mxu.weight_buffers", weight_buffers));
  TPUSIM_RETURN_IF_ERROR(
      config::CheckConfigRange("core.mxu.weight_load_cycles_per_row", weight_load_cycles_per_row));
  // 0: unbounded, the array's own convention for a model built in code (the config requires >= 1).
  if (accumulator_rows == 0) return OkStatus();
  return config::CheckConfigRange("core.mxu.accumulator_rows", accumulator_rows);
}

MxuOp MxuOp::LoadWeights(int64_t k, int64_t n, std::vector<float> w) {
  MxuOp op;
  op.kind = Kind::kLoadWeights;
  op.k = k;
  op.n = n;
  op.f32 = std::move(w);
  return op;
}

MxuOp MxuOp::LoadWeightsInt8(int64_t k, int64_t n, std::vector<int8_t> w) {
  MxuOp op;
  op.kind = Kind::kLoadWeights;
  op.numerics = MxuNumerics::kInt8;
  op.k = k;
  op.n = n;
  op.s8 = std::move(w);
  return op;
}

MxuOp MxuOp::MatMul(int64_t m, int64_t k, std::vector<float> lhs, bool swap_weights,
                    bool accumulate, int64_t acc_row) {
  MxuOp op;
  op.kind = Kind::kMatMul;
  op.m = m;
  op.k = k;
  op.f32 = std::move(lhs);
  op.swap_weights = swap_weights;
  op.accumulate = accumulate;
  op.acc_row = acc_row;
  return op;
}

MxuOp MxuOp::MatMulInt8(int64_t m, int64_t k, std::vector<int8_t> lhs, bool swap_weights,
                        bool accumulate, int64_t acc_row) {
  MxuOp op = MatMul(m, k, {}, swap_weights, accumulate, acc_row);
  op.numerics = MxuNumerics::kInt8;
  op.s8 = std::move(lhs);
  return op;
}

std::string MxuOp::ToString() const {
  const char* dt = numerics == MxuNumerics::kBf16 ? "bf16" : "int8";
  if (kind == Kind::kLoadWeights) return fmt::format("load_weights.{} k={} n={}", dt, k, n);
  return fmt::format("matmul.{} m={} k={}{} acc_row={}{}", dt, m, k, swap_weights ? " swap" : "",
                     acc_row, accumulate ? " accumulate" : "");
}

StatusOr<std::vector<MxuOpTiming>> MxuModel::Run(const std::vector<MxuOp>& ops) {
  std::vector<MxuOpTiming> timings;
  timings.reserve(ops.size());
  for (const MxuOp& op : ops) {
    TPUSIM_ASSIGN_OR_RETURN(MxuOpTiming t, Issue(op, Cycles(0)));
    timings.push_back(t);
  }
  return timings;
}

StatusOr<std::unique_ptr<MxuModel>> CreateMxuModel(MxuModelKind kind,
                                                   const MxuArrayConfig& config) {
  TPUSIM_RETURN_IF_ERROR(config.Validate());
  if (kind == MxuModelKind::kPe) return std::unique_ptr<MxuModel>(new MxuPeModel(config));
  return std::unique_ptr<MxuModel>(new MxuFastModel(config));
}

}  // namespace tpusim::sim
