#include "hlo/eval/kernels/dot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Core>
#include <algorithm>
#include <vector>

#include "hlo/eval/convert.h"
#include "hlo/eval/kernels/complex.h"
#include "hlo/eval/kernels/data_movement.h"
#include "hlo/eval/kernels/gemm.h"
#include "hlo/eval/kernels/index_util.h"
#include "hlo/eval/kernels/parallel.h"
#include "hlo/eval/kernels/permute_convert.h"

namespace tpusim::hlo {
namespace {

enum class AccKind { kFloat, kDouble, kInt };

AccKind AccFor(PrimitiveType a, PrimitiveType b) {
  if (a == PrimitiveType::kF64 || b == PrimitiveType::kF64) return AccKind::kDouble;
  if (IsFloatingPoint(a) || IsFloatingPoint(b)) return AccKind::kFloat;
  return AccKind::kInt;
}

}  // namespace

template <typename T>
void BatchedGemm(const T* a, const T* w, T* c, int64_t batch, int64_t m, int64_t k, int64_t n,
                 int threads, int64_t k_tile) {
  const int64_t row_tiles = (m + kDotRowBlock - 1) / kDotRowBlock;
  const int64_t col_tiles = (n + kDotColBlock - 1) / kDotColBlock;
  const int64_t tiles = batch * row_tiles * col_tiles;
  ParallelForBlocks(tiles, 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t b = t / (row_tiles * col_tiles);
      int64_t r = (t / col_tiles) % row_tiles;
      int64_t col = t % col_tiles;
      int64_t m0 = r * kDotRowBlock, n0 = col * kDotColBlock;
      int64_t mb = std::min(kDotRowBlock, m - m0), nb = std::min(kDotColBlock, n - n0);
      GemmTile<T>(a + b * m * k + m0 * k, k, w + b * k * n + n0, n, c + b * m * n + m0 * n + n0, n,
                  mb, k, nb, k_tile);
    }
  });
}

template void BatchedGemm<float>(const float*, const float*, float*, int64_t, int64_t, int64_t,
                                 int64_t, int, int64_t);
template void BatchedGemm<double>(const double*, const double*, double*, int64_t, int64_t, int64_t,
                                  int64_t, int, int64_t);

namespace {

// A dot as a batched GEMM: B x [M, K] x [K, N], and the permutations that bring lhs to
// [batch, free, contracting] and rhs to [batch, contracting, free].
struct DotLayout {
  int64_t B, M, K, N;
  std::vector<int64_t> lperm, rperm;
};

// Checks the dimension numbers against the operand and result shapes (InvalidArgument naming the
// three shapes and the fault) and returns the dot's GEMM layout.
StatusOr<DotLayout> LayoutOfDot(const Shape& ls, const Shape& rs, const DotDimensionNumbers& dnums,
                                const Shape& out) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument(fmt::format("dot {} x {} -> {}: {}", ls.ToString(false),
                                       rs.ToString(false), out.ToString(false), why));
  };
  if (dnums.lhs_batch_dimensions.size() != dnums.rhs_batch_dimensions.size() ||
      dnums.lhs_contracting_dimensions.size() != dnums.rhs_contracting_dimensions.size()) {
    return bad("batch/contracting dimension lists differ in length");
  }
  auto in_range = [](const std::vector<int64_t>& v, int64_t rank) {
    return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= 0 && d < rank; });
  };
  if (!in_range(dnums.lhs_batch_dimensions, ls.rank()) ||
      !in_range(dnums.lhs_contracting_dimensions, ls.rank()) ||
      !in_range(dnums.rhs_batch_dimensions, rs.rank()) ||
      !in_range(dnums.rhs_contracting_dimensions, rs.rank())) {
    return bad("dimension number out of range");
  }
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& contract) {
    std::vector<int64_t> f;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contract.begin(), contract.end(), d) == contract.end()) {
        f.push_back(d);
      }
    }
    return f;
  };
  std::vector<int64_t> lfree =
      free_dims(ls.rank(), dnums.lhs_batch_dimensions, dnums.lhs_contracting_dimensions);
  std::vector<int64_t> rfree =
      free_dims(rs.rank(), dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions);
  int64_t B = 1, M = 1, K = 1, N = 1;
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    int64_t d = ls.dimensions(dnums.lhs_batch_dimensions[i]);
    if (d != rs.dimensions(dnums.rhs_batch_dimensions[i])) return bad("batch sizes differ");
    B *= d;
    out_dims.push_back(d);
  }
  for (size_t i = 0; i < dnums.lhs_contracting_dimensions.size(); ++i) {
    int64_t d = ls.dimensions(dnums.lhs_contracting_dimensions[i]);
    if (d != rs.dimensions(dnums.rhs_contracting_dimensions[i]))
      return bad("contracting sizes differ");
    K *= d;
  }
  for (int64_t d : lfree) {
    M *= ls.dimensions(d);
    out_dims.push_back(ls.dimensions(d));
  }
  for (int64_t d : rfree) {
    N *= rs.dimensions(d);
    out_dims.push_back(rs.dimensions(d));
  }
  if (out_dims != out.dimensions()) return bad("result dims are not [batch, lhs free, rhs free]");

  // lhs -> [batch, free, contracting]; rhs -> [batch, contracting, free].
  DotLayout l{B, M, K, N, dnums.lhs_batch_dimensions, dnums.rhs_batch_dimensions};
  std::vector<int64_t>& lperm = l.lperm;
  lperm.insert(lperm.end(), lfree.begin(), lfree.end());
  lperm.insert(lperm.end(), dnums.lhs_contracting_dimensions.begin(),
               dnums.lhs_contracting_dimensions.end());
  std::vector<int64_t>& rperm = l.rperm;
  rperm.insert(rperm.end(), dnums.rhs_contracting_dimensions.begin(),
               dnums.rhs_contracting_dimensions.end());
  rperm.insert(rperm.end(), rfree.begin(), rfree.end());
  return l;
}

// A dot with a complex operand or result: operands permuted to [B,M,K] / [B,K,N] in out's type,
// Eigen's complex GEMM.
StatusOr<Literal> ComplexDot(const Literal& lhs, const Literal& rhs, const DotLayout& l,
                             const Shape& out, const KernelOptions& options,
                             bool round_operands_to_bf16) {
  auto permuted = [&](const Literal& x, const std::vector<int64_t>& perm) -> StatusOr<Literal> {
    std::vector<int64_t> dims;
    for (int64_t d : perm) dims.push_back(x.shape().dimensions(d));
    TPUSIM_ASSIGN_OR_RETURN(Literal p,
                            Transpose(x, perm, Shape(x.element_type(), dims), options));
    if (p.element_type() == out.element_type()) return p;
    return ConvertLiteral(p, out.element_type(), options.max_bytes);
  };
  TPUSIM_ASSIGN_OR_RETURN(Literal a, permuted(lhs, l.lperm));
  TPUSIM_ASSIGN_OR_RETURN(Literal w, permuted(rhs, l.rperm));
  if (round_operands_to_bf16 && out.element_type() == PrimitiveType::kC64) {
    // TPU DEFAULT precision: the MXU takes each part of a c64 operand as bf16, as it takes f32
    // operands (a complex dot is four real dots on the device: compiler/passes/complex_expander.h).
    for (Literal* x : {&a, &w}) {
      for (int64_t j = 0; j < 2 * x->element_count(); ++j) {
        const float v = static_cast<float>(x->GetComponentAsDouble(j));
        x->SetComponentFromDouble(j, static_cast<double>(static_cast<float>(Eigen::bfloat16(v))));
      }
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal c, Literal::Create(out, options.max_bytes));
  TPUSIM_RETURN_IF_ERROR(ComplexBatchedGemm(a, w, c, l.B, l.M, l.K, l.N));
  return c;
}

}  // namespace

StatusOr<Literal> DotGeneral(const Literal& lhs, const Literal& rhs,
                             const DotDimensionNumbers& dnums, const Shape& out,
                             const KernelOptions& options, bool round_operands_to_bf16) {
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  TPUSIM_ASSIGN_OR_RETURN(const DotLayout l, LayoutOfDot(ls, rs, dnums, out));
  const int64_t B = l.B, M = l.M, K = l.K, N = l.N;
  const std::vector<int64_t>& lperm = l.lperm;
  const std::vector<int64_t>& rperm = l.rperm;
  if (IsComplex(out.element_type()) || IsComplex(lhs.element_type()) ||
      IsComplex(rhs.element_type())) {
    return ComplexDot(lhs, rhs, l, out, options, round_operands_to_bf16);
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  // Accumulator buffers count against the limit too (a [B,M,N] f32 result of a bf16 dot, say).
  if ((B * M * N + B * M * K + B * K * N) * 8 > options.max_bytes) {
    return ResourceExhausted(fmt::format("dot {} x {}: work buffers exceed the limit of {} bytes",
                                         ls.ToString(false), rs.ToString(false),
                                         options.max_bytes));
  }
  auto finish = [&](auto acc_tag) -> Status {
    using Acc = typename decltype(acc_tag)::type;
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Acc> a,
                            PermuteToAcc<Acc>(lhs, lperm, round_operands_to_bf16, options));
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Acc> w,
                            PermuteToAcc<Acc>(rhs, rperm, round_operands_to_bf16, options));
    std::vector<Acc> c(static_cast<size_t>(B * M * N), Acc{0});
    if constexpr (std::is_same_v<Acc, uint64_t>) {
      // Integer dots are rare and small: a plain loop, wrapping modulo 2^64 then to the result
      // type.
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t kk = 0; kk < K; ++kk) {
            Acc av = a[static_cast<size_t>((b * M + i) * K + kk)];
            for (int64_t j = 0; j < N; ++j) {
              c[static_cast<size_t>((b * M + i) * N + j)] +=
                  av * w[static_cast<size_t>((b * K + kk) * N + j)];
            }
          }
    } else {
      if (K > 0) {
        BatchedGemm<Acc>(a.data(), w.data(), c.data(), B, M, K, N, options.threads,
                         options.mxu_k_tile);
      }
    }
    PrimitiveTypeSwitch(out.element_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* d = result.mutable_data<T>();
      for (size_t i = 0; i < c.size(); ++i) {
        if constexpr (std::is_same_v<Acc, uint64_t>) {
          d[i] = ConvertElement<T>(static_cast<int64_t>(c[i]));
        } else {
          d[i] = ConvertElement<T>(c[i]);
        }
      }
    });
    return OkStatus();
  };
  Status st;
  switch (AccFor(lhs.element_type(), rhs.element_type())) {
    case AccKind::kFloat:
      st = finish(TypeTag<float>{});
      break;
    case AccKind::kDouble:
      st = finish(TypeTag<double>{});
      break;
    case AccKind::kInt:
      st = finish(TypeTag<uint64_t>{});
      break;
  }
  TPUSIM_RETURN_IF_ERROR(st);
  return result;
}

}  // namespace tpusim::hlo
