// MxuTileTracker: which weight tile an MXU's shadow buffer and active weights hold, in program
// order, and the validation of each op against it (shared by MxuPeModel and MxuFastModel so both
// accept and reject exactly the same programs with the same messages).
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "sim/core/mxu_model.h"
#include "sim/engine/snapshot.h"

namespace tpusim::sim {

/// One weight tile as the array holds it: K x N values zero-padded to R x C, row-major [R, C]:
/// `f32` in kBf16 mode, `s32` (sign-extended int8) in kInt8 mode; both empty when the model is
/// timing-only (every word reads as zero).
struct MxuTile {
  int64_t seq = -1;  // 0, 1, 2, ... in load order
  MxuNumerics numerics = MxuNumerics::kBf16;
  int64_t k = 0;
  int64_t n = 0;
  std::vector<float> f32;    // [R, C] (kBf16)
  std::vector<int32_t> s32;  // [R, C] (kInt8)
  /// The 32-bit word PE(r, c) holds: f32 bits or the int32 value (0 in a timing-only tile).
  uint32_t word(int64_t index) const {
    if (numerics == MxuNumerics::kBf16) {
      return f32.empty() ? 0 : std::bit_cast<uint32_t>(f32[index]);
    }
    return s32.empty() ? 0 : static_cast<uint32_t>(s32[index]);
  }
};

class MxuTileTracker {
 public:
  explicit MxuTileTracker(const MxuArrayConfig& config) : config_(config) {}

  /// Checks `op` (shapes, value sizes, numerics against the tile it runs on, accumulator range).
  Status Check(const MxuOp& op) const;
  /// Records a checked load_weights; returns the new tile (now the shadow tile, or with one weight
  /// buffer the active one).
  std::shared_ptr<const MxuTile> Load(const MxuOp& op);
  /// Records a checked matmul; returns the tile it runs on (swapping it in first if asked).
  std::shared_ptr<const MxuTile> MatMul(const MxuOp& op);

  /// The tile a matmul issued now with `swap_weights` would run on (null if none).
  const std::shared_ptr<const MxuTile>& TileFor(bool swap_weights) const;
  /// Fast-forward (sim/engine/snapshot.h): the shapes and numerics of the shadow and active tiles
  /// (their values are not timing state; load order numbers are identifiers).
  void Save(StateWriter& w) const {
    for (const auto* t : {&shadow_, &active_}) {
      w.Value(*t == nullptr ? 0 : 1);
      if (*t == nullptr) continue;
      w.Value(static_cast<uint64_t>((*t)->numerics));
      w.Value(static_cast<uint64_t>((*t)->k));
      w.Value(static_cast<uint64_t>((*t)->n));
    }
    w.Value(shadow_ == active_ ? 1 : 0);
  }

 private:
  MxuArrayConfig config_;
  std::shared_ptr<const MxuTile> shadow_;  // the last tile loaded (weight_buffers 2)
  std::shared_ptr<const MxuTile> active_;
  int64_t next_seq_ = 0;
};

}  // namespace tpusim::sim
