#include "isa/footprint.h"

#include <algorithm>

namespace tpusim::isa {

namespace {

// Addresses past this are not worth exact row arithmetic (no memory is that large): the bounding
// range decides, conservatively.
constexpr uint64_t kExactLimit = uint64_t{1} << 60;

int64_t FloorDiv(int64_t a, int64_t b) {  // b > 0
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

uint64_t Rows(const Region& r) { return (r.hi - r.lo - r.width) / r.stride + 1; }

// Strided `s` against the contiguous [a, b): the first row ending past a must start before b.
bool StridedMeetsRange(const Region& s, uint64_t a, uint64_t b) {
  const uint64_t first = s.lo + s.width > a ? 0 : (a - s.lo - s.width) / s.stride + 1;
  return first < Rows(s) && s.lo + first * s.stride < b;
}

}  // namespace

Region StridedRegion(MemSpace space, int core, uint64_t addr, uint64_t rows, uint64_t width,
                     uint64_t stride) {
  width = std::max<uint64_t>(width, 1);
  if (rows <= 1 || stride <= width) {
    return RegionBytes(space, core, addr, rows == 0 ? 0 : (rows - 1) * stride + width);
  }
  Region r = RegionBytes(space, core, addr, (rows - 1) * stride + width);
  r.stride = stride;
  r.width = width;
  return r;
}

bool Region::RowsOverlap(const Region& o) const {
  if (stride == 0 && o.stride == 0) return true;
  if (std::max(hi, o.hi) >= kExactLimit) return true;
  if (o.stride == 0) return StridedMeetsRange(*this, o.lo, o.hi);
  if (stride == 0) return StridedMeetsRange(o, lo, hi);
  if (stride != o.stride) return true;
  // Rows i of this and j of o: o's row starts d = (o.lo - lo) + k * stride after this one's, k =
  // j - i in [-(rows - 1), o.rows - 1]; they meet when -o.width < d < width. Widths are below the
  // stride, so only the smallest k with d > -o.width can.
  const auto s = static_cast<int64_t>(stride);
  const int64_t D = static_cast<int64_t>(o.lo) - static_cast<int64_t>(lo);
  int64_t k = FloorDiv(-static_cast<int64_t>(o.width) - D, s) + 1;
  k = std::max(k, -static_cast<int64_t>(Rows(*this) - 1));
  return k <= static_cast<int64_t>(Rows(o) - 1) && D + k * s < static_cast<int64_t>(width);
}

Footprint InstructionFootprint(const Instruction& inst, int core, const Program& program) {
  switch (Info(inst.opcode).unit) {
    case Unit::kDma:
      return DmaFootprint(inst, core);
    case Unit::kMxu:
      return MxuFootprint(inst, core);
    case Unit::kVpu:
    case Unit::kXlu:
      return VectorFootprint(inst, core);
    case Unit::kIci:
      return CollectiveFootprint(inst, core, program);
    case Unit::kScalar:
      break;  // scalar instructions touch no memory
  }
  return {};
}

std::vector<int32_t> GroupMembers(const Program& program, uint64_t group, int core) {
  if (group >= program.replica_groups.size()) return {};
  for (const auto& g : program.replica_groups[group].groups) {
    if (std::find(g.begin(), g.end(), core) != g.end()) return g;
  }
  return {};
}

}  // namespace tpusim::isa
