#include "hlo/ragged_dot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "hlo/shape_inference.h"

namespace tpusim::hlo {
namespace {

// "{1,2}" -> {1, 2}; nullopt when malformed.
std::optional<std::vector<int64_t>> IntList(const std::string& text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  std::vector<int64_t> out;
  const char* p = text.data() + 1;
  const char* end = text.data() + text.size() - 1;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == ',')) ++p;
    if (p >= end) break;
    int64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(v);
    p = next;
  }
  return out;
}

bool Has(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

StatusOr<RaggedDotDims> GetRaggedDotDims(const HloInstruction& inst) {
  auto refuse = [&](const std::string& why) {
    return InvalidArgument(fmt::format(
        "%{} (ragged-dot): {}; tpusim runs the form jax.lax.ragged_dot writes: one lhs ragged "
        "dimension that is neither batch nor contracting, one rhs group dimension, "
        "group_sizes [G], no batch dimensions",
        inst.name(), why));
  };
  if (inst.operand_count() != 3) return refuse("takes (lhs, rhs, group_sizes)");
  const std::string* lr = inst.FindRawAttribute("lhs_ragged_dims");
  const std::string* rg = inst.FindRawAttribute("rhs_group_dims");
  const auto ragged = lr ? IntList(*lr) : std::nullopt;
  const auto group =
      rg ? IntList(*rg) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
  if (!ragged || ragged->size() != 1) return refuse("lhs_ragged_dims is not one dimension");
  const DotDimensionNumbers& d = inst.dot_dimension_numbers();
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const Shape& sizes = inst.operand(2)->shape();
  RaggedDotDims out;
  out.lhs_ragged = (*ragged)[0];
  if (out.lhs_ragged < 0 || out.lhs_ragged >= lhs.rank()) {
    return refuse("lhs_ragged_dims out of range");
  }
  if (Has(d.lhs_contracting_dimensions, out.lhs_ragged)) {
    return refuse("its ragged dimension is contracting (the transposed, weight-gradient form)");
  }
  if (!d.lhs_batch_dimensions.empty() || !d.rhs_batch_dimensions.empty()) {
    return refuse("it has batch dimensions");
  }
  if (!group || group->size() != 1) return refuse("rhs_group_dims is not one dimension");
  out.rhs_group = (*group)[0];
  if (out.rhs_group < 0 || out.rhs_group >= rhs.rank() ||
      Has(d.rhs_contracting_dimensions, out.rhs_group)) {
    return refuse("rhs_group_dims is not a free dimension of rhs");
  }
  if (!sizes.IsArray() || sizes.rank() != 1 || !IsInteger(sizes.element_type()) ||
      sizes.dimensions(0) != rhs.dimensions(out.rhs_group)) {
    return refuse("group_sizes is not an integer [G] with G the size of rhs's group dimension");
  }
  return out;
}

namespace {

// group_sizes of `inst` for `groups` groups: an integer [G], or [prefix..., G].
Status CheckGroupSizes(const HloInstruction& inst, const std::vector<int64_t>& prefix,
                       int64_t groups) {
  const Shape& g = inst.operand(2)->shape();
  std::vector<int64_t> full = prefix;
  full.push_back(groups);
  const bool ok = g.IsArray() && IsInteger(g.element_type()) &&
                  (g.dimensions() == std::vector<int64_t>{groups} || g.dimensions() == full);
  if (ok) return OkStatus();
  const std::string forms = prefix.empty()
                                ? fmt::format("[{}]", groups)
                                : fmt::format("[{}] or [{}]", groups, fmt::join(full, ","));
  return InvalidArgument(fmt::format("ragged-dot: group_sizes is {}; it must be an integer {} (G "
                                     "= {} groups)",
                                     g.ToString(false), forms, groups));
}

}  // namespace

StatusOr<Shape> InferRaggedDot(const HloInstruction& inst) {
  if (inst.operand_count() != 3) {
    return InvalidArgument(fmt::format("ragged-dot takes (lhs, rhs, group_sizes), got {} operands",
                                       inst.operand_count()));
  }
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  DotDimensionNumbers d = inst.dot_dimension_numbers();
  const PrimitiveType type =
      inst.shape().IsArray() ? inst.shape().element_type() : lhs.element_type();
  // The dimension numbers as a dot's (ranges, repeats, sizes) before they index anything here.
  const std::string* lr = inst.FindRawAttribute("lhs_ragged_dims");
  const std::string* rg = inst.FindRawAttribute("rhs_group_dims");
  const auto ragged = lr ? IntList(*lr) : std::nullopt;
  const auto group =
      rg ? IntList(*rg) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
  if (!ragged || ragged->size() != 1 || (*ragged)[0] < 0 || !lhs.IsArray() ||
      (*ragged)[0] >= lhs.rank()) {
    return InvalidArgument(fmt::format("ragged-dot: lhs_ragged_dims must name one dimension of "
                                       "lhs {}, got {}",
                                       lhs.ToString(false), lr ? *lr : "none"));
  }
  if (!group || group->size() > 1) {
    return InvalidArgument(
        fmt::format("ragged-dot: rhs_group_dims must name at most one dimension, got {}", *rg));
  }
  const int64_t r = (*ragged)[0];
  std::vector<int64_t> prefix;
  for (int64_t b : d.lhs_batch_dimensions) {
    if (b >= 0 && b < lhs.rank()) prefix.push_back(lhs.dimensions(b));
  }
  if (Has(d.lhs_contracting_dimensions, r) || Has(d.lhs_batch_dimensions, r)) {
    if (!group->empty()) {
      return InvalidArgument("ragged-dot: a contracting or batch ragged dimension takes no "
                             "rhs_group_dims");
    }
    TPUSIM_ASSIGN_OR_RETURN(Shape dot, InferDotShape(lhs, rhs, d, type));
    const Shape& g = inst.operand(2)->shape();
    const int64_t groups = g.IsArray() && g.rank() >= 1 ? g.dimensions(g.rank() - 1) : -1;
    TPUSIM_RETURN_IF_ERROR(CheckGroupSizes(inst, prefix, groups));
    if (Has(d.lhs_batch_dimensions, r)) return dot;
    std::vector<int64_t> dims{groups};
    dims.insert(dims.end(), dot.dimensions().begin(), dot.dimensions().end());
    return Shape(type, dims);
  }
  if (group->size() != 1 || !rhs.IsArray() || (*group)[0] < 0 || (*group)[0] >= rhs.rank() ||
      Has(d.rhs_contracting_dimensions, (*group)[0]) || Has(d.rhs_batch_dimensions, (*group)[0])) {
    return InvalidArgument(fmt::format(
        "ragged-dot: with a non-contracting ragged dimension rhs_group_dims must name one free "
        "dimension of rhs {}, got {}",
        rhs.ToString(false), rg ? *rg : "none"));
  }
  const int64_t gd = (*group)[0];
  std::vector<int64_t> rest;
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (i != gd) rest.push_back(rhs.dimensions(i));
  }
  for (auto* v : {&d.rhs_batch_dimensions, &d.rhs_contracting_dimensions}) {
    for (int64_t& x : *v) x -= x > gd ? 1 : 0;
  }
  TPUSIM_ASSIGN_OR_RETURN(Shape dot, InferDotShape(lhs, Shape(rhs.element_type(), rest), d, type));
  for (int64_t i = 0; i < r; ++i) {
    if (!Has(d.lhs_batch_dimensions, i) && !Has(d.lhs_contracting_dimensions, i)) {
      prefix.push_back(lhs.dimensions(i));
    }
  }
  TPUSIM_RETURN_IF_ERROR(CheckGroupSizes(inst, prefix, rhs.dimensions(gd)));
  return dot;
}

int64_t RaggedOutputDimension(const HloInstruction& inst, const RaggedDotDims& dims) {
  const DotDimensionNumbers& d = inst.dot_dimension_numbers();
  int64_t pos = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  for (int64_t i = 0; i < dims.lhs_ragged; ++i) {
    if (!Has(d.lhs_batch_dimensions, i) && !Has(d.lhs_contracting_dimensions, i)) ++pos;
  }
  return pos;
}

}  // namespace tpusim::hlo
