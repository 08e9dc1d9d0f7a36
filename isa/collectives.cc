#include "isa/collectives.h"

#include <fmt/format.h>

#include "isa/numerics.h"

namespace tpusim::isa {
namespace {

// Reduces element range [begin, begin + count) of every input into `out` (count elements).
void ReduceRange(const std::vector<std::string>& in, const CollectiveArgs& a, uint64_t begin,
                 std::string& out) {
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(a.dtype));
  out.assign(a.count * eb, '\0');
  for (uint64_t i = 0; i < a.count; ++i) {
    const uint64_t off = (begin + i) * eb;
    if (IsFloat(a.dtype)) {
      float acc = LoadFloat(in[0].data() + off, a.dtype);
      for (size_t r = 1; r < in.size(); ++r) {
        float x = LoadFloat(in[r].data() + off, a.dtype);
        acc = a.op == ReduceOp::kSum ? acc + x
                                     : (a.op == ReduceOp::kMax ? MaxF(acc, x) : MinF(acc, x));
      }
      StoreFloat(out.data() + i * eb, a.dtype, acc);
    } else {
      int64_t acc = LoadInt(in[0].data() + off, a.dtype);
      for (size_t r = 1; r < in.size(); ++r) {
        acc = ReduceI(a.op, acc, LoadInt(in[r].data() + off, a.dtype), a.dtype);
      }
      StoreInt(out.data() + i * eb, a.dtype, acc);
    }
  }
}

}  // namespace

std::vector<std::string> AllReduce(const std::vector<std::string>& in, const CollectiveArgs& a) {
  std::string r;
  ReduceRange(in, a, 0, r);
  return std::vector<std::string>(in.size(), r);
}

std::vector<std::string> AllGather(const std::vector<std::string>& in, const CollectiveArgs&) {
  std::string all;
  for (const auto& s : in) all += s;
  return std::vector<std::string>(in.size(), all);
}

std::vector<std::string> ReduceScatter(const std::vector<std::string>& in,
                                       const CollectiveArgs& a) {
  std::vector<std::string> out(in.size());
  for (size_t r = 0; r < in.size(); ++r) ReduceRange(in, a, r * a.count, out[r]);
  return out;
}

std::vector<std::string> AllToAll(const std::vector<std::string>& in, const CollectiveArgs& a) {
  const size_t chunk = a.count * static_cast<uint64_t>(DTypeBytes(a.dtype));
  std::vector<std::string> out(in.size());
  for (size_t r = 0; r < in.size(); ++r) {
    for (size_t q = 0; q < in.size(); ++q) out[r] += in[q].substr(r * chunk, chunk);
  }
  return out;
}

StatusOr<std::vector<std::string>> CollectivePermute(
    const std::vector<std::string>& in, const CollectiveArgs& a,
    const std::vector<std::pair<int, int>>& pairs) {
  const size_t bytes = a.count * static_cast<uint64_t>(DTypeBytes(a.dtype));
  std::vector<std::string> out(in.size(), std::string(bytes, '\0'));
  std::vector<bool> targeted(in.size(), false);
  for (auto [s, t] : pairs) {
    if (targeted[t]) {
      return InvalidArgument(
          fmt::format("collective_permute: rank {} is the target of two pairs", t));
    }
    targeted[t] = true;
    out[t] = in[s];
  }
  return out;
}

}  // namespace tpusim::isa
