#include "compiler/eval/kernels/batch_norm.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "compiler/eval/kernels/index_util.h"

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

}  // namespace

StatusOr<Literal> BatchNormTraining(const Literal& x, const Literal& scale, const Literal& offset,
                                    double epsilon, int64_t feature_index, const Shape& out,
                                    const KernelOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckTuple(out, 3, "batch-norm-training"));
  TPUSIM_ASSIGN_OR_RETURN(FeatureLayout l, MakeFeatureLayout(x, feature_index, {&scale, &offset},
                                                             "batch-norm-training"));
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
