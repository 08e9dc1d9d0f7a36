#include "hlo/eval/kernels/sort.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "hlo/eval/kernels/elementwise_ops.h"
#include "hlo/eval/kernels/index_util.h"

namespace tpusim::hlo {

StatusOr<Literal> Sort(std::span<const Literal* const> operands, int64_t dimension,
                       const CalledComputation& comparator, const Shape& out,
                       const KernelOptions& options) {
  (void)options;
  if (operands.empty()) return InvalidArgument("sort: needs an operand");
  const Shape& s = operands[0]->shape();
  if (dimension < 0 || dimension >= s.rank()) {
    return InvalidArgument(
        fmt::format("sort: dimension {} out of range for {}", dimension, s.ToString(false)));
  }
  for (const Literal* op : operands) {
    if (op->shape().dimensions() != s.dimensions()) {
      return InvalidArgument("sort: operands must have the same dimensions");
    }
  }
  const int64_t n = s.dimensions(dimension);
  const std::vector<int64_t> strides = RowMajorStrides(s.dimensions());
  const int64_t stride = strides[static_cast<size_t>(dimension)];
  std::vector<int64_t> outer_dims = s.dimensions();
  outer_dims[static_cast<size_t>(dimension)] = 1;

  std::vector<Literal> results;
  for (const Literal* op : operands) results.push_back(*op);
  const bool fast = comparator.fast == CalledComputation::Fast::kCompare;
  Status status;
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::vector<uint8_t> tmp;
  auto scalar_at = [](const Literal& l, int64_t i) {
    Literal sc = Literal::Create(Shape(l.element_type(), {})).value();
    const int64_t eb = ByteWidth(l.element_type());
    std::memcpy(sc.mutable_raw(), l.raw() + i * eb, static_cast<size_t>(eb));
    return sc;
  };
  ForEachIndex(outer_dims, [&](std::span<const int64_t> idx) {
    if (!status.ok()) return;
    int64_t base = 0;
    for (size_t k = 0; k < idx.size(); ++k) base += idx[k] * strides[k];
    std::iota(perm.begin(), perm.end(), 0);
    auto less = [&](int64_t a, int64_t b) -> bool {
      if (!status.ok()) return false;
      const int64_t ia = base + a * stride, ib = base + b * stride;
      if (fast) {
        return PrimitiveTypeSwitch(operands[0]->element_type(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* d = operands[0]->data<T>();
          return ew::Compare(comparator.direction, comparator.total_order, d[ia], d[ib]);
        });
      }
      std::vector<Literal> args;
      for (const Literal* op : operands) {
        args.push_back(scalar_at(*op, ia));
        args.push_back(scalar_at(*op, ib));
      }
      auto r = comparator.fn(args);
      if (!r.ok()) {
        status = r.status();
        return false;
      }
      if (!r->IsArray() || r->element_type() != PrimitiveType::kPred || r->element_count() != 1) {
        status = InvalidArgument("sort: the comparator must return pred[]");
        return false;
      }
      return r->data<bool>()[0];
    };
    std::stable_sort(perm.begin(), perm.end(), less);
    for (size_t o = 0; o < operands.size(); ++o) {
      const int64_t eb = ByteWidth(operands[o]->element_type());
      const uint8_t* src = operands[o]->raw();
      uint8_t* dst = results[o].mutable_raw();
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + (base + i * stride) * eb,
                    src + (base + perm[static_cast<size_t>(i)] * stride) * eb,
                    static_cast<size_t>(eb));
      }
    }
  });
  TPUSIM_RETURN_IF_ERROR(status);
  if (out.IsArray()) {
    if (results.size() != 1) return InvalidArgument("sort: a multi-operand sort returns a tuple");
    results[0].ReshapeInPlace(out);
    return std::move(results[0]);
  }
  return Literal::MakeTuple(std::move(results));
}

}  // namespace tpusim::hlo
