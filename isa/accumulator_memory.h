// AccumulatorMemory: one MXU's accumulator memory, `rows` rows of `cols` raw 32-bit words (f32 or
// s32 bits), addressed by row. Like SparseMemory it is stored in pages made on first write (rows
// never written read as zero), so a configuration with millions of accumulator rows
// (core.mxu.accumulator_rows up to 2^24) costs memory only for the rows a program writes: pages
// written x kPageRows x cols x 4 bytes. The interpreter (isa/execute_mxu.cc) and the simulator's
// MXU models (sim/core/mxu_*_model.cc) both keep their accumulators in it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace tpusim::isa {

class AccumulatorMemory {
 public:
  /// Rows per page: 64 rows of 128 words (tpu-v4) are 32 KiB.
  static constexpr int64_t kPageRows = 64;

  AccumulatorMemory() = default;
  /// `rows` >= 0 rows of `cols` >= 0 words, all zero; nothing is allocated but one zero row.
  AccumulatorMemory(int64_t rows, int64_t cols);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  /// True while no row has been written (every word reads zero).
  bool empty() const { return pages_.empty(); }
  /// Bytes held by written pages.
  int64_t allocated_bytes() const;

  /// Row `row` ([cols] words) for reading: a shared zero row if never written. 0 <= row < rows().
  const uint32_t* Row(int64_t row) const;
  /// Row `row` for writing; makes its page (zeros) on first use. 0 <= row < rows().
  uint32_t* MutableRow(int64_t row);
  uint32_t word(int64_t row, int64_t col) const { return Row(row)[col]; }
  float f32(int64_t row, int64_t col) const;
  int32_t s32(int64_t row, int64_t col) const;

  /// Grows to at least `rows` rows (the new rows read zero; nothing is allocated).
  void EnsureRows(int64_t rows);

  /// A word in which two accumulator memories differ: its row and column, and the two words.
  struct Difference {
    int64_t row = 0, col = 0;
    uint32_t mine = 0, other = 0;
  };
  /// The first word, in row-major order, that differs between *this and `other` (unwritten rows,
  /// and rows beyond either's rows(), read zero); nullopt if none. Both must have the same cols().
  std::optional<Difference> FirstDifference(const AccumulatorMemory& other) const;
  /// Same rows, cols and words (written or not).
  bool operator==(const AccumulatorMemory& other) const;

 private:
  const std::vector<uint32_t>* Page(int64_t page) const;

  int64_t rows_ = 0;
  int64_t cols_ = 0;
  std::map<int64_t, std::vector<uint32_t>> pages_;  // page index -> [kPageRows, cols] words
  std::vector<uint32_t> zeros_;                     // [cols]
};

}  // namespace tpusim::isa
