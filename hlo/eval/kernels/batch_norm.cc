#include "hlo/eval/kernels/batch_norm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hlo/eval/kernels/index_util.h"

namespace tpusim::hlo {
namespace {

struct FeatureLayout {
  int64_t features = 0, per_feature = 0,
          stride = 0;  // feature of linear i = (i / stride) % features
};

StatusOr<FeatureLayout> MakeFeatureLayout(const Literal& x, int64_t feature_index,
                                          std::initializer_list<const Literal*> per_feature,
                                          const char* op) {
  if (!x.IsArray() || !IsFloatingPoint(x.element_type()) || feature_index < 0 ||
      feature_index >= x.shape().rank()) {
    return InvalidArgument(fmt::format("{}: operand {} with feature_index={} is invalid", op,
                                       x.shape().ToString(false), feature_index));
  }
  FeatureLayout l;
  l.features = x.shape().dimensions(feature_index);
  l.per_feature = l.features == 0 ? 0 : x.element_count() / l.features;
  l.stride = RowMajorStrides(x.shape().dimensions())[static_cast<size_t>(feature_index)];
  for (const Literal* p : per_feature) {
    if (p->shape().rank() != 1 || p->shape().dimensions(0) != l.features) {
      return InvalidArgument(fmt::format("{}: per-feature operand {} should be [{}]", op,
                                         p->shape().ToString(false), l.features));
    }
  }
  return l;
}

int64_t FeatureOf(const FeatureLayout& l, int64_t i) { return (i / l.stride) % l.features; }

StatusOr<Literal> FromDoubles(const Shape& s, const std::vector<double>& v, int64_t max_bytes) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, Literal::Create(s, max_bytes));
  for (size_t i = 0; i < v.size(); ++i) out.SetFromDouble(static_cast<int64_t>(i), v[i]);
  return out;
}

void Stats(const Literal& x, const FeatureLayout& l, std::vector<double>& mean,
           std::vector<double>& var) {
  mean.assign(static_cast<size_t>(l.features), 0.0);
  var.assign(static_cast<size_t>(l.features), 0.0);
  for (int64_t i = 0; i < x.element_count(); ++i)
    mean[static_cast<size_t>(FeatureOf(l, i))] += x.GetAsDouble(i);
  for (double& m : mean) m /= static_cast<double>(std::max<int64_t>(l.per_feature, 1));
  for (int64_t i = 0; i < x.element_count(); ++i) {
    double d = x.GetAsDouble(i) - mean[static_cast<size_t>(FeatureOf(l, i))];
    var[static_cast<size_t>(FeatureOf(l, i))] += d * d;
  }
  for (double& v : var) v /= static_cast<double>(std::max<int64_t>(l.per_feature, 1));
}

Status CheckTuple(const Shape& out, int n, const char* op) {
  if (!out.IsTuple() || out.tuple_shapes_size() != n) {
    return InvalidArgument(
        fmt::format("{}: result {} should be a {}-tuple", op, out.ToString(false), n));
  }
  return OkStatus();
}

bool AllF32(std::initializer_list<const Literal*> ls) {
  for (const Literal* l : ls) {
    if (l->element_type() != PrimitiveType::kF32) return false;
  }
  return true;
}

// The TPU's arithmetic (KernelOptions::tpu_expansions): the f32 op sequence of
// compiler/passes/batch_norm_expander.cc, each op rounded to f32, each sum a reduce folded from +0
// over the elements in row-major order (kernels/reduce.cc). Keep the two in step:
// tests/compiler/checks2_batch_norm_test.cc compares them bit for bit.
//   training:  mean = sum(x) / n; centered = x - mean; var = sum(centered * centered) / n
//   both:      factor = scale * rsqrt(var + eps); y = centered * factor + offset
// `mean`/`var` are read for inference and computed for training (train == true).
StatusOr<Literal> ExpandedF32(const Literal& x, const Literal& scale, const Literal& offset,
                              std::vector<float>& mean, std::vector<float>& var, bool train,
                              double epsilon, const FeatureLayout& l, const Shape& y_shape,
                              const KernelOptions& options) {
  const float* xs = x.data<float>();
  const int64_t count = x.element_count();
  const size_t features = static_cast<size_t>(l.features);
  const float n = static_cast<float>(l.per_feature);
  auto f_of = [&](int64_t i) { return static_cast<size_t>(FeatureOf(l, i)); };
  std::vector<float> centered(static_cast<size_t>(count));
  if (train) {
    std::vector<float> sum(features, 0.0f), sum_sq(features, 0.0f);
    for (int64_t i = 0; i < count; ++i) sum[f_of(i)] += xs[i];
    for (size_t f = 0; f < features; ++f) mean[f] = sum[f] / n;
    for (int64_t i = 0; i < count; ++i) {
      const float c = xs[i] - mean[f_of(i)];
      const float sq = c * c;
      centered[static_cast<size_t>(i)] = c;
      sum_sq[f_of(i)] += sq;
    }
    for (size_t f = 0; f < features; ++f) var[f] = sum_sq[f] / n;
  } else {
    for (int64_t i = 0; i < count; ++i) centered[static_cast<size_t>(i)] = xs[i] - mean[f_of(i)];
  }
  const float eps = static_cast<float>(epsilon);
  const float* sc = scale.data<float>();
  const float* off = offset.data<float>();
  std::vector<float> factor(features);
  for (size_t f = 0; f < features; ++f) {
    const float var_eps = var[f] + eps;
    const float rsqrt = 1.0f / std::sqrt(var_eps);  // kernels/elementwise.cc kRsqrt
    factor[f] = sc[f] * rsqrt;
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal y, Literal::Create(y_shape, options.max_bytes));
  if (y.element_type() != PrimitiveType::kF32 || y.element_count() != count) {
    return InvalidArgument(
        fmt::format("batch-norm: result {} should be f32 with the operand's elements",
                    y_shape.ToString(false)));
  }
  float* ys = y.mutable_data<float>();
  for (int64_t i = 0; i < count; ++i) {
    const size_t f = f_of(i);
    const float scaled = centered[static_cast<size_t>(i)] * factor[f];
    ys[i] = scaled + off[f];
  }
  return y;
}

StatusOr<Literal> FromFloats(const Shape& s, const std::vector<float>& v, int64_t max_bytes) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, Literal::Create(s, max_bytes));
  if (out.element_type() != PrimitiveType::kF32 ||
      out.element_count() != static_cast<int64_t>(v.size())) {
    return InvalidArgument(fmt::format("batch-norm-training: statistic {} should be f32[{}]",
                                       s.ToString(false), v.size()));
  }
  std::copy(v.begin(), v.end(), out.mutable_data<float>());
  return out;
}

}  // namespace

StatusOr<Literal> BatchNormTraining(const Literal& x, const Literal& scale, const Literal& offset,
                                    double epsilon, int64_t feature_index, const Shape& out,
                                    const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckTuple(out, 3, "batch-norm-training"));
  TPUSIM_ASSIGN_OR_RETURN(FeatureLayout l, MakeFeatureLayout(x, feature_index, {&scale, &offset},
                                                             "batch-norm-training"));
  if (options.tpu_expansions && AllF32({&x, &scale, &offset})) {
    std::vector<float> mean(static_cast<size_t>(l.features)), var(mean.size());
    TPUSIM_ASSIGN_OR_RETURN(Literal ly, ExpandedF32(x, scale, offset, mean, var, /*train=*/true,
                                                    epsilon, l, out.tuple_shapes(0), options));
    TPUSIM_ASSIGN_OR_RETURN(Literal lm, FromFloats(out.tuple_shapes(1), mean, options.max_bytes));
    TPUSIM_ASSIGN_OR_RETURN(Literal lv, FromFloats(out.tuple_shapes(2), var, options.max_bytes));
    return Literal::MakeTuple({std::move(ly), std::move(lm), std::move(lv)});
  }
  std::vector<double> mean, var;
  Stats(x, l, mean, var);
  std::vector<double> y(static_cast<size_t>(x.element_count()));
  for (int64_t i = 0; i < x.element_count(); ++i) {
    size_t f = static_cast<size_t>(FeatureOf(l, i));
    y[static_cast<size_t>(i)] = (x.GetAsDouble(i) - mean[f]) *
                                    scale.GetAsDouble(static_cast<int64_t>(f)) /
                                    std::sqrt(var[f] + epsilon) +
                                offset.GetAsDouble(static_cast<int64_t>(f));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal ly, FromDoubles(out.tuple_shapes(0), y, options.max_bytes));
  TPUSIM_ASSIGN_OR_RETURN(Literal lm, FromDoubles(out.tuple_shapes(1), mean, options.max_bytes));
  TPUSIM_ASSIGN_OR_RETURN(Literal lv, FromDoubles(out.tuple_shapes(2), var, options.max_bytes));
  return Literal::MakeTuple({std::move(ly), std::move(lm), std::move(lv)});
}

StatusOr<Literal> BatchNormInference(const Literal& x, const Literal& scale, const Literal& offset,
                                     const Literal& mean, const Literal& variance, double epsilon,
                                     int64_t feature_index, const Shape& out,
                                     const KernelOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(FeatureLayout l,
                          MakeFeatureLayout(x, feature_index, {&scale, &offset, &mean, &variance},
                                            "batch-norm-inference"));
  if (options.tpu_expansions && AllF32({&x, &scale, &offset, &mean, &variance})) {
    std::vector<float> m(mean.data<float>(), mean.data<float>() + l.features);
    std::vector<float> v(variance.data<float>(), variance.data<float>() + l.features);
    return ExpandedF32(x, scale, offset, m, v, /*train=*/false, epsilon, l, out, options);
  }
  std::vector<double> y(static_cast<size_t>(x.element_count()));
  for (int64_t i = 0; i < x.element_count(); ++i) {
    int64_t f = FeatureOf(l, i);
    y[static_cast<size_t>(i)] = (x.GetAsDouble(i) - mean.GetAsDouble(f)) * scale.GetAsDouble(f) /
                                    std::sqrt(variance.GetAsDouble(f) + epsilon) +
                                offset.GetAsDouble(f);
  }
  return FromDoubles(out, y, options.max_bytes);
}

StatusOr<Literal> BatchNormGrad(const Literal& x, const Literal& scale, const Literal& mean,
                                const Literal& variance, const Literal& grad_output, double epsilon,
                                int64_t feature_index, const Shape& out,
                                const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckTuple(out, 3, "batch-norm-grad"));
  TPUSIM_ASSIGN_OR_RETURN(
      FeatureLayout l,
      MakeFeatureLayout(x, feature_index, {&scale, &mean, &variance}, "batch-norm-grad"));
  if (grad_output.shape().dimensions() != x.shape().dimensions()) {
    return InvalidArgument("batch-norm-grad: grad_output must have the operand's dims");
  }
  const size_t F = static_cast<size_t>(l.features);
  std::vector<double> sum_d(F, 0.0), sum_dx(F, 0.0), r(F);
  for (size_t f = 0; f < F; ++f)
    r[f] = 1.0 / std::sqrt(variance.GetAsDouble(static_cast<int64_t>(f)) + epsilon);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    size_t f = static_cast<size_t>(FeatureOf(l, i));
    double d = grad_output.GetAsDouble(i);
    sum_d[f] += d;
    sum_dx[f] += d * (x.GetAsDouble(i) - mean.GetAsDouble(static_cast<int64_t>(f)));
  }
  std::vector<double> grad_scale(F), gx(static_cast<size_t>(x.element_count()));
  for (size_t f = 0; f < F; ++f) grad_scale[f] = r[f] * sum_dx[f];
  const double n = static_cast<double>(std::max<int64_t>(l.per_feature, 1));
  for (int64_t i = 0; i < x.element_count(); ++i) {
    size_t f = static_cast<size_t>(FeatureOf(l, i));
    double xc = x.GetAsDouble(i) - mean.GetAsDouble(static_cast<int64_t>(f));
    gx[static_cast<size_t>(i)] =
        scale.GetAsDouble(static_cast<int64_t>(f)) * r[f] *
        (grad_output.GetAsDouble(i) - sum_d[f] / n - xc * r[f] * grad_scale[f] / n);
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal a, FromDoubles(out.tuple_shapes(0), gx, options.max_bytes));
  TPUSIM_ASSIGN_OR_RETURN(Literal b,
                          FromDoubles(out.tuple_shapes(1), grad_scale, options.max_bytes));
  TPUSIM_ASSIGN_OR_RETURN(Literal c, FromDoubles(out.tuple_shapes(2), sum_d, options.max_bytes));
  return Literal::MakeTuple({std::move(a), std::move(b), std::move(c)});
}

}  // namespace tpusim::hlo
