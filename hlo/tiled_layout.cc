#include "hlo/tiled_layout.h"

#include <algorithm>
#include <limits>

namespace tpusim::hlo {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t MulSat(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

// Element bytes as a tile holds them (at least one byte: pred and 4-bit types pack per byte).
int64_t TileElementBytes(PrimitiveType t) { return std::max<int64_t>((BitWidth(t) + 7) / 8, 1); }

// The smallest power of two >= n whose tile of `row_bytes` per unit reaches min_bytes, capped.
int64_t TileExtent(int64_t n, int64_t row_bytes, int64_t min_bytes, int64_t cap) {
  int64_t t = 1;
  while (t < cap && (t < n || t * row_bytes < min_bytes)) t *= 2;
  return std::min(t, cap);
}

// Dimension indices from major to minor. A layout with tiles is XLA's layout assignment's and is
// kept; otherwise (a dump before layout assignment, or no layout) the layout's order with its
// size-1 dimensions moved major when two or more dimensions are larger, as XLA's TPU layout
// assignment places them (the calibration profiles: f32[4,128,1,1]{1,0,3,2:T(4,128)},
// f32[16,256,1]{1,0,2:T(8,128)}; bf16[8000,1]{1,0:T(8,128)(2,1)} keeps its one large dimension
// major): a degenerate dimension costs nothing to move, and on the tiled minor dimensions it would
// pad each element to a whole tile row.
std::vector<int64_t> MajorToMinor(const Shape& array) {
  std::vector<int64_t> order;
  if (array.has_layout() &&
      static_cast<int64_t>(array.layout().minor_to_major.size()) == array.rank()) {
    order.assign(array.layout().minor_to_major.rbegin(), array.layout().minor_to_major.rend());
  } else {
    for (int64_t i = 0; i < array.rank(); ++i) order.push_back(i);
  }
  const bool assigned = array.has_layout() && !array.layout().tiles.empty();
  const auto large = std::count_if(order.begin(), order.end(),
                                   [&](int64_t d) { return array.dimensions(d) > 1; });
  if (!assigned && large >= 2) {
    std::stable_partition(order.begin(), order.end(),
                          [&](int64_t d) { return array.dimensions(d) == 1; });
  }
  return order;
}

}  // namespace

std::vector<int64_t> TpuTile(const Shape& array, const TileRule& rule) {
  if (array.has_layout() && !array.layout().tiles.empty()) return array.layout().tiles[0].dims;
  if (rule.min_tile_bytes <= 0 || !array.IsArray() || rule.lanes <= 0 || rule.sublanes <= 0) {
    return {};
  }
  const int64_t e = TileElementBytes(array.element_type());
  if (array.rank() <= 1) {
    const int64_t n = array.rank() == 0 ? 1 : array.dimensions(0);
    return {TileExtent(n, e, rule.min_tile_bytes, rule.lanes * rule.sublanes)};
  }
  const std::vector<int64_t> order = MajorToMinor(array);
  const int64_t second_minor = array.dimensions(order[order.size() - 2]);
  return {TileExtent(second_minor, rule.lanes * e, rule.min_tile_bytes, rule.sublanes), rule.lanes};
}

int64_t TiledByteSize(const Shape& array, const std::vector<int64_t>& tile) {
  if (!array.IsArray()) return 0;
  if (tile.empty()) return array.ByteSize();
  const std::vector<int64_t> order = MajorToMinor(array);
  std::vector<int64_t> extent;
  for (int64_t d : order) extent.push_back(std::max<int64_t>(array.dimensions(d), 0));
  if (extent.empty()) extent.push_back(1);  // a scalar is one element of a 1-D tile
  // The tile's dimensions apply to the most minor dimensions; a tile of higher rank than the
  // array treats the missing major dimensions as 1.
  const size_t k = std::min(tile.size(), extent.size());
  for (size_t i = 0; i < k; ++i) {
    const int64_t t = std::max<int64_t>(tile[tile.size() - 1 - i], 1);
    int64_t& x = extent[extent.size() - 1 - i];
    x = x > kMax - (t - 1) ? kMax : (x + t - 1) / t * t;
  }
  int64_t elements = 1;
  for (int64_t x : extent) elements = MulSat(elements, x);
  for (size_t i = extent.size(); i < tile.size(); ++i) {
    elements = MulSat(elements, std::max<int64_t>(tile[tile.size() - 1 - i], 1));
  }
  if (elements == 0) return 0;
  const int bits = BitWidth(array.element_type());
  if (bits < 8) return MulSat(elements, bits) == kMax ? kMax : (MulSat(elements, bits) + 7) / 8;
  return MulSat(elements, ByteWidth(array.element_type()));
}

bool CopyChangesLayout(const Shape& from, const Shape& to) {
  if (!from.IsArray() || !to.IsArray() || !from.has_layout() || !to.has_layout()) return false;
  const Layout& a = from.layout();
  const Layout& b = to.layout();
  return a.minor_to_major != b.minor_to_major ||
         (!a.tiles.empty() && !b.tiles.empty() && a.tiles != b.tiles);
}

}  // namespace tpusim::hlo
