#include "isa/accumulator_memory.h"

#include <algorithm>
#include <bit>

#include "common/check.h"

namespace tpusim::isa {

AccumulatorMemory::AccumulatorMemory(int64_t rows, int64_t cols)
    : rows_(rows), cols_(cols), zeros_(static_cast<size_t>(std::max<int64_t>(cols, 0)), 0) {
  TPUSIM_CHECK(rows >= 0 && cols >= 0) << "accumulators of " << rows << " x " << cols;
}

int64_t AccumulatorMemory::allocated_bytes() const {
  return static_cast<int64_t>(pages_.size()) * kPageRows * cols_ *
         static_cast<int64_t>(sizeof(uint32_t));
}

const std::vector<uint32_t>* AccumulatorMemory::Page(int64_t page) const {
  auto it = pages_.find(page);
  return it == pages_.end() ? nullptr : &it->second;
}

const uint32_t* AccumulatorMemory::Row(int64_t row) const {
  TPUSIM_CHECK(row >= 0 && row < rows_) << "accumulator row " << row << " of " << rows_;
  const std::vector<uint32_t>* page = Page(row / kPageRows);
  return page == nullptr ? zeros_.data() : page->data() + (row % kPageRows) * cols_;
}

uint32_t* AccumulatorMemory::MutableRow(int64_t row) {
  TPUSIM_CHECK(row >= 0 && row < rows_) << "accumulator row " << row << " of " << rows_;
  std::vector<uint32_t>& page = pages_[row / kPageRows];
  if (page.empty()) page.assign(static_cast<size_t>(kPageRows * cols_), 0);
  return page.data() + (row % kPageRows) * cols_;
}

float AccumulatorMemory::f32(int64_t row, int64_t col) const {
  return std::bit_cast<float>(word(row, col));
}

int32_t AccumulatorMemory::s32(int64_t row, int64_t col) const {
  return static_cast<int32_t>(word(row, col));
}

void AccumulatorMemory::EnsureRows(int64_t rows) { rows_ = std::max(rows_, rows); }

std::optional<AccumulatorMemory::Difference> AccumulatorMemory::FirstDifference(
    const AccumulatorMemory& other) const {
  TPUSIM_CHECK(cols_ == other.cols_) << "accumulators of " << cols_ << " and " << other.cols_
                                     << " columns";
  // Pages written in either, in order; a page written in one only is compared with zeros.
  auto a = pages_.begin(), b = other.pages_.begin();
  while (a != pages_.end() || b != other.pages_.end()) {
    int64_t page;
    if (a == pages_.end()) {
      page = b->first;
    } else if (b == other.pages_.end()) {
      page = a->first;
    } else {
      page = std::min(a->first, b->first);
    }
    const std::vector<uint32_t>* x = a != pages_.end() && a->first == page ? &a->second : nullptr;
    const std::vector<uint32_t>* y =
        b != other.pages_.end() && b->first == page ? &b->second : nullptr;
    for (int64_t i = 0; i < kPageRows * cols_; ++i) {
      const uint32_t u = x != nullptr ? (*x)[i] : 0, v = y != nullptr ? (*y)[i] : 0;
      if (u != v) return Difference{page * kPageRows + i / cols_, i % cols_, u, v};
    }
    if (x != nullptr) ++a;
    if (y != nullptr) ++b;
  }
  return std::nullopt;
}

bool AccumulatorMemory::operator==(const AccumulatorMemory& other) const {
  return rows_ == other.rows_ && cols_ == other.cols_ && !FirstDifference(other).has_value();
}

}  // namespace tpusim::isa
