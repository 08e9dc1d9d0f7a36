#include "sim/core/mxu_tiles.h"

#include <fmt/format.h>

namespace tpusim::sim {
namespace {

const char* NumericsName(MxuNumerics n) { return n == MxuNumerics::kBf16 ? "bf16" : "int8"; }

Status CheckValues(const MxuOp& op, const MxuArrayConfig& config, int64_t expected) {
  if (!config.compute_values) return OkStatus();
  const int64_t have = op.numerics == MxuNumerics::kBf16 ? static_cast<int64_t>(op.f32.size())
                                                         : static_cast<int64_t>(op.s8.size());
  if (have != expected) {
    return InvalidArgument(fmt::format("{}: expected {} {} values, got {}", op.ToString(), expected,
                                       NumericsName(op.numerics), have));
  }
  return OkStatus();
}

}  // namespace

const std::shared_ptr<const MxuTile>& MxuTileTracker::TileFor(bool swap_weights) const {
  return (config_.weight_buffers == 2 && swap_weights) ? shadow_ : active_;
}

Status MxuTileTracker::Check(const MxuOp& op) const {
  const int64_t r = config_.rows, c = config_.cols;
  if (op.kind == MxuOp::Kind::kLoadWeights) {
    if (op.k < 1 || op.k > r || op.n < 1 || op.n > c) {
      return InvalidArgument(fmt::format(
          "{}: weight tile {}x{} does not fit the {}x{} MXU (need 1 <= K <= {}, 1 <= N <= {})",
          op.ToString(), op.k, op.n, r, c, r, c));
    }
    return CheckValues(op, config_, op.k * op.n);
  }
  if (op.m < 1) return InvalidArgument(fmt::format("{}: M must be >= 1", op.ToString()));
  if (op.k < 1 || op.k > r) {
    return InvalidArgument(
        fmt::format("{}: LHS width K={} must be in 1..{} (MXU rows)", op.ToString(), op.k, r));
  }
  if (op.acc_row < 0 ||
      (config_.accumulator_rows > 0 && op.acc_row + op.m > config_.accumulator_rows)) {
    return InvalidArgument(fmt::format("{}: accumulator rows [{}, {}) outside [0, {})",
                                       op.ToString(), op.acc_row, op.acc_row + op.m,
                                       config_.accumulator_rows));
  }
  const auto& tile = TileFor(op.swap_weights);
  if (tile == nullptr) {
    return InvalidArgument(fmt::format("{}: no weight tile loaded", op.ToString()));
  }
  if (tile->numerics != op.numerics) {
    return InvalidArgument(fmt::format("{}: LHS is {} but the weight tile is {}", op.ToString(),
                                       NumericsName(op.numerics), NumericsName(tile->numerics)));
  }
  return CheckValues(op, config_, op.m * op.k);
}

std::shared_ptr<const MxuTile> MxuTileTracker::Load(const MxuOp& op) {
  auto tile = std::make_shared<MxuTile>();
  tile->seq = next_seq_++;
  tile->numerics = op.numerics;
  tile->k = op.k;
  tile->n = op.n;
  const int64_t c = config_.cols;
  const bool bf16 = op.numerics == MxuNumerics::kBf16;
  if (config_.compute_values) {  // a timing-only tile holds no values
    if (bf16) {
      tile->f32.assign(config_.rows * c, 0.0f);
    } else {
      tile->s32.assign(config_.rows * c, 0);
    }
    for (int64_t i = 0; i < op.k; ++i) {
      for (int64_t j = 0; j < op.n; ++j) {
        if (bf16) {
          tile->f32[i * c + j] = op.f32[i * op.n + j];
        } else {
          tile->s32[i * c + j] = op.s8[i * op.n + j];
        }
      }
    }
  }
  if (config_.weight_buffers == 2) {
    shadow_ = tile;
  } else {
    active_ = tile;
  }
  return tile;
}

std::shared_ptr<const MxuTile> MxuTileTracker::MatMul(const MxuOp& op) {
  if (config_.weight_buffers == 2 && op.swap_weights) active_ = shadow_;
  return active_;
}

}  // namespace tpusim::sim
