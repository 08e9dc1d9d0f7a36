#include "hlo/eval/custom_call_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "hlo/eval/kernels/eigh.h"
#include "hlo/eval/kernels/elementwise_ops.h"
#include "hlo/eval/kernels/index_util.h"
#include "hlo/eval/kernels/householder_qr.h"
#include "hlo/eval/kernels/linalg.h"
#include "hlo/kernel_cost_estimate.h"

namespace tpusim::hlo {
namespace {

using Handler = std::function<StatusOr<Literal>(
    const CustomCallInfo&, std::span<const Literal* const>, const KernelOptions&)>;

constexpr double kSqrt2 = 1.4142135623730950488;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;
// The expansion's f32 constants (custom_call_expander.cc rounds each double to f32).
constexpr float kInvSqrt2F = static_cast<float>(1.0 / kSqrt2);
constexpr float kInvSqrt2PiF = static_cast<float>(kInvSqrt2Pi);
constexpr float kSqrt2OverPiF = static_cast<float>(kSqrt2OverPi);
constexpr float kGeluCubicF = static_cast<float>(0.044715);

Status Arity(const CustomCallInfo& info, std::span<const Literal* const> ops, size_t n) {
  if (ops.size() != n) {
    return InvalidArgument(fmt::format("custom-call '{}' ({}): expects {} operand(s), got {}",
                                       info.instruction_name, info.target, n, ops.size()));
  }
  for (const Literal* op : ops) {
    if (!op->IsArray()) {
      return InvalidArgument(fmt::format("custom-call '{}' ({}): operands must be arrays",
                                         info.instruction_name, info.target));
    }
  }
  return OkStatus();
}

// The TPU's arithmetic (KernelOptions::tpu_expansions) applies when every operand and the result
// are f32 arrays — exactly when compiler/passes/custom_call_expander.cc expands the call.
bool TpuF32(const CustomCallInfo& info, std::span<const Literal* const> ops,
            const KernelOptions& options) {
  if (!options.tpu_expansions || !info.result_shape->IsArray() ||
      info.result_shape->element_type() != PrimitiveType::kF32) {
    return false;
  }
  for (const Literal* op : ops) {
    if (!op->IsArray() || op->element_type() != PrimitiveType::kF32) return false;
  }
  return true;
}

// y[i] = f(x[i]) for a result with x's dims; f32(x[i]) instead under TpuF32 (the expansion's f32
// op sequence).
StatusOr<Literal> Pointwise(const CustomCallInfo& info, std::span<const Literal* const> ops,
                            const KernelOptions& options, double (*f)(double),
                            float (*f32)(float)) {
  TPUSIM_RETURN_IF_ERROR(Arity(info, ops, 1));
  if (!info.result_shape->IsArray() ||
      info.result_shape->dimensions() != ops[0]->shape().dimensions()) {
    return InvalidArgument(
        fmt::format("custom-call '{}' ({}): result {} must have the operand's dims",
                    info.instruction_name, info.target, info.result_shape->ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, Literal::Create(*info.result_shape, options.max_bytes));
  if (TpuF32(info, ops, options)) {
    const float* x = ops[0]->data<float>();
    float* y = out.mutable_data<float>();
    for (int64_t i = 0; i < out.element_count(); ++i) y[i] = f32(x[i]);
    return out;
  }
  for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromDouble(i, f(ops[0]->GetAsDouble(i)));
  return out;
}

double Phi(double x) { return 0.5 * (1.0 + std::erf(x / kSqrt2)); }

// The dimension named by backend_config ("2", "-1"; empty = last), checked against `rank`.
StatusOr<int64_t> ConfigDim(const CustomCallInfo& info, int64_t rank) {
  std::string_view s = info.backend_config;
  while (!s.empty() && (s.front() == ' ' || s.front() == '"')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '"')) s.remove_suffix(1);
  int64_t dim = rank - 1;
  if (!s.empty()) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), dim);
    if (ec != std::errc() || p != s.data() + s.size()) {
      return InvalidArgument(
          fmt::format("custom-call '{}' ({}): backend_config \"{}\" is not a "
                      "dimension number",
                      info.instruction_name, info.target, info.backend_config));
    }
    if (dim < 0) dim += rank;
  }
  if (dim < 0 || dim >= rank) {
    return InvalidArgument(
        fmt::format("custom-call '{}' ({}): dimension {} out of range for rank {}",
                    info.instruction_name, info.target, dim, rank));
  }
  return dim;
}

// Calls fn(base, stride, n) for every 1-D line along `dim` of an array of `dims`.
template <typename F>
void ForEachLine(const std::vector<int64_t>& dims, int64_t dim, F&& fn) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> outer = dims;
  outer[static_cast<size_t>(dim)] = 1;
  ForEachIndex(outer, [&](std::span<const int64_t> idx) {
    int64_t base = 0;
    for (size_t k = 0; k < idx.size(); ++k) base += idx[k] * strides[k];
    fn(base, strides[static_cast<size_t>(dim)], dims[static_cast<size_t>(dim)]);
  });
}

StatusOr<Literal> Softmax(const CustomCallInfo& info, std::span<const Literal* const> ops,
                          const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(Arity(info, ops, 1));
  const Literal& x = *ops[0];
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim, ConfigDim(info, x.shape().rank()));
  TPUSIM_ASSIGN_OR_RETURN(Literal out, Literal::Create(*info.result_shape, options.max_bytes));
  if (out.element_count() != x.element_count())
    return InvalidArgument("AwsNeuronSoftmax: shape mismatch");
  if (TpuF32(info, ops, options)) {  // max-reduce, subtract, exp, add-reduce, divide
    const float* xs = x.data<float>();
    float* ys = out.mutable_data<float>();
    ForEachLine(x.shape().dimensions(), dim, [&](int64_t base, int64_t stride, int64_t n) {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < n; ++i) m = ew::Max(m, xs[base + i * stride]);
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        const float e = std::exp(xs[base + i * stride] - m);
        ys[base + i * stride] = e;
        sum += e;
      }
      for (int64_t i = 0; i < n; ++i) ys[base + i * stride] = ys[base + i * stride] / sum;
    });
    return out;
  }
  ForEachLine(x.shape().dimensions(), dim, [&](int64_t base, int64_t stride, int64_t n) {
    double m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, x.GetAsDouble(base + i * stride));
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x.GetAsDouble(base + i * stride) - m);
    for (int64_t i = 0; i < n; ++i) {
      out.SetFromDouble(base + i * stride, std::exp(x.GetAsDouble(base + i * stride) - m) / sum);
    }
  });
  return out;
}

StatusOr<Literal> SoftmaxBackward(const CustomCallInfo& info, std::span<const Literal* const> ops,
                                  const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(Arity(info, ops, 2));
  const Literal& y = *ops[0];
  const Literal& dy = *ops[1];
  if (y.shape().dimensions() != dy.shape().dimensions()) {
    return InvalidArgument("AwsNeuronSoftmaxBackward: y and dy must have the same dims");
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim, ConfigDim(info, y.shape().rank()));
  TPUSIM_ASSIGN_OR_RETURN(Literal out, Literal::Create(*info.result_shape, options.max_bytes));
  if (out.element_count() != y.element_count())
    return InvalidArgument("AwsNeuronSoftmaxBackward: shape mismatch");
  if (TpuF32(info, ops, options)) {  // y * (dy - sum(dy * y))
    const float* ys = y.data<float>();
    const float* dys = dy.data<float>();
    float* outs = out.mutable_data<float>();
    ForEachLine(y.shape().dimensions(), dim, [&](int64_t base, int64_t stride, int64_t n) {
      float s = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        const float p = dys[base + i * stride] * ys[base + i * stride];
        s += p;
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = base + i * stride;
        outs[k] = ys[k] * (dys[k] - s);
      }
    });
    return out;
  }
  ForEachLine(y.shape().dimensions(), dim, [&](int64_t base, int64_t stride, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i)
      s += y.GetAsDouble(base + i * stride) * dy.GetAsDouble(base + i * stride);
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = base + i * stride;
      out.SetFromDouble(k, y.GetAsDouble(k) * (dy.GetAsDouble(k) - s));
    }
  });
  return out;
}

StatusOr<Literal> RmsNorm(const CustomCallInfo& info, std::span<const Literal* const> ops,
                          const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(Arity(info, ops, 3));
  const Literal& x = *ops[0];
  const Literal& w = *ops[1];
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim, ConfigDim(info, x.shape().rank()));
  const int64_t n = x.shape().dimensions(dim);
  if (w.shape().rank() != 1 || w.shape().dimensions(0) != n || ops[2]->element_count() != 1) {
    return InvalidArgument(
        fmt::format("AwsNeuronRmsNorm '{}': weight {} must be [{}] and eps a scalar",
                    info.instruction_name, w.shape().ToString(false), n));
  }
  const double eps = ops[2]->GetAsDouble(0);
  TPUSIM_ASSIGN_OR_RETURN(Literal out, Literal::Create(*info.result_shape, options.max_bytes));
  if (out.element_count() != x.element_count())
    return InvalidArgument("AwsNeuronRmsNorm: shape mismatch");
  if (TpuF32(info, ops, options)) {  // (x * rsqrt(sum(x * x) * (1/n) + eps)) * w
    const float* xs = x.data<float>();
    const float* ws = w.data<float>();
    const float eps_f = ops[2]->data<float>()[0];
    const float inv_n = static_cast<float>(1.0 / static_cast<double>(std::max<int64_t>(1, n)));
    float* ys = out.mutable_data<float>();
    ForEachLine(x.shape().dimensions(), dim, [&](int64_t base, int64_t stride, int64_t len) {
      float ms = 0.0f;
      for (int64_t i = 0; i < len; ++i) {
        const float sq = xs[base + i * stride] * xs[base + i * stride];
        ms += sq;
      }
      const float mean = ms * inv_n;
      const float r = 1.0f / std::sqrt(mean + eps_f);  // kernels/elementwise.cc kRsqrt
      for (int64_t i = 0; i < len; ++i) {
        const float xr = xs[base + i * stride] * r;
        ys[base + i * stride] = xr * ws[i];
      }
    });
    return out;
  }
  ForEachLine(x.shape().dimensions(), dim, [&](int64_t base, int64_t stride, int64_t len) {
    double ms = 0;
    for (int64_t i = 0; i < len; ++i) {
      double v = x.GetAsDouble(base + i * stride);
      ms += v * v;
    }
    double r = 1.0 / std::sqrt(ms / static_cast<double>(std::max<int64_t>(len, 1)) + eps);
    for (int64_t i = 0; i < len; ++i) {
      out.SetFromDouble(base + i * stride, x.GetAsDouble(base + i * stride) * r * w.GetAsDouble(i));
    }
  });
  return out;
}

// The identity y = x of a marker target: a host<->device transfer (AwsNeuronTransferWithStaticRing,
// MoveToHost, MoveToDevice, annotate_device_placement), a sharding annotation (Sharding,
// xla.sdy.FuncResultSharding: values are the same on one device and partitioned) or a layout
// annotation (LayoutConstraint: a copy into another layout).
Handler Identity(const char* target) {
  return [target](const CustomCallInfo& info, std::span<const Literal* const> ops,
                  const KernelOptions&) -> StatusOr<Literal> {
    if (ops.size() != 1 || !info.result_shape->Compatible(ops[0]->shape())) {
      return InvalidArgument(fmt::format("custom-call '{}' ({}): result {} must equal operand 0",
                                         info.instruction_name, target,
                                         info.result_shape->ToString(false)));
    }
    Literal out = *ops[0];
    if (out.IsArray()) out.ReshapeInPlace(*info.result_shape);
    return out;
  };
}

const std::map<std::string, Handler, std::less<>>& Table() {
  static const auto* table = new std::map<std::string, Handler, std::less<>>{
      {"AwsNeuronTransferWithStaticRing", Identity("AwsNeuronTransferWithStaticRing")},
      {"Sharding", Identity("Sharding")},
      {"xla.sdy.FuncResultSharding", Identity("xla.sdy.FuncResultSharding")},
      // Annotations of layout and memory placement (compiler/passes/annotation_custom_calls.h).
      {"LayoutConstraint", Identity("LayoutConstraint")},
      {"MoveToHost", Identity("MoveToHost")},
      {"MoveToDevice", Identity("MoveToDevice")},
      {"annotate_device_placement", Identity("annotate_device_placement")},
      {"AwsNeuronGelu",
       [](const CustomCallInfo& i, std::span<const Literal* const> o, const KernelOptions& k) {
         return Pointwise(
             i, o, k, [](double x) { return x * Phi(x); },
             [](float x) { return (x * 0.5f) * (1.0f + std::erf(x * kInvSqrt2F)); });
       }},
      {"AwsNeuronGeluApprxTanh",
       [](const CustomCallInfo& i, std::span<const Literal* const> o, const KernelOptions& k) {
         return Pointwise(
             i, o, k,
             [](double x) {
               return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
             },
             [](float x) {
               const float x3 = (x * x) * x;
               const float inner = kSqrt2OverPiF * (x + kGeluCubicF * x3);
               return (x * 0.5f) * (1.0f + std::tanh(inner));
             });
       }},
      {"AwsNeuronGeluBackward",
       [](const CustomCallInfo& i, std::span<const Literal* const> o, const KernelOptions& k) {
         return Pointwise(
             i, o, k, [](double x) { return Phi(x) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x); },
             [](float x) {
               const float cdf = 0.5f * (1.0f + std::erf(x * kInvSqrt2F));
               const float pdf = std::exp((x * x) * -0.5f) * kInvSqrt2PiF;
               return cdf + x * pdf;
             });
       }},
      {"AwsNeuronSoftmax", Softmax},
      {"AwsNeuronSoftmaxBackward", SoftmaxBackward},
      {"AwsNeuronRmsNorm", RmsNorm},
  };
  return *table;
}

}  // namespace

std::vector<std::string> KnownCustomCallTargets() {
  std::vector<std::string> names = LapackTargets();
  for (const auto& [name, handler] : Table()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

bool NarrowFloat(PrimitiveType t) { return t == PrimitiveType::kBF16 || t == PrimitiveType::kF16; }

// Under the TPU's arithmetic, a kernel target (not a marker) whose operands and result are f32,
// bf16 or f16 with at least one bf16/f16 runs as the compiler expands it
// (compiler/passes/custom_call_expander.cc): operands converted to f32, the f32 op sequence, one
// rounding to the result type.
bool WidenedToF32(const CustomCallInfo& info, std::span<const Literal* const> ops,
                  const KernelOptions& options) {
  if (!options.tpu_expansions || !info.target.starts_with("AwsNeuron") ||
      info.target == "AwsNeuronTransferWithStaticRing" || !info.result_shape->IsArray()) {
    return false;
  }
  auto f32_or_narrow = [](PrimitiveType t) { return t == PrimitiveType::kF32 || NarrowFloat(t); };
  bool narrow = NarrowFloat(info.result_shape->element_type());
  if (!f32_or_narrow(info.result_shape->element_type())) return false;
  for (const Literal* op : ops) {
    if (!op->IsArray() || !f32_or_narrow(op->element_type())) return false;
    narrow = narrow || NarrowFloat(op->element_type());
  }
  return narrow;
}

}  // namespace

namespace {

// A LAPACK call of JAX's CPU lowering (hlo/linalg_options.h, LapackCall): the cholesky,
// triangular-solve or LU kernel it computes; potrf's info is 1 for a matrix whose factor holds a
// NaN (the cholesky kernel makes a failed factorization all NaN), else 0.
StatusOr<Literal> EvaluateLapack(const LapackCall& call, const CustomCallInfo& info,
                                 std::span<const Literal* const> ops,
                                 const KernelOptions& options) {
  const Shape& out = *info.result_shape;
  if (call.kind == LapackCall::Kind::kGetrf) {
    if (ops.size() != 1) {
      return InvalidArgument(fmt::format("custom-call '{}' ({}): takes (a)",
                                         info.instruction_name, info.target));
    }
    return LuFactor(*ops[0], out, options);
  }
  if (call.kind == LapackCall::Kind::kGeqrf || call.kind == LapackCall::Kind::kOrgqr) {
    const bool geqrf = call.kind == LapackCall::Kind::kGeqrf;
    if (ops.size() != (geqrf ? 1u : 2u)) {
      return InvalidArgument(fmt::format("custom-call '{}' ({}): takes ({})",
                                         info.instruction_name, info.target,
                                         geqrf ? "a" : "a, taus"));
    }
    return geqrf ? Geqrf(*ops[0], out, options) : HouseholderProduct(*ops[0], *ops[1], out, options);
  }
  if (call.kind == LapackCall::Kind::kGesdd) {
    if (ops.size() != 1) {
      return InvalidArgument(fmt::format("custom-call '{}' ({}): takes (a)",
                                         info.instruction_name, info.target));
    }
    return Gesdd(*ops[0], call.eigh, call.compute_uv, out, options, info.loop_trips);
  }
  if (call.kind == LapackCall::Kind::kEigh || call.kind == LapackCall::Kind::kSyevd) {
    if (ops.size() != 1) {
      return InvalidArgument(fmt::format("custom-call '{}' ({}): takes (a)",
                                         info.instruction_name, info.target));
    }
    return Eigh(*ops[0], call.eigh, call.kind == LapackCall::Kind::kSyevd, out, options,
                info.loop_trips);
  }
  if (call.kind == LapackCall::Kind::kLuDecomposition) {
    if (ops.size() != 1) {
      return InvalidArgument(fmt::format("custom-call '{}' ({}): takes (a)",
                                         info.instruction_name, info.target));
    }
    return LuDecomposition(*ops[0], out, options);
  }
  if (call.kind == LapackCall::Kind::kTrsm) {
    if (ops.size() != 2 || !out.IsArray()) {
      return InvalidArgument(fmt::format("custom-call '{}' ({}): takes (a, b) and gives an array",
                                         info.instruction_name, info.target));
    }
    return TriangularSolve(*ops[0], *ops[1], call.solve, out, options);
  }
  if (ops.size() != 1 || !out.IsTuple() || out.tuple_shapes().size() != 2 ||
      !out.tuple_shapes()[1].IsArray() ||
      out.tuple_shapes()[1].element_type() != PrimitiveType::kS32) {
    return InvalidArgument(fmt::format(
        "custom-call '{}' ({}): takes (a) and gives (factor, s32 info)", info.instruction_name,
        info.target));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal factor,
                          Cholesky(*ops[0], call.cholesky, out.tuple_shapes()[0], options));
  TPUSIM_ASSIGN_OR_RETURN(Literal status,
                          Literal::Create(out.tuple_shapes()[1], options.max_bytes));
  const int64_t matrices = status.element_count();
  const int64_t n2 = matrices > 0 ? factor.element_count() / matrices : 0;
  for (int64_t b = 0; b < matrices; ++b) {
    bool failed = false;
    for (int64_t i = 0; i < n2 && !failed; ++i) failed = std::isnan(factor.GetAsDouble(b * n2 + i));
    status.mutable_data<int32_t>()[b] = failed ? 1 : 0;
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(factor));
  parts.push_back(std::move(status));
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace

StatusOr<Literal> EvaluateCustomCall(const CustomCallInfo& info,
                                     std::span<const Literal* const> operands,
                                     const KernelOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(const std::optional<LapackCall> lapack,
                          GetLapackCall(info.target, info.backend_config, info.instruction_name));
  if (lapack) return EvaluateLapack(*lapack, info, operands, options);
  auto it = Table().find(info.target);
  if (info.target == kMosaicKernelTarget) {
    return Unimplemented(fmt::format(
        "custom-call '{}' is a Pallas TPU kernel (tpu_custom_call): its body is Mosaic MLIR, "
        "which the CPU evaluator does not run; `tpusim run` times it from its cost_estimate "
        "(timing-only)",
        info.instruction_name));
  }
  if (it == Table().end()) {
    return Unimplemented(
        fmt::format("custom-call target '{}' (instruction '{}') is not in the CPU evaluator's "
                    "table (known: {})",
                    info.target, info.instruction_name, fmt::join(KnownCustomCallTargets(), ", ")));
  }
  if (!WidenedToF32(info, operands, options)) return it->second(info, operands, options);
  std::vector<Literal> wide;
  wide.reserve(operands.size());
  std::vector<const Literal*> wide_ptrs;
  for (const Literal* op : operands) {
    TPUSIM_ASSIGN_OR_RETURN(Literal w, ConvertLiteral(*op, PrimitiveType::kF32, options.max_bytes));
    wide.push_back(std::move(w));
  }
  for (const Literal& w : wide) wide_ptrs.push_back(&w);
  const Shape f32_shape(PrimitiveType::kF32, info.result_shape->dimensions());
  CustomCallInfo wide_info = info;
  wide_info.result_shape = &f32_shape;
  TPUSIM_ASSIGN_OR_RETURN(Literal y, it->second(wide_info, wide_ptrs, options));
  return ConvertLiteral(y, info.result_shape->element_type(), options.max_bytes);
}

}  // namespace tpusim::hlo
