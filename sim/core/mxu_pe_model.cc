#include "sim/core/mxu_pe_model.h"

#include <algorithm>
#include <bit>

#include "common/check.h"
#include "sim/core/mxu_numerics.h"

namespace tpusim::sim {

MxuPeModel::MxuPeModel(const MxuArrayConfig& config)
    : MxuModel(config), tiles_(config), acc_(config.accumulator_rows, config.cols) {
  const size_t pes = static_cast<size_t>(config.rows * config.cols);
  State& s = state_;
  s.w.assign(pes, 0);
  s.shadow.assign(pes, 0);
  s.pass.assign(pes, 0);
  s.active_seq.assign(pes, -1);
  s.shadow_seq.assign(pes, -1);
  s.swaps.assign(pes, 0);
  s.a.assign(pes, 0);
  s.p.assign(pes, 0);
  s.tag.assign(pes, -1);
  s.row.assign(pes, 0);
  s.feed_tag.assign(config.rows, -1);
  s.feed_row.assign(config.rows, 0);
  s.feed_a.assign(config.rows, 0);
}

bool MxuPeModel::Drained(const State& s) const {
  // No LHS row waits in the feeder and no PE holds data that moves on to another PE next cycle.
  const int64_t r_n = config_.rows, c_n = config_.cols;
  for (const InflightMatMul& mm : s.matmuls) {
    if (s.now <= mm.start + static_cast<uint64_t>(mm.m - 1 + r_n - 1)) return false;
  }
  for (int64_t r = 0; r < r_n; ++r) {
    for (int64_t c = 0; c + 1 < c_n; ++c) {
      if (s.tag[r * c_n + c] >= 0) return false;
    }
  }
  return true;
}

bool MxuPeModel::CanIssue(const State& s, const MxuOp& op) const {
  const uint64_t wl = config_.WeightLoadCycles().value();
  // Column 0's weight-shift chain is still shifting a tile in.
  bool col0_loading = false;
  for (const InflightLoad& ld : s.loads) col0_loading |= s.now < ld.start + wl;
  if (op.kind == MxuOp::Kind::kLoadWeights) {
    if (col0_loading) return false;
    return config_.weight_buffers == 2 || Drained(s);
  }
  // The LHS feeder of array row 0 is still taking rows of an earlier matmul.
  for (const InflightMatMul& mm : s.matmuls) {
    if (s.now < mm.start + static_cast<uint64_t>(mm.m)) return false;
  }
  if (op.swap_weights || config_.weight_buffers == 1) return !col0_loading;
  return true;
}

void MxuPeModel::AdvanceTo(State& s, uint64_t t, MxuAccumulators* acc) const {
  while (s.now < t) {
    if (Idle(s)) {
      s.now = t;  // nothing in flight: skip the idle stretch
    } else {
      Step(s, acc);
    }
  }
}

void MxuPeModel::Step(State& s, MxuAccumulators* acc) const {
  const int64_t r_n = config_.rows, c_n = config_.cols;
  const uint64_t t = s.now;

  // 1. LHS feed: array row r takes row m = t - S - r of the matmul that started in cycle S.
  std::fill(s.feed_tag.begin(), s.feed_tag.end(), -1);
  for (InflightMatMul& mm : s.matmuls) {
    if (t < mm.start) continue;
    const int64_t since = static_cast<int64_t>(t - mm.start);
    const int64_t lo = std::max<int64_t>(0, since - (mm.m - 1));
    const int64_t hi = std::min<int64_t>(r_n - 1, since);
    for (int64_t r = lo; r <= hi; ++r) {
      TPUSIM_CHECK(s.feed_tag[r] < 0) << "two matmuls feed array row " << r << " in cycle " << t;
      const int64_t m = since - r;
      s.feed_tag[r] = mm.id;
      s.feed_row[r] = static_cast<int32_t>(m);
      s.feed_a[r] = (r < mm.k && mm.lhs != nullptr) ? (*mm.lhs)[m * mm.k + r] : 0;
    }
    if (lo == 0 && hi >= 0) {
      s.counters.streaming_cycles += Cycles(1);
      if (since == mm.m - 1 && !s.watch.is_load && s.watch.id == mm.id) s.watch.unit_free = t + 1;
    }
  }

  // 2. Compute. PE(r, c) takes the LHS datum PE(r, c-1) held and the partial sum PE(r-1, c) made in
  // the previous cycle; walking r and c downwards reads those registers before they are
  // overwritten.
  const int64_t first_id = s.matmuls.empty() ? 0 : s.matmuls.front().id;
  bool computed = false;
  for (int64_t r = r_n - 1; r >= 0; --r) {
    for (int64_t c = c_n - 1; c >= 0; --c) {
      const int64_t pe = r * c_n + c;
      const int64_t in_tag = c == 0 ? s.feed_tag[r] : s.tag[pe - 1];
      if (in_tag < 0) {
        TPUSIM_CHECK(r == 0 || s.tag[pe - c_n] < 0)
            << "partial sum without its LHS row at PE(" << r << "," << c << ") cycle " << t;
        s.tag[pe] = -1;
        continue;
      }
      const int32_t in_row = c == 0 ? s.feed_row[r] : s.row[pe - 1];
      const uint32_t in_a = c == 0 ? s.feed_a[r] : s.a[pe - 1];
      TPUSIM_CHECK(in_tag >= first_id && in_tag - first_id < static_cast<int64_t>(s.matmuls.size()))
          << "PE(" << r << "," << c << ") holds data of retired matmul " << in_tag;
      InflightMatMul& mm = s.matmuls[in_tag - first_id];
      if (in_row == 0 && mm.swap && config_.weight_buffers == 2) {
        // The swap wave: the first row of a swapping matmul makes the shadow tile active here.
        TPUSIM_CHECK(s.shadow_seq[pe] == mm.tile_seq)
            << "swap at PE(" << r << "," << c << ") cycle " << t << " finds shadow tile "
            << s.shadow_seq[pe] << ", expected " << mm.tile_seq;
        s.w[pe] = s.shadow[pe];
        s.active_seq[pe] = s.shadow_seq[pe];
        s.swaps[pe] += 1;
      }
      TPUSIM_CHECK(s.active_seq[pe] == mm.tile_seq)
          << "matmul " << mm.id << " at PE(" << r << "," << c << ") cycle " << t << " sees tile "
          << s.active_seq[pe] << ", expected " << mm.tile_seq;
      uint32_t psum = 0;  // +0.0f / 0 enters the top of every column
      if (r > 0) {
        TPUSIM_CHECK(s.tag[pe - c_n] == in_tag && s.row[pe - c_n] == in_row)
            << "partial sum of the wrong row at PE(" << r << "," << c << ") cycle " << t;
        psum = s.p[pe - c_n];
      }
      if (r < mm.k) {  // LHS lanes k >= K carry no data: the partial sum passes through
        psum = mm.numerics == MxuNumerics::kBf16
                   ? std::bit_cast<uint32_t>(MxuMacF32(std::bit_cast<float>(psum),
                                                       std::bit_cast<float>(in_a),
                                                       std::bit_cast<float>(s.w[pe])))
                   : MxuMacS32(psum, static_cast<int32_t>(in_a), static_cast<int32_t>(s.w[pe]));
        if (c < mm.n) s.counters.useful_macs += 1;
      }
      s.a[pe] = in_a;
      s.tag[pe] = in_tag;
      s.row[pe] = in_row;
      s.p[pe] = psum;
      computed = true;
      if (r == r_n - 1 && c < mm.n) {  // leaves the bottom of column c into the accumulators
        if (acc != nullptr && mm.lhs != nullptr) {
          uint32_t& word = acc->MutableRow(mm.acc_row + in_row)[c];
          word = mm.numerics == MxuNumerics::kBf16 ? MxuAccumulateF32(word, psum, mm.accumulate)
                                                   : MxuAccumulateS32(word, psum, mm.accumulate);
        }
        mm.writes_left -= 1;
        if (mm.writes_left == 0 && !s.watch.is_load && s.watch.id == mm.id) {
          s.watch.done = t + 1;
          s.watch.complete = true;
        }
      }
    }
  }
  if (computed) s.counters.busy_cycles += Cycles(1);

  // 3. Weight shifts and latches (end of the cycle, after the PEs read their weights).
  StepWeights(s);

  // 4. Retire what has left the array.
  while (!s.matmuls.empty()) {
    const InflightMatMul& mm = s.matmuls.front();
    if (t < mm.start + static_cast<uint64_t>(mm.m + r_n + c_n - 3)) break;
    TPUSIM_CHECK(mm.writes_left == 0) << "matmul " << mm.id << " retired with results missing";
    s.matmuls.pop_front();
  }
  const uint64_t wl = config_.WeightLoadCycles().value();
  const uint64_t skew = config_.weight_buffers == 2 ? static_cast<uint64_t>(c_n - 1) : 0;
  while (!s.loads.empty() && t + 1 >= s.loads.front().start + skew + wl) s.loads.pop_front();
  s.counters.fill_drain_cycles = s.counters.busy_cycles - s.counters.streaming_cycles;
  s.now = t + 1;
}

void MxuPeModel::StepWeights(State& s) const {
  const int64_t r_n = config_.rows, c_n = config_.cols;
  const int64_t wl = config_.weight_load_cycles_per_row;
  const int64_t t = static_cast<int64_t>(s.now);
  bool shifting = false;
  std::vector<bool> column_shifted(c_n, false);  // one shift per column per cycle, or data is lost
  for (InflightLoad& ld : s.loads) {
    const MxuTile& tile = *ld.tile;
    const int64_t since = t - static_cast<int64_t>(ld.start);
    shifting |= since >= 0 && since < r_n * wl;
    if (config_.weight_buffers == 2) {
      // Column c's j-th shift happens at the end of cycle L + c + (j+1)*wl - 1; tile row R-1-j
      // enters at the top, so after R shifts row i sits in PE row i and is latched into the shadow
      // registers.
      for (int64_t c = 0; c < c_n; ++c) {
        const int64_t d = since - c + 1;
        if (d <= 0 || d % wl != 0 || d / wl > r_n) continue;
        const int64_t j = d / wl - 1;
        TPUSIM_CHECK(!column_shifted[c]) << "two loads shift column " << c << " in cycle " << t;
        column_shifted[c] = true;
        for (int64_t r = r_n - 1; r >= 1; --r) s.pass[r * c_n + c] = s.pass[(r - 1) * c_n + c];
        s.pass[c] = tile.word((r_n - 1 - j) * c_n + c);
        if (j != r_n - 1) continue;
        for (int64_t r = 0; r < r_n; ++r) {
          const int64_t pe = r * c_n + c;
          TPUSIM_CHECK(s.swaps[pe] == ld.swaps_before)
              << "weight latch at PE(" << r << "," << c << ") cycle " << t
              << " overtakes the swap wave (shadow tile " << s.shadow_seq[pe] << " not copied)";
          s.shadow[pe] = s.pass[pe];
          s.shadow_seq[pe] = tile.seq;
        }
        if (c == 0 && s.watch.is_load && s.watch.id == tile.seq) {
          s.watch.unit_free = s.watch.done = static_cast<uint64_t>(t + 1);
          s.watch.complete = true;
        }
      }
    } else {
      // One weight buffer: every column shifts the active weights at once; no data may be in
      // flight.
      const int64_t d = since + 1;
      if (d <= 0 || d % wl != 0 || d / wl > r_n) continue;
      const int64_t j = d / wl - 1;
      TPUSIM_CHECK(!column_shifted[0]) << "two loads shift the weights in cycle " << t;
      std::fill(column_shifted.begin(), column_shifted.end(), true);
      for (int64_t c = 0; c < c_n; ++c) {
        for (int64_t r = r_n - 1; r >= 1; --r) s.w[r * c_n + c] = s.w[(r - 1) * c_n + c];
        s.w[c] = tile.word((r_n - 1 - j) * c_n + c);
      }
      // Half-shifted weights belong to no tile: a PE computing on them fails its tile check.
      std::fill(s.active_seq.begin(), s.active_seq.end(), j == r_n - 1 ? tile.seq : -1);
      if (j == r_n - 1 && s.watch.is_load && s.watch.id == tile.seq) {
        s.watch.unit_free = s.watch.done = static_cast<uint64_t>(t + 1);
        s.watch.complete = true;
      }
    }
  }
  if (shifting) s.counters.weight_shift_cycles += Cycles(1);
}

StatusOr<MxuOpTiming> MxuPeModel::Issue(const MxuOp& op, Cycles earliest) {
  TPUSIM_RETURN_IF_ERROR(tiles_.Check(op));
  drained_acc_.reset();
  AdvanceTo(state_, std::max(earliest.value(), last_start_), &acc_);
  while (!CanIssue(state_, op)) {
    TPUSIM_CHECK(!Idle(state_)) << "idle MXU cannot take " << op.ToString();  // would never issue
    Step(state_, &acc_);
  }
  const uint64_t start = state_.now;
  last_start_ = start;

  Watch watch;
  if (op.kind == MxuOp::Kind::kLoadWeights) {
    InflightLoad ld;
    ld.start = start;
    ld.tile = tiles_.Load(op);
    ld.swaps_before = swaps_issued_;
    watch.is_load = true;
    watch.id = ld.tile->seq;
    state_.loads.push_back(std::move(ld));
    issued_.weight_loads += 1;
  } else {
    const std::shared_ptr<const MxuTile> tile = tiles_.MatMul(op);
    TPUSIM_CHECK(tile != nullptr) << "Check() let a matmul without weights through";
    InflightMatMul mm;
    mm.id = next_matmul_id_++;
    mm.start = start;
    mm.m = op.m;
    mm.k = op.k;
    mm.n = tile->n;
    mm.numerics = op.numerics;
    mm.swap = op.swap_weights;
    mm.accumulate = op.accumulate;
    mm.acc_row = op.acc_row;
    mm.tile_seq = tile->seq;
    mm.writes_left = op.m * tile->n;
    if (config_.compute_values) {
      auto lhs = std::make_shared<std::vector<uint32_t>>(op.m * op.k);
      for (int64_t i = 0; i < op.m * op.k; ++i) {
        (*lhs)[i] = op.numerics == MxuNumerics::kBf16
                        ? std::bit_cast<uint32_t>(op.f32[i])
                        : static_cast<uint32_t>(static_cast<int32_t>(op.s8[i]));
      }
      mm.lhs = std::move(lhs);
      if (config_.accumulator_rows == 0) acc_.EnsureRows(op.acc_row + op.m);
    }
    if (op.swap_weights && config_.weight_buffers == 2) swaps_issued_ += 1;
    watch.id = mm.id;
    state_.matmuls.push_back(std::move(mm));
    issued_.matmuls += 1;
  }

  // Look ahead on a copy until this op completes; later ops cannot change when it does.
  State ahead = state_;
  ahead.watch = watch;
  while (!ahead.watch.complete) {
    TPUSIM_CHECK(!Idle(ahead)) << "op issued at cycle " << start << " never completed";
    Step(ahead, nullptr);
  }
  issued_.last_done = std::max(issued_.last_done, Cycles(ahead.watch.done));
  return MxuOpTiming{Cycles(start), Cycles(ahead.watch.unit_free), Cycles(ahead.watch.done)};
}

void MxuPeModel::Finish() {
  if (drained_acc_.has_value()) return;
  State s = state_;
  MxuAccumulators acc = acc_;
  while (!Idle(s)) Step(s, &acc);
  drained_acc_ = std::move(acc);
  drained_counters_ = s.counters;
  drained_counters_.weight_loads = issued_.weight_loads;
  drained_counters_.matmuls = issued_.matmuls;
  drained_counters_.last_done = issued_.last_done;
}

const MxuAccumulators& MxuPeModel::accumulators() {
  Finish();
  return *drained_acc_;
}

MxuAccumulators MxuPeModel::TakeAccumulators() {
  Finish();
  return std::move(*drained_acc_);
}

const MxuCounters& MxuPeModel::counters() {
  Finish();
  return drained_counters_;
}

}  // namespace tpusim::sim
