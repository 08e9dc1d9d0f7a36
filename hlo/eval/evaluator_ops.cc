#include "hlo/eval/evaluator_ops.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "hlo/convolution_form.h"
#include "hlo/eval/convert.h"
#include "hlo/eval/custom_call_table.h"
#include "hlo/eval/kernels/batch_norm.h"
#include "hlo/eval/kernels/complex.h"
#include "hlo/eval/kernels/fft.h"
#include "hlo/eval/kernels/convolution.h"
#include "hlo/eval/kernels/data_movement.h"
#include "hlo/eval/kernels/dot.h"
#include "hlo/eval/kernels/partial_reduce.h"
#include "hlo/eval/kernels/ragged_dot.h"
#include "hlo/eval/kernels/elementwise.h"
#include "hlo/eval/kernels/gather_scatter.h"
#include "hlo/eval/kernels/linalg.h"
#include "hlo/eval/kernels/reduce.h"
#include "hlo/eval/kernels/rng.h"
#include "hlo/eval/kernels/sort.h"
#include "hlo/eval/kernels/stochastic_convert.h"

namespace tpusim::hlo {
namespace {

Status Arity(const HloInstruction& inst, const std::vector<const Literal*>& ops, size_t n) {
  if (ops.size() != n) {
    return InvalidArgument(fmt::format("'{}' expects {} operand(s), got {}",
                                       HloOpcodeString(inst.opcode()), n, ops.size()));
  }
  return OkStatus();
}

// Logical dims in physical (major-to-minor) order for a layout; identity without one.
std::vector<int64_t> MajorToMinor(const Shape& s) {
  std::vector<int64_t> order;
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank()) {
    order.assign(s.layout().minor_to_major.rbegin(), s.layout().minor_to_major.rend());
  } else {
    for (int64_t d = 0; d < s.rank(); ++d) order.push_back(d);
  }
  return order;
}

// bitcast: same bytes reinterpreted under the result's layout. With default (row-major) layouts on
// both sides this is a reshape; otherwise values go logical -> physical order of the operand, are
// reinterpreted as the result's physical dims, and go back to the result's logical order.
// An element type of the same width (f16 -> s16, as XLA's GPU tests write) reinterprets the bits,
// as bitcast-convert does.
StatusOr<Literal> Bitcast(const Literal& in, const Shape& out, const KernelOptions& kopt) {
  if (out.element_type() != in.element_type() && out.ElementCount() == in.element_count() &&
      BitWidth(out.element_type()) == BitWidth(in.element_type())) {
    Shape same_type = out;
    same_type.set_element_type(in.element_type());
    TPUSIM_ASSIGN_OR_RETURN(Literal moved, Bitcast(in, same_type, kopt));
    TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out));
    if (result.size_bytes() != moved.size_bytes()) return Internal("bitcast: byte sizes differ");
    std::copy_n(moved.raw(), moved.size_bytes(), result.mutable_raw());
    return result;
  }
  if (out.element_type() != in.element_type() || out.ElementCount() != in.element_count()) {
    return InvalidArgument(fmt::format("bitcast {} -> {} changes the element type or count",
                                       in.shape().ToString(), out.ToString()));
  }
  std::vector<int64_t> in_order = MajorToMinor(in.shape()), out_order = MajorToMinor(out);
  std::vector<int64_t> in_phys_dims, out_phys_dims;
  for (int64_t d : in_order) in_phys_dims.push_back(in.shape().dimensions(d));
  for (int64_t d : out_order) out_phys_dims.push_back(out.dimensions(d));
  TPUSIM_ASSIGN_OR_RETURN(Literal phys,
                          Transpose(in, in_order, Shape(in.element_type(), in_phys_dims), kopt));
  phys.ReshapeInPlace(Shape(out.element_type(), out_phys_dims));
  // out logical dim out_order[i] is physical dim i: inverse permutation.
  std::vector<int64_t> inverse(out_order.size());
  for (size_t i = 0; i < out_order.size(); ++i)
    inverse[static_cast<size_t>(out_order[i])] = static_cast<int64_t>(i);
  return Transpose(phys, inverse, out, kopt);
}

StatusOr<Literal> FillConstant(const Shape& shape, const LiteralValues& v, uint64_t seed,
                               std::string_view name, int64_t max_bytes) {
  if (shape.IsTuple()) {
    if (!v.elided && v.tuple_elements.size() != static_cast<size_t>(shape.tuple_shapes_size())) {
      return InvalidArgument("tuple constant has the wrong number of elements");
    }
    std::vector<Literal> elems;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      TPUSIM_ASSIGN_OR_RETURN(
          Literal e, FillConstant(shape.tuple_shapes(i),
                                  v.elided ? v : v.tuple_elements[static_cast<size_t>(i)], seed,
                                  fmt::format("{}/{}", name, i), max_bytes));
      elems.push_back(std::move(e));
    }
    return Literal::MakeTuple(std::move(elems));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal lit, Literal::Create(shape, max_bytes));
  if (v.elided) {
    FillRandom(lit, seed, name);
    return lit;
  }
  const int64_t n = lit.element_count();
  if (IsComplex(shape.element_type())) {  // (real, imag) pairs
    if (static_cast<int64_t>(v.float_values.size()) != 2 * n) {
      return InvalidArgument(fmt::format("constant has {} value(s) for {}",
                                         v.float_values.size() / 2, shape.ToString(false)));
    }
    for (int64_t j = 0; j < 2 * n; ++j) {
      lit.SetComponentFromDouble(j, v.float_values[static_cast<size_t>(j)]);
    }
    return lit;
  }
  if (IsFloatingPoint(shape.element_type())) {
    if (static_cast<int64_t>(v.float_values.size()) != n) {
      return InvalidArgument(fmt::format("constant has {} value(s) for {}", v.float_values.size(),
                                         shape.ToString(false)));
    }
    for (int64_t i = 0; i < n; ++i) lit.SetFromDouble(i, v.float_values[static_cast<size_t>(i)]);
    return lit;
  }
  if (static_cast<int64_t>(v.int_values.size()) != n) {
    return InvalidArgument(
        fmt::format("constant has {} value(s) for {}", v.int_values.size(), shape.ToString(false)));
  }
  PrimitiveTypeSwitch(shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = lit.mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) d[i] = ConvertElement<T>(v.int_values[static_cast<size_t>(i)]);
  });
  return lit;
}

// rng (distribution=rng_uniform|rng_normal) from (a, b) / (mu, sigma): deterministic from the seed
// and the instruction name (not XLA's stream).
StatusOr<Literal> Rng(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                      const LocalContext& ctx) {
  TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
  if (ctx.rng_state == nullptr) return Internal("rng evaluated without a generator state");
  return RngFromState(inst.distribution(), *ops[0], *ops[1], *ctx.rng_state, inst.shape(),
                      *ctx.kernel_options);
}

// The kernel options of a dot/convolution: in the MXU's summation order
// (EvaluatorOptions::mxu_rows) when it takes one MXU pass — both operands bf16, or rounded to bf16
// (`rounded`: f32 at DEFAULT precision with tpu_default_precision). Multi-pass (HIGH/HIGHEST f32)
// and integer ones keep Eigen's order.
KernelOptions MxuOrderOptions(const std::vector<const Literal*>& ops, bool rounded,
                              const LocalContext& ctx) {
  KernelOptions k = *ctx.kernel_options;
  const bool bf16 = ops.size() == 2 && ops[0]->element_type() == PrimitiveType::kBF16 &&
                    ops[1]->element_type() == PrimitiveType::kBF16;
  const bool one_pass = rounded || bf16;
  k.mxu_k_tile = ctx.options->tpu_default_precision && one_pass ? ctx.options->mxu_rows : 0;
  return k;
}

}  // namespace

StatusOr<Literal> MakeConstant(const Shape& shape, const LiteralValues& values, uint64_t seed,
                               std::string_view name, int64_t max_bytes) {
  return FillConstant(shape, values, seed, name, max_bytes);
}

namespace {

// topk(x), k=K, largest=L: along the last dimension, the K largest (smallest) values, ties by
// lower index first, and their s32 indices (XLA's TopK semantics; NaNs compare as the largest).
StatusOr<Literal> TopK(const HloInstruction& inst, const Literal& x, const Shape& out,
                       const KernelOptions& kopt) {
  const std::string* k_attr = inst.FindRawAttribute("k");
  const std::string* largest_attr = inst.FindRawAttribute("largest");
  const bool largest = largest_attr == nullptr || *largest_attr != "false";
  const Shape& xs = x.shape();
  if (k_attr == nullptr || !out.IsTuple() || out.tuple_shapes_size() != 2 || xs.rank() < 1) {
    return InvalidArgument("topk needs k= and a (values, indices) result");
  }
  const int64_t n = xs.dimensions(xs.rank() - 1);
  const int64_t k = out.tuple_shapes(0).dimensions(xs.rank() - 1);
  if (k > n) return InvalidArgument("topk: k is larger than the last dimension");
  TPUSIM_ASSIGN_OR_RETURN(Literal values, Literal::Create(out.tuple_shapes(0), kopt.max_bytes));
  TPUSIM_ASSIGN_OR_RETURN(Literal indices, Literal::Create(out.tuple_shapes(1), kopt.max_bytes));
  const int64_t rows = n == 0 ? 0 : xs.ElementCount() / n;
  std::vector<int64_t> order(static_cast<size_t>(n));
  auto key = [&](int64_t row, int64_t i) {
    const double v = x.GetAsDouble(row * n + i);
    return std::isnan(v) ? std::numeric_limits<double>::infinity() : v;
  };
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? key(row, a) > key(row, b) : key(row, a) < key(row, b);
    });
    for (int64_t i = 0; i < k; ++i) {
      const int64_t src = order[static_cast<size_t>(i)];
      values.SetFromDouble(row * k + i, x.GetAsDouble(row * n + src));
      indices.SetFromDouble(row * k + i, static_cast<double>(src));
    }
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(values));
  parts.push_back(std::move(indices));
  return Literal::MakeTuple(std::move(parts));
}

// The called computation `c` of `inst`, or InvalidArgument if it has none.
StatusOr<const CalledComputation*> Called(const HloInstruction& inst, const HloComputation* c,
                                          const LocalContext& ctx) {
  if (c == nullptr) {
    return InvalidArgument(
        fmt::format("'{}' needs a called computation", HloOpcodeString(inst.opcode())));
  }
  return &ctx.called(c);
}

// One function per family of opcodes: the result, or nullopt if the opcode is not the family's.
using Evaluated = std::optional<StatusOr<Literal>>;

bool HasComplexLeaf(const Shape& s) {
  return AnyLeafType(s, [](PrimitiveType t) { return IsComplex(t); });
}

// Ops that only move, select or pass values through (byte copies, any element type): evaluated by
// the other families for complex values too.
bool MovesComplexValues(HloOpcode op) {
  switch (op) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kAddDependency:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kGather:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kConvert:
    case HloOpcode::kDot:
    case HloOpcode::kReduce:
      return true;
    default:
      return false;
  }
}

// fft, and every op on complex values (c64/c128): the complex kernels for arithmetic, the other
// families for the ops that move values (MovesComplexValues), an Unimplemented error naming the op
// and the type for the rest.
Evaluated EvaluateComplexOp(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                            const LocalContext& ctx) {
  const KernelOptions& kopt = *ctx.kernel_options;
  const Shape& out = inst.shape();
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kFft) {
    TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
    return Fft(*ops[0], inst.fft_type(), inst.fft_length(), out, kopt);
  }
  const HloInstruction* complex_operand = nullptr;
  for (const HloInstruction* o : inst.operands()) {
    if (HasComplexLeaf(o->shape())) complex_operand = o;
  }
  if (complex_operand == nullptr && !HasComplexLeaf(out)) return std::nullopt;
  if (MovesComplexValues(op)) return std::nullopt;
  const PrimitiveType t =
      complex_operand != nullptr && complex_operand->shape().IsArray()
          ? complex_operand->shape().element_type()
          : (out.IsArray() ? out.element_type() : PrimitiveType::kC64);
  if (op == HloOpcode::kCompare) {
    TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
    return ComplexCompare(inst.comparison_direction(), *ops[0], *ops[1], out, kopt);
  }
  if (op == HloOpcode::kSelect) {
    TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 3));
    return ComplexSelect(*ops[0], *ops[1], *ops[2], out, kopt);
  }
  const HloOpcodeCategory cat = HloOpcodeCategoryOf(op);
  if (cat == HloOpcodeCategory::kUnary && op != HloOpcode::kReducePrecision) {
    TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
    return ComplexUnary(op, *ops[0], out, kopt);
  }
  if (cat == HloOpcodeCategory::kBinary) {
    TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
    return ComplexBinary(op, *ops[0], *ops[1], out, kopt);
  }
  return Unimplemented(fmt::format("'{}' on {} values is not supported by the CPU evaluator",
                                   HloOpcodeString(op), PrimitiveTypeName(t)));
}

// Constants and the elementwise opcodes with an attribute or a mixed-type operand (convert,
// bitcast-convert, reduce-precision, compare, select, clamp).
Evaluated EvaluateMixedTypeOp(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                              const LocalContext& ctx) {
  const KernelOptions& kopt = *ctx.kernel_options;
  const Shape& out = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kConstant:
      return MakeConstant(out, inst.literal(), kElidedConstantSeed, inst.name(), kopt.max_bytes);
    case HloOpcode::kConvert:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return EvaluateConvert(*ops[0], out, kopt);
    case HloOpcode::kBitcastConvert:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return EvaluateBitcastConvert(*ops[0], out, kopt);
    case HloOpcode::kReducePrecision:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return EvaluateReducePrecision(*ops[0], inst.exponent_bits(), inst.mantissa_bits(), kopt);
    case HloOpcode::kCompare:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      return EvaluateCompare(inst.comparison_direction(), inst.comparison_type(), *ops[0], *ops[1],
                             out, kopt);
    case HloOpcode::kSelect:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 3));
      return EvaluateSelect(*ops[0], *ops[1], *ops[2], out, kopt);
    case HloOpcode::kClamp:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 3));
      return EvaluateClamp(*ops[0], *ops[1], *ops[2], out, kopt);
    case HloOpcode::kStochasticConvert:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      return EvaluateStochasticConvert(*ops[0], *ops[1], out, kopt);
    default:
      return std::nullopt;
  }
}

// Parameters, tuples, tokens, ids, copies and the ops that pass an operand through.
Evaluated EvaluateStructural(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                             const LocalContext& ctx) {
  const KernelOptions& kopt = *ctx.kernel_options;
  const Shape& out = inst.shape();
  const HloOpcode op = inst.opcode();
  switch (inst.opcode()) {
    case HloOpcode::kParameter:
      return Internal("parameters are bound by the caller");
    case HloOpcode::kTuple: {
      std::vector<Literal> elems;
      for (const Literal* l : ops) elems.push_back(*l);
      return Literal::MakeTuple(std::move(elems));
    }
    case HloOpcode::kGetTupleElement: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      if (!ops[0]->IsTuple() || inst.tuple_index() < 0 ||
          inst.tuple_index() >= ops[0]->tuple_size()) {
        return InvalidArgument(fmt::format("index={} out of range for {}", inst.tuple_index(),
                                           ops[0]->shape().ToString(false)));
      }
      return ops[0]->element(inst.tuple_index());
    }
    case HloOpcode::kCopy:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return *ops[0];
    case HloOpcode::kAddDependency:
      if (ops.empty()) return InvalidArgument("add-dependency needs an operand");
      return *ops[0];
    case HloOpcode::kCopyStart: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      std::vector<Literal> elems{*ops[0], *ops[0]};
      if (out.IsTuple()) {
        for (int64_t e = 2; e < out.tuple_shapes_size(); ++e) {
          TPUSIM_ASSIGN_OR_RETURN(Literal z, Literal::Create(out.tuple_shapes(e)));
          elems.push_back(std::move(z));
        }
      }
      return Literal::MakeTuple(std::move(elems));
    }
    case HloOpcode::kCopyDone:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return ops[0]->IsTuple() ? ops[0]->element(1) : *ops[0];
    case HloOpcode::kAfterAll:
      return Literal::MakeToken();
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId: {
      TPUSIM_ASSIGN_OR_RETURN(Literal r, Literal::Create(out, kopt.max_bytes));
      r.SetFromDouble(
          0, static_cast<double>(op == HloOpcode::kReplicaId ? ctx.replica_id : ctx.partition_id));
      return r;
    }
    case HloOpcode::kGetDimensionSize: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      if (inst.dimensions().size() != 1 || inst.dimensions(0) < 0 ||
          inst.dimensions(0) >= ops[0]->shape().rank()) {
        return InvalidArgument("get-dimension-size needs a valid dimensions={d}");
      }
      TPUSIM_ASSIGN_OR_RETURN(Literal r, Literal::Create(out, kopt.max_bytes));
      r.SetFromDouble(0, static_cast<double>(ops[0]->shape().dimensions(inst.dimensions(0))));
      return r;
    }
    case HloOpcode::kSetDimensionSize: {
      // The evaluator computes static shapes: a size below the bound is the dynamic padder's to
      // rewrite first (compiler/passes/dynamic_padder.h; driver::RunOnHostCpu and run's check do).
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      const int64_t d = inst.dimensions().empty() ? -1 : inst.dimensions(0);
      if (d < 0 || d >= ops[0]->shape().rank() || ops[1]->element_count() != 1) {
        return InvalidArgument("set-dimension-size needs (x, size), dimensions={d}");
      }
      const double n = ops[1]->GetAsDouble(0);
      if (n != static_cast<double>(ops[0]->shape().dimensions(d))) {
        return Unimplemented(fmt::format(
            "set-dimension-size to {} in dimension {} of bound {}: the evaluator computes static "
            "shapes; evaluate the module after the dynamic padder (compiler::DynamicPadder, as "
            "`tpusim cpu` and `tpusim run` do)",
            n, d, ops[0]->shape().dimensions(d)));
      }
      return *ops[0];
    }
    default:
      return std::nullopt;
  }
}

// The ops that move, replicate or index elements without arithmetic.
Evaluated EvaluateDataMovement(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                               const LocalContext& ctx) {
  const KernelOptions& kopt = *ctx.kernel_options;
  const Shape& out = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return Broadcast(*ops[0], inst.dimensions(), out, kopt);
    case HloOpcode::kReshape:
    case HloOpcode::kDynamicReshape:
      if (ops.empty()) return InvalidArgument("reshape needs an operand");
      return Reshape(*ops[0], out);
    case HloOpcode::kBitcast:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return Bitcast(*ops[0], out, kopt);
    case HloOpcode::kTranspose:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return Transpose(*ops[0], inst.dimensions(), out, kopt);
    case HloOpcode::kSlice:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return Slice(*ops[0], inst.slice_starts(), inst.slice_limits(), inst.slice_strides(), out,
                   kopt);
    case HloOpcode::kDynamicSlice: {
      if (ops.empty()) return InvalidArgument("dynamic-slice needs an operand");
      std::vector<const Literal*> starts(ops.begin() + 1, ops.end());
      return DynamicSlice(*ops[0], starts, out, kopt);
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (ops.size() < 2) return InvalidArgument("dynamic-update-slice needs operand and update");
      std::vector<const Literal*> starts(ops.begin() + 2, ops.end());
      return DynamicUpdateSlice(*ops[0], *ops[1], starts, out, kopt);
    }
    case HloOpcode::kConcatenate:
      if (inst.dimensions().size() != 1) return InvalidArgument("concatenate needs dimensions={d}");
      return Concatenate(ops, inst.dimensions(0), out, kopt);
    case HloOpcode::kPad:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      return Pad(*ops[0], *ops[1], inst.padding_config(), out, kopt);
    case HloOpcode::kReverse:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return Reverse(*ops[0], inst.dimensions(), out, kopt);
    case HloOpcode::kIota:
      return Iota(out, inst.iota_dimension(), kopt);
    case HloOpcode::kGather:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      return Gather(*ops[0], *ops[1], inst.gather_dimension_numbers(), inst.gather_slice_sizes(),
                    out, kopt);
    default:
      return std::nullopt;
  }
}

// dot and convolution, in the MXU's accumulation order (TPU DEFAULT precision rounds f32 operands
// to bf16 when ctx.options->tpu_default_precision).
Evaluated EvaluateMxuOp(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                        const LocalContext& ctx) {
  const KernelOptions& kopt = *ctx.kernel_options;
  const Shape& out = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kDot: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      const bool round = ctx.options->tpu_default_precision &&
                         inst.operand_precision(0) == Precision::kDefault &&
                         inst.operand_precision(1) == Precision::kDefault;
      return DotGeneral(*ops[0], *ops[1], inst.dot_dimension_numbers(), out,
                        MxuOrderOptions(ops, round, ctx), round);
    }
    case HloOpcode::kRaggedDot: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 3));
      TPUSIM_ASSIGN_OR_RETURN(const RaggedDotDims dims, GetRaggedDotDims(inst));
      const bool round = ctx.options->tpu_default_precision &&
                         inst.operand_precision(0) == Precision::kDefault &&
                         inst.operand_precision(1) == Precision::kDefault;
      return RaggedDot(*ops[0], *ops[1], *ops[2], inst.dot_dimension_numbers(), dims,
                       RaggedOutputDimension(inst, dims), out,
                       MxuOrderOptions({ops[0], ops[1]}, round, ctx), round);
    }
    case HloOpcode::kConvolution: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      ConvolutionParams p{inst.window(), inst.convolution_dimension_numbers(),
                          inst.feature_group_count(), inst.batch_group_count()};
      const Shape& kernel = inst.operand(1)->shape();
      p.columns_in_n = kernel.has_layout() &&
                       KernelFoldsWindowColumnsIntoN(kernel.layout().minor_to_major, p.dnums);
      // TPU DEFAULT precision rounds f32 convolution operands to bf16 exactly as it does dot
      // operands (the convolution runs on the MXU; tpusim lowers it to a dot).
      const bool round = ctx.options->tpu_default_precision &&
                         inst.operand_precision(0) == Precision::kDefault &&
                         inst.operand_precision(1) == Precision::kDefault;
      const KernelOptions mxu_kopt = MxuOrderOptions(ops, round, ctx);
      if (!round) return Convolution(*ops[0], *ops[1], p, out, mxu_kopt);
      Literal rounded[2];
      const Literal* args[2] = {ops[0], ops[1]};
      for (int i = 0; i < 2; ++i) {
        if (ops[i]->element_type() != PrimitiveType::kF32) continue;
        TPUSIM_ASSIGN_OR_RETURN(rounded[i], Literal::Create(ops[i]->shape(), kopt.max_bytes));
        const float* src = ops[i]->data<float>();
        float* dst = rounded[i].mutable_data<float>();
        for (int64_t e = 0; e < ops[i]->element_count(); ++e) {
          dst[e] = static_cast<float>(Eigen::bfloat16(src[e]));
        }
        args[i] = &rounded[i];
      }
      return Convolution(*args[0], *args[1], p, out, mxu_kopt);
    }
    default:
      return std::nullopt;
  }
}

// The ops that apply a called computation (reduce, reduce-window, select-and-scatter, map, sort,
// scatter).
Evaluated EvaluateWithComputation(const HloInstruction& inst,
                                  const std::vector<const Literal*>& ops, const LocalContext& ctx) {
  const KernelOptions& kopt = *ctx.kernel_options;
  const Shape& out = inst.shape();
  auto called = [&](const HloComputation* c) { return Called(inst, c, ctx); };
  switch (inst.opcode()) {
    case HloOpcode::kReduce: {
      if (ops.empty() || ops.size() % 2 != 0)
        return InvalidArgument("reduce needs operands and inits");
      const size_t n = ops.size() / 2;
      std::vector<const Literal*> operands(ops.begin(), ops.begin() + static_cast<int64_t>(n));
      std::vector<const Literal*> inits(ops.begin() + static_cast<int64_t>(n), ops.end());
      TPUSIM_ASSIGN_OR_RETURN(const CalledComputation* c, called(inst.to_apply()));
      return Reduce(operands, inits, inst.dimensions(), *c, out, kopt);
    }
    case HloOpcode::kReduceWindow: {
      if (ops.empty() || ops.size() % 2 != 0)
        return InvalidArgument("reduce-window needs operands and inits");
      const size_t n = ops.size() / 2;
      std::vector<const Literal*> operands(ops.begin(), ops.begin() + static_cast<int64_t>(n));
      std::vector<const Literal*> inits(ops.begin() + static_cast<int64_t>(n), ops.end());
      TPUSIM_ASSIGN_OR_RETURN(const CalledComputation* c, called(inst.to_apply()));
      return ReduceWindow(operands, inits, inst.window(), *c, out, kopt);
    }
    case HloOpcode::kSelectAndScatter: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 3));
      TPUSIM_ASSIGN_OR_RETURN(const CalledComputation* sel, called(inst.select()));
      TPUSIM_ASSIGN_OR_RETURN(const CalledComputation* sc, called(inst.scatter()));
      return SelectAndScatter(*ops[0], *ops[1], *ops[2], inst.window(), *sel, *sc, out, kopt);
    }
    case HloOpcode::kMap: {
      TPUSIM_ASSIGN_OR_RETURN(const CalledComputation* c, called(inst.to_apply()));
      return Map(ops, *c, out, kopt);
    }
    case HloOpcode::kSort: {
      if (inst.dimensions().size() != 1) return InvalidArgument("sort needs dimensions={d}");
      TPUSIM_ASSIGN_OR_RETURN(const CalledComputation* c, called(inst.to_apply()));
      return Sort(ops, inst.dimensions(0), *c, out, kopt);
    }
    case HloOpcode::kScatter: {
      if (ops.size() < 3 || ops.size() % 2 != 1)
        return InvalidArgument("scatter needs 2N+1 operands");
      const size_t n = (ops.size() - 1) / 2;
      std::vector<const Literal*> operands(ops.begin(), ops.begin() + static_cast<int64_t>(n));
      std::vector<const Literal*> updates(ops.begin() + static_cast<int64_t>(n) + 1, ops.end());
      TPUSIM_ASSIGN_OR_RETURN(const CalledComputation* c, called(inst.to_apply()));
      return Scatter(operands, *ops[n], updates, inst.scatter_dimension_numbers(), *c, out, kopt);
    }
    case HloOpcode::kCustomCall: {
      if (!IsPartialReduce(inst)) return std::nullopt;
      TPUSIM_ASSIGN_OR_RETURN(PartialReduceForm f, GetPartialReduceForm(inst));
      const size_t n = static_cast<size_t>(f.operands);
      TPUSIM_ASSIGN_OR_RETURN(const CalledComputation* c, called(inst.called_computations()[0]));
      return PartialReduce(std::span(ops).first(n), std::span(ops).subspan(n), f, *c, out);
    }
    default:
      return std::nullopt;
  }
}

// Random numbers, batch-norm, linear algebra, top-k and custom-calls.
Evaluated EvaluateLibraryOp(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                            const LocalContext& ctx) {
  const KernelOptions& kopt = *ctx.kernel_options;
  const Shape& out = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kRngBitGenerator:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return RngBitGenerator(*ops[0], out, inst.rng_algorithm(), kopt);
    case HloOpcode::kRng:
      return Rng(inst, ops, ctx);
    case HloOpcode::kBatchNormTraining:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 3));
      return BatchNormTraining(*ops[0], *ops[1], *ops[2], inst.epsilon(), inst.feature_index(), out,
                               kopt);
    case HloOpcode::kBatchNormInference:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 5));
      return BatchNormInference(*ops[0], *ops[1], *ops[2], *ops[3], *ops[4], inst.epsilon(),
                                inst.feature_index(), out, kopt);
    case HloOpcode::kBatchNormGrad:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 5));
      return BatchNormGrad(*ops[0], *ops[1], *ops[2], *ops[3], *ops[4], inst.epsilon(),
                           inst.feature_index(), out, kopt);
    case HloOpcode::kCholesky: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      TPUSIM_ASSIGN_OR_RETURN(CholeskyOptions o, GetCholeskyOptions(inst));
      return Cholesky(*ops[0], o, out, kopt);
    }
    case HloOpcode::kTriangularSolve: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      TPUSIM_ASSIGN_OR_RETURN(TriangularSolveOptions o, GetTriangularSolveOptions(inst));
      return TriangularSolve(*ops[0], *ops[1], o, out, kopt);
    }
    case HloOpcode::kTopK: {
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return TopK(inst, *ops[0], out, kopt);
    }
    case HloOpcode::kCustomCall: {
      int64_t trips = -1;
      CustomCallInfo info{inst.custom_call_target(), inst.backend_config(), inst.name(), &out,
                          &trips};
      StatusOr<Literal> r = EvaluateCustomCall(info, ops, kopt);
      if (r.ok() && trips >= 0 && ctx.options != nullptr) {
        ctx.options->RecordLoopTrips(inst.name(), trips);
      }
      return r;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

StatusOr<Literal> EvaluateLocalInstruction(const HloInstruction& inst,
                                           const std::vector<const Literal*>& ops,
                                           const LocalContext& ctx) {
  const KernelOptions& kopt = *ctx.kernel_options;
  const Shape& out = inst.shape();
  const HloOpcode op = inst.opcode();
  for (auto family : {EvaluateComplexOp, EvaluateMixedTypeOp, EvaluateStructural, EvaluateDataMovement,
                      EvaluateMxuOp, EvaluateWithComputation, EvaluateLibraryOp}) {
    if (Evaluated result = family(inst, ops, ctx)) return *std::move(result);
  }
  switch (HloOpcodeCategoryOf(op)) {
    case HloOpcodeCategory::kUnary:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 1));
      return EvaluateUnary(op, *ops[0], out, kopt);
    case HloOpcodeCategory::kBinary:
      TPUSIM_RETURN_IF_ERROR(Arity(inst, ops, 2));
      return EvaluateBinary(op, *ops[0], *ops[1], out, kopt);
    default:
      break;
  }
  return Unimplemented(
      fmt::format("opcode '{}' is not supported by the CPU evaluator", HloOpcodeString(op)));
}

}  // namespace tpusim::hlo
