#include "isa/collectives.h"

#include <fmt/format.h>

#include "isa/numerics.h"

namespace tpusim::isa {

RankReduction::RankReduction(const CollectiveArgs& a, uint64_t elements)
    : a_(a), elements_(elements) {
  if (IsFloat(a.dtype)) {
    f_.resize(elements);
  } else {
    i_.resize(elements);
  }
}

void RankReduction::Fold(const std::string& rank) {
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(a_.dtype));
  const char* p = rank.data();
  if (IsFloat(a_.dtype)) {
    for (uint64_t e = 0; e < elements_; ++e) {
      const float x = LoadFloat(p + e * eb, a_.dtype);
      float& acc = f_[e];
      if (first_) {
        acc = x;
      } else {
        acc = a_.op == ReduceOp::kSum ? acc + x
                                      : (a_.op == ReduceOp::kMax ? MaxF(acc, x) : MinF(acc, x));
      }
    }
  } else {
    for (uint64_t e = 0; e < elements_; ++e) {
      const int64_t x = LoadInt(p + e * eb, a_.dtype);
      i_[e] = first_ ? x : ReduceI(a_.op, i_[e], x, a_.dtype);
    }
  }
  first_ = false;
}

void RankReduction::Store(uint64_t begin, uint64_t count, std::string& out) const {
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(a_.dtype));
  out.assign(count * eb, '\0');
  for (uint64_t e = 0; e < count; ++e) {
    if (IsFloat(a_.dtype)) {
      StoreFloat(out.data() + e * eb, a_.dtype, f_[begin + e]);
    } else {
      StoreInt(out.data() + e * eb, a_.dtype, i_[begin + e]);
    }
  }
}

std::string AllToAllOutput(const std::vector<std::string>& in, const CollectiveArgs& a, size_t r) {
  const size_t chunk = a.count * static_cast<uint64_t>(DTypeBytes(a.dtype));
  std::string out;
  out.reserve(chunk * in.size());
  for (const std::string& q : in) out.append(q, r * chunk, chunk);
  return out;
}

StatusOr<std::vector<int>> PermuteSources(size_t ranks,
                                          const std::vector<std::pair<int, int>>& pairs) {
  std::vector<int> source(ranks, -1);
  for (auto [s, t] : pairs) {
    if (source[static_cast<size_t>(t)] >= 0) {
      return InvalidArgument(
          fmt::format("collective_permute: rank {} is the target of two pairs", t));
    }
    source[static_cast<size_t>(t)] = s;
  }
  return source;
}

}  // namespace tpusim::isa
