#include "hlo/eval/kernels/partial_reduce.h"

#include <cstring>
#include <vector>

#include "hlo/eval/kernels/index_util.h"

namespace tpusim::hlo {
namespace {

// Copies element `from` of `src` into element `to` of `dst` (same element type).
void CopyElement(const Literal& src, int64_t from, Literal& dst, int64_t to) {
  const int64_t eb = ByteWidth(src.element_type());
  std::memcpy(dst.mutable_raw() + to * eb, src.raw() + from * eb, static_cast<size_t>(eb));
}

}  // namespace

StatusOr<Literal> PartialReduce(std::span<const Literal* const> operands,
                                std::span<const Literal* const> inits,
                                const PartialReduceForm& f, const CalledComputation& comparator,
                                const Shape& out) {
  const size_t k = operands.size();
  if (k == 0 || inits.size() != k || !out.IsTuple() ||
      out.tuple_shapes_size() != static_cast<int64_t>(k)) {
    return InvalidArgument("PartialReduce: needs k operands, k init values and a k-tuple result");
  }
  const Shape& xs = operands[0]->shape();
  const std::vector<int64_t> in_strides = RowMajorStrides(xs.dimensions());
  const int64_t stride = in_strides[static_cast<size_t>(f.dimension)];
  std::vector<Literal> results;
  std::vector<Literal> acc(k), elem(k);
  for (size_t o = 0; o < k; ++o) {
    TPUSIM_ASSIGN_OR_RETURN(Literal r, Literal::Create(out.tuple_shapes(static_cast<int64_t>(o))));
    results.push_back(std::move(r));
    elem[o] = *inits[o];  // a scalar of the operand's type, overwritten per element
  }
  const std::vector<int64_t>& out_dims = out.tuple_shapes(0).dimensions();
  const std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  Status status;
  std::vector<Literal> args(2 * k);
  ForEachIndex(out_dims, [&](std::span<const int64_t> idx) {
    if (!status.ok()) return;
    int64_t in_base = 0, out_at = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      out_at += idx[d] * out_strides[d];
      if (static_cast<int64_t>(d) != f.dimension) in_base += idx[d] * in_strides[d];
    }
    const int64_t bin = idx[static_cast<size_t>(f.dimension)];
    for (size_t o = 0; o < k; ++o) acc[o] = *inits[o];
    for (int64_t i = bin; i < f.n; i += f.bins) {
      for (size_t o = 0; o < k; ++o) {
        CopyElement(*operands[o], in_base + i * stride, elem[o], 0);
        args[2 * o] = acc[o];
        args[2 * o + 1] = elem[o];
      }
      StatusOr<Literal> keep = comparator.fn(args);
      if (!keep.ok()) {
        status = keep.status();
        return;
      }
      if (!keep->IsArray() || keep->element_type() != PrimitiveType::kPred ||
          keep->element_count() != 1) {
        status = InvalidArgument("PartialReduce: the comparator must return pred[]");
        return;
      }
      if (!keep->data<bool>()[0]) {
        for (size_t o = 0; o < k; ++o) acc[o] = elem[o];
      }
    }
    for (size_t o = 0; o < k; ++o) CopyElement(acc[o], 0, results[o], out_at);
  });
  TPUSIM_RETURN_IF_ERROR(status);
  return Literal::MakeTuple(std::move(results));
}

}  // namespace tpusim::hlo
