#include "hlo/eval/kernels/reduce.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "hlo/eval/convert.h"
#include "hlo/eval/kernels/elementwise_ops.h"
#include "hlo/eval/kernels/index_util.h"
#include "hlo/eval/kernels/parallel.h"

namespace tpusim::hlo {
namespace {

using Fast = CalledComputation::Fast;
constexpr int64_t kBlock = 1024;

// True when a sum over `t` accumulates in f32 (KernelOptions::f32_accumulation).
bool WidensToF32(const CalledComputation& reducer, PrimitiveType t, const KernelOptions& options) {
  return options.f32_accumulation && reducer.fast == Fast::kAdd &&
         (t == PrimitiveType::kBF16 || t == PrimitiveType::kF16 ||
          IsFloat8(t));
}

// A rank-0 Literal holding element i of `array`.
Literal ScalarAt(const Literal& array, int64_t i) {
  auto lit = Literal::Create(Shape(array.element_type(), {}));
  TPUSIM_CHECK(lit.ok());
  const int64_t eb = ByteWidth(array.element_type());
  std::memcpy(lit->mutable_raw(), array.raw() + i * eb, static_cast<size_t>(eb));
  return std::move(lit).value();
}

void StoreScalar(Literal& array, int64_t i, const Literal& scalar) {
  const int64_t eb = ByteWidth(array.element_type());
  std::memcpy(array.mutable_raw() + i * eb, scalar.raw(), static_cast<size_t>(eb));
}

// Checks the reducer returned `n` scalars of the accumulators' types; unpacks them.
Status Unpack(const Literal& r, size_t n, std::vector<Literal>& accs, const char* op) {
  if (n == 1 && r.IsArray() && r.element_count() == 1 &&
      r.element_type() == accs[0].element_type()) {
    accs[0] = r;
    return OkStatus();
  }
  if (r.IsTuple() && static_cast<size_t>(r.tuple_size()) == n) {
    for (size_t k = 0; k < n; ++k) {
      const Literal& e = r.element(static_cast<int64_t>(k));
      if (!e.IsArray() || e.element_count() != 1 || e.element_type() != accs[k].element_type())
        break;
      accs[k] = e;
      if (k + 1 == n) return OkStatus();
    }
  }
  return InvalidArgument(
      fmt::format("{}: the called computation returned {}, expected {} scalar(s) of "
                  "the accumulator type(s)",
                  op, r.shape().ToString(false), n));
}

// Generic fold: accs = f(accs, xs).
Status Fold(const CalledComputation& c, std::vector<Literal>& accs, std::vector<Literal> xs,
            const char* op) {
  std::vector<Literal> args = accs;
  for (Literal& x : xs) args.push_back(std::move(x));
  TPUSIM_ASSIGN_OR_RETURN(Literal r, c.fn(args));
  return Unpack(r, accs.size(), accs, op);
}

Status CheckInits(std::span<const Literal* const> operands, std::span<const Literal* const> inits,
                  const char* op) {
  if (operands.empty() || operands.size() != inits.size()) {
    return InvalidArgument(fmt::format("{}: needs as many init values as operands", op));
  }
  for (size_t k = 0; k < operands.size(); ++k) {
    if (inits[k]->element_count() != 1 || inits[k]->element_type() != operands[k]->element_type() ||
        operands[k]->shape().dimensions() != operands[0]->shape().dimensions()) {
      return InvalidArgument(fmt::format("{}: operand {} / init value shapes disagree", op, k));
    }
  }
  return OkStatus();
}

// The result leaves of a (possibly multi-output) reduction.
StatusOr<std::vector<Literal>> CreateOutputs(const Shape& out, size_t n,
                                             const KernelOptions& options, const char* op) {
  std::vector<Literal> outs;
  if (n == 1 && out.IsArray()) {
    TPUSIM_ASSIGN_OR_RETURN(Literal l, Literal::Create(out, options.max_bytes));
    outs.push_back(std::move(l));
    return outs;
  }
  if (!out.IsTuple() || static_cast<size_t>(out.tuple_shapes_size()) != n) {
    return InvalidArgument(
        fmt::format("{}: result {} should be a tuple of {} arrays", op, out.ToString(false), n));
  }
  for (const Shape& s : out.tuple_shapes()) {
    TPUSIM_ASSIGN_OR_RETURN(Literal l, Literal::Create(s, options.max_bytes));
    outs.push_back(std::move(l));
  }
  return outs;
}

Literal PackOutputs(std::vector<Literal> outs, const Shape& out) {
  if (out.IsArray()) return std::move(outs[0]);
  return Literal::MakeTuple(std::move(outs));
}

// Core loop shared by reduce and reduce-window: for each output element o, visit(o, fold) where the
// caller enumerates the input offsets folded into o in order.
template <typename Visit>
Status RunReduction(std::span<const Literal* const> operands, std::span<const Literal* const> inits,
                    const CalledComputation& reducer, std::vector<Literal>& outs,
                    const KernelOptions& options, const char* op, Visit visit) {
  const int64_t count = outs[0].element_count();
  for (const Literal& o : outs) {
    if (o.element_count() != count)
      return InvalidArgument(fmt::format("{}: outputs differ in size", op));
  }
  const PrimitiveType t = operands[0]->element_type();
  if (operands.size() == 1 && HasFastBinary(reducer.fast, t) && outs[0].element_type() == t) {
    PrimitiveTypeSwitch(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = operands[0]->data<T>();
      const T init = inits[0]->data<T>()[0];
      T* d = outs[0].mutable_data<T>();
      if constexpr (kIsHalfFloat<T>) {
        if (WidensToF32(reducer, t, options)) {
          ParallelForBlocks(count, kBlock, options.threads, [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o) {
              float acc = static_cast<float>(init);
              visit(o, [&](int64_t off) { acc += static_cast<float>(x[off]); });
              d[o] = ConvertElement<T>(acc);
            }
          });
          return;
        }
      }
      ParallelForBlocks(count, kBlock, options.threads, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          T acc = init;
          visit(o, [&](int64_t off) { FastBinary(reducer.fast, acc, x[off], &acc); });
          d[o] = acc;
        }
      });
    });
    return OkStatus();
  }
  // General path, single-threaded (the called computation runs through the evaluator).
  Status status;
  for (int64_t o = 0; o < count && status.ok(); ++o) {
    std::vector<Literal> accs;
    for (const Literal* init : inits) accs.push_back(*init);
    visit(o, [&](int64_t off) {
      if (!status.ok()) return;
      std::vector<Literal> xs;
      for (const Literal* operand : operands) xs.push_back(ScalarAt(*operand, off));
      status = Fold(reducer, accs, std::move(xs), op);
    });
    if (!status.ok()) break;
    for (size_t k = 0; k < outs.size(); ++k) {
      if (accs[k].element_type() != outs[k].element_type()) {
        return InvalidArgument(fmt::format("{}: result {} has the wrong element type", op, k));
      }
      StoreScalar(outs[k], o, accs[k]);
    }
  }
  return status;
}

struct WindowGeometry {
  std::vector<int64_t> in_dims, out_dims, sizes, strides, dilations, base_dilations, pad_low;
};

StatusOr<WindowGeometry> MakeWindowGeometry(const Shape& in, const Window& window, const char* op) {
  if (static_cast<int64_t>(window.dimensions.size()) != in.rank()) {
    return InvalidArgument(fmt::format("{}: window rank {} != operand rank {}", op,
                                       window.dimensions.size(), in.rank()));
  }
  WindowGeometry g;
  g.in_dims = in.dimensions();
  for (const WindowDimension& w : window.dimensions) {
    if (w.size < 1 || w.stride < 1 || w.window_dilation < 1 || w.base_dilation < 1) {
      return InvalidArgument(
          fmt::format("{}: window sizes, strides and dilations must be >= 1", op));
    }
    size_t d = g.sizes.size();
    int64_t in_d = g.in_dims[d];
    int64_t padded =
        (in_d == 0 ? 0 : (in_d - 1) * w.base_dilation + 1) + w.padding_low + w.padding_high;
    int64_t span = (w.size - 1) * w.window_dilation + 1;
    g.out_dims.push_back(padded < span ? 0 : (padded - span) / w.stride + 1);
    g.sizes.push_back(w.size);
    g.strides.push_back(w.stride);
    g.dilations.push_back(w.window_dilation);
    g.base_dilations.push_back(w.base_dilation);
    g.pad_low.push_back(w.padding_low);
  }
  return g;
}

// Calls fn(input_offset) for each valid window position of output index `oidx`, row-major.
template <typename F>
void ForEachWindowElement(const WindowGeometry& g, std::span<const int64_t> in_strides,
                          std::span<const int64_t> oidx, std::vector<int64_t>& k, F&& fn) {
  const size_t rank = g.sizes.size();
  std::fill(k.begin(), k.end(), 0);
  if (rank == 0) {
    fn(0);
    return;
  }
  do {
    int64_t off = 0;
    bool valid = true;
    for (size_t d = 0; d < rank; ++d) {
      int64_t pos = oidx[d] * g.strides[d] + k[d] * g.dilations[d] - g.pad_low[d];
      if (pos < 0 || pos % g.base_dilations[d] != 0 || pos / g.base_dilations[d] >= g.in_dims[d]) {
        valid = false;
        break;
      }
      off += (pos / g.base_dilations[d]) * in_strides[d];
    }
    if (valid) fn(off);
  } while (NextIndex(k, g.sizes));
}

}  // namespace

StatusOr<Literal> ApplyBinaryScalar(const CalledComputation& c, const Literal& a,
                                    const Literal& b) {
  if (a.element_type() == b.element_type() && HasFastBinary(c.fast, a.element_type())) {
    Literal r = a;
    PrimitiveTypeSwitch(a.element_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      FastBinary(c.fast, a.data<T>()[0], b.data<T>()[0], r.mutable_data<T>());
    });
    return r;
  }
  return c.fn({a, b});
}

Status CombineArrays(const CalledComputation& c, Literal& dst, const Literal& src) {
  if (dst.element_type() != src.element_type() || dst.element_count() != src.element_count()) {
    return InvalidArgument("combining arrays of different shapes");
  }
  if (HasFastBinary(c.fast, dst.element_type())) {
    PrimitiveTypeSwitch(dst.element_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* d = dst.mutable_data<T>();
      const T* s = src.data<T>();
      for (int64_t i = 0; i < dst.element_count(); ++i) FastBinary(c.fast, d[i], s[i], &d[i]);
    });
    return OkStatus();
  }
  for (int64_t i = 0; i < dst.element_count(); ++i) {
    std::vector<Literal> accs{ScalarAt(dst, i)};
    TPUSIM_RETURN_IF_ERROR(Fold(c, accs, {ScalarAt(src, i)}, "all-reduce"));
    StoreScalar(dst, i, accs[0]);
  }
  return OkStatus();
}

StatusOr<Literal> FoldArrays(const CalledComputation& c, std::span<const Literal* const> members,
                             const KernelOptions& options) {
  if (members.empty()) return InvalidArgument("combining no arrays");
  Literal acc = *members[0];
  const PrimitiveType t = acc.element_type();
  if (!WidensToF32(c, t, options)) {
    for (size_t m = 1; m < members.size(); ++m) {
      TPUSIM_RETURN_IF_ERROR(CombineArrays(c, acc, *members[m]));
    }
    return acc;
  }
  for (const Literal* m : members) {
    if (m->element_type() != t || m->element_count() != acc.element_count()) {
      return InvalidArgument("combining arrays of different shapes");
    }
  }
  std::vector<float> sum(static_cast<size_t>(acc.element_count()));
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = static_cast<float>(acc.GetAsDouble(i));
  for (size_t m = 1; m < members.size(); ++m) {
    for (size_t i = 0; i < sum.size(); ++i) {
      sum[i] += static_cast<float>(members[m]->GetAsDouble(static_cast<int64_t>(i)));
    }
  }
  PrimitiveTypeSwitch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = acc.mutable_data<T>();
    for (size_t i = 0; i < sum.size(); ++i) d[i] = ConvertElement<T>(sum[i]);
  });
  return acc;
}

StatusOr<Literal> Reduce(std::span<const Literal* const> operands,
                         std::span<const Literal* const> inits, std::span<const int64_t> dimensions,
                         const CalledComputation& reducer, const Shape& out,
                         const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckInits(operands, inits, "reduce"));
  const Shape& in = operands[0]->shape();
  std::vector<bool> reduced(static_cast<size_t>(in.rank()), false);
  for (int64_t d : dimensions) {
    if (d < 0 || d >= in.rank() || reduced[static_cast<size_t>(d)]) {
      return InvalidArgument(fmt::format("reduce: bad dimension {} for {}", d, in.ToString(false)));
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> strides = RowMajorStrides(in.dimensions());
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  for (int64_t d = 0; d < in.rank(); ++d) {
    size_t ud = static_cast<size_t>(d);
    (reduced[ud] ? red_dims : kept_dims).push_back(in.dimensions(d));
    (reduced[ud] ? red_strides : kept_strides).push_back(strides[ud]);
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Literal> outs,
                          CreateOutputs(out, operands.size(), options, "reduce"));
  for (const Literal& o : outs) {
    if (o.shape().dimensions() != kept_dims) {
      return InvalidArgument(fmt::format(
          "reduce: result {} should have dims of the kept dimensions", out.ToString(false)));
    }
  }
  const bool empty = Product(red_dims) == 0;
  TPUSIM_RETURN_IF_ERROR(
      RunReduction(operands, inits, reducer, outs, options, "reduce", [&](int64_t o, auto&& fold) {
        if (empty) return;
        std::vector<int64_t> kidx(kept_dims.size());
        DelinearizeIndex(o, kept_dims, kidx);
        int64_t base = 0;
        for (size_t k = 0; k < kidx.size(); ++k) base += kidx[k] * kept_strides[k];
        if (red_dims.empty()) {
          fold(base);
          return;
        }
        std::vector<int64_t> r(red_dims.size(), 0);
        // Odometer over the reduced dims with an incrementally updated offset; innermost dim
        // fastest.
        int64_t off = base;
        const size_t last = red_dims.size() - 1;
        while (true) {
          for (int64_t i = 0; i < red_dims[last]; ++i) fold(off + i * red_strides[last]);
          int64_t k = static_cast<int64_t>(last) - 1;
          for (; k >= 0; --k) {
            size_t uk = static_cast<size_t>(k);
            off += red_strides[uk];
            if (++r[uk] < red_dims[uk]) break;
            off -= red_strides[uk] * red_dims[uk];
            r[uk] = 0;
          }
          if (k < 0) break;
        }
      }));
  return PackOutputs(std::move(outs), out);
}

StatusOr<Literal> ReduceWindow(std::span<const Literal* const> operands,
                               std::span<const Literal* const> inits, const Window& window,
                               const CalledComputation& reducer, const Shape& out,
                               const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckInits(operands, inits, "reduce-window"));
  TPUSIM_ASSIGN_OR_RETURN(WindowGeometry g,
                          MakeWindowGeometry(operands[0]->shape(), window, "reduce-window"));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Literal> outs,
                          CreateOutputs(out, operands.size(), options, "reduce-window"));
  for (const Literal& o : outs) {
    if (o.shape().dimensions() != g.out_dims) {
      return InvalidArgument(fmt::format("reduce-window: result {} should have dims [{}]",
                                         o.shape().ToString(false), fmt::join(g.out_dims, ",")));
    }
  }
  std::vector<int64_t> in_strides = RowMajorStrides(g.in_dims);
  TPUSIM_RETURN_IF_ERROR(RunReduction(
      operands, inits, reducer, outs, options, "reduce-window", [&](int64_t o, auto&& fold) {
        std::vector<int64_t> oidx(g.out_dims.size()), k(g.sizes.size());
        DelinearizeIndex(o, g.out_dims, oidx);
        ForEachWindowElement(g, in_strides, oidx, k, fold);
      }));
  return PackOutputs(std::move(outs), out);
}

StatusOr<Literal> SelectAndScatter(const Literal& operand, const Literal& source,
                                   const Literal& init, const Window& window,
                                   const CalledComputation& select,
                                   const CalledComputation& scatter, const Shape& out,
                                   const KernelOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(WindowGeometry g,
                          MakeWindowGeometry(operand.shape(), window, "select-and-scatter"));
  if (source.shape().dimensions() != g.out_dims || !out.Compatible(operand.shape()) ||
      init.element_count() != 1 || init.element_type() != out.element_type() ||
      source.element_type() != out.element_type()) {
    return InvalidArgument(fmt::format(
        "select-and-scatter: source {} must have the window output dims [{}]; init and result must "
        "match operand {}",
        source.shape().ToString(false), fmt::join(g.out_dims, ","),
        operand.shape().ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  const int64_t eb = ByteWidth(out.element_type());
  for (int64_t i = 0; i < result.element_count(); ++i) {
    std::memcpy(result.mutable_raw() + i * eb, init.raw(), static_cast<size_t>(eb));
  }
  std::vector<int64_t> in_strides = RowMajorStrides(g.in_dims);
  std::vector<int64_t> oidx(g.out_dims.size()), k(g.sizes.size());
  Status status;
  for (int64_t s = 0; s < source.element_count() && status.ok(); ++s) {
    DelinearizeIndex(s, g.out_dims, oidx);
    int64_t selected = -1;
    ForEachWindowElement(g, in_strides, oidx, k, [&](int64_t off) {
      if (!status.ok()) return;
      if (selected < 0) {
        selected = off;
        return;
      }
      bool keep = true;
      if (select.fast == CalledComputation::Fast::kCompare) {
        keep = PrimitiveTypeSwitch(operand.element_type(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          return ew::Compare(select.direction, select.total_order, operand.data<T>()[selected],
                             operand.data<T>()[off]);
        });
      } else {
        auto r = select.fn({ScalarAt(operand, selected), ScalarAt(operand, off)});
        if (!r.ok()) {
          status = r.status();
          return;
        }
        if (r->element_type() != PrimitiveType::kPred || r->element_count() != 1) {
          status = InvalidArgument("select-and-scatter: select must return pred[]");
          return;
        }
        keep = r->data<bool>()[0];
      }
      if (!keep) selected = off;
    });
    if (!status.ok() || selected < 0) continue;
    auto combined = ApplyBinaryScalar(scatter, ScalarAt(result, selected), ScalarAt(source, s));
    if (!combined.ok()) return combined.status();
    if (combined->element_type() != out.element_type() || combined->element_count() != 1) {
      return InvalidArgument(
          "select-and-scatter: scatter must return a scalar of the operand type");
    }
    StoreScalar(result, selected, *combined);
  }
  TPUSIM_RETURN_IF_ERROR(status);
  return result;
}

StatusOr<Literal> Map(std::span<const Literal* const> operands, const CalledComputation& fn,
                      const Shape& out, const KernelOptions& options) {
  for (const Literal* op : operands) {
    if (op->shape().dimensions() != out.dimensions()) {
      return InvalidArgument(fmt::format("map: operand {} does not match result {}",
                                         op->shape().ToString(false), out.ToString(false)));
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  for (int64_t i = 0; i < result.element_count(); ++i) {
    std::vector<Literal> args;
    for (const Literal* op : operands) args.push_back(ScalarAt(*op, i));
    TPUSIM_ASSIGN_OR_RETURN(Literal r, fn.fn(args));
    if (!r.IsArray() || r.element_count() != 1 || r.element_type() != out.element_type()) {
      return InvalidArgument("map: the computation must return a scalar of the result type");
    }
    StoreScalar(result, i, r);
  }
  return result;
}

}  // namespace tpusim::hlo
