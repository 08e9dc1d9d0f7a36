// Shapes, layouts and constant literals (see parser_impl.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hlo/parser_impl.h"

namespace tpusim::hlo::internal {
namespace {

// Parses "8,128" (inside a T(...) group) into ints; false if any item is not a plain integer.
bool ParseIntCsv(std::string_view s, std::vector<int64_t>* out) {
  size_t p = 0;
  while (p <= s.size()) {
    size_t e = s.find(',', p);
    if (e == std::string_view::npos) e = s.size();
    std::string_view item = s.substr(p, e - p);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty() || item.size() > 18) return false;
    int64_t v = 0;
    for (char c : item) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    out->push_back(v);
    p = e + 1;
  }
  return true;
}

}  // namespace

Status HloParserImpl::ParseShape(Shape* out, int depth) {
  if (depth > kMaxNestingDepth) {
    return ErrorAt(lex_.Peek().offset,
                   fmt::format("shape nesting deeper than {} levels", kMaxNestingDepth));
  }
  const Token& tok = lex_.Peek();
  if (tok.kind == TokKind::kLparen) {
    lex_.Next();
    std::vector<Shape> elements;
    if (!ConsumeIf(TokKind::kRparen)) {
      while (true) {
        Shape e;
        TPUSIM_RETURN_IF_ERROR(ParseShape(&e, depth + 1));
        elements.push_back(std::move(e));
        if (ConsumeIf(TokKind::kRparen)) break;
        TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ')' in the tuple shape"));
      }
    }
    *out = Shape::Tuple(std::move(elements));
    return OkStatus();
  }
  if (tok.kind != TokKind::kIdent) {
    if (tok.kind == TokKind::kEof)
      return ErrorAt(tok.offset, "unexpected end of file: expected a shape");
    return ErrorAtToken(tok, fmt::format("expected a shape, got {}", Describe(tok)));
  }
  std::optional<PrimitiveType> type = ParsePrimitiveType(tok.text);
  if (!type.has_value()) {
    // XLA's sub-byte types tpusim does not model (xla_data.proto: S1, U1, S2, U2, F4E2M1FN): a
    // located error that names what is known instead of "unknown".
    static constexpr std::string_view kXlaOnly[] = {"s1", "u1", "s2", "u2", "f4e2m1fn"};
    if (std::find(std::begin(kXlaOnly), std::end(kXlaOnly), tok.text) != std::end(kXlaOnly)) {
      return ErrorAt(tok.offset,
                     fmt::format("element type '{}' is one of XLA's sub-byte types (1- and 2-bit "
                                 "integers, the 4-bit float f4e2m1fn) that tpusim does not model; "
                                 "it runs pred, s4/u4 to s64/u64, f16, bf16, f32, f64, c64, c128 "
                                 "and the f8 types",
                                 tok.text));
    }
    return ErrorAt(tok.offset, fmt::format("unknown or unsupported element type '{}'", tok.text));
  }
  lex_.Next();
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLsquare, "'[' after the element type"));
  std::vector<int64_t> dims;
  std::vector<size_t> dynamic;
  if (!ConsumeIf(TokKind::kRsquare)) {
    while (true) {
      const Token& d = lex_.Peek();
      if (static_cast<int64_t>(dims.size()) >= kMaxRank) {
        return ErrorAt(d.offset, fmt::format("shape rank exceeds {}", kMaxRank));
      }
      if (d.kind == TokKind::kQuestion) {
        lex_.Next();
        dynamic.push_back(dims.size());
        dims.push_back(-1);
      } else {
        const bool bounded = ConsumeIf(TokKind::kLeq);
        const Token& n = lex_.Peek();
        if (n.kind == TokKind::kEof) {
          return ErrorAt(n.offset, "unexpected end of file: expected a dimension size");
        }
        if (n.kind != TokKind::kInt || n.int_value < 0 || n.int_overflow ||
            (n.text.size() > 0 && n.text[0] == '-')) {
          return ErrorAtToken(n, fmt::format("expected a dimension size, got {}", Describe(n)));
        }
        if (bounded) dynamic.push_back(dims.size());
        dims.push_back(n.int_value);
        lex_.Next();
      }
      if (ConsumeIf(TokKind::kRsquare)) break;
      TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ']' in the dimensions"));
    }
  }
  Shape s(*type, std::move(dims));
  for (size_t i : dynamic) s.set_dynamic_dimension(static_cast<int64_t>(i), true);
  // Layout `{...}` — but a '{' that opens a computation body follows a signature's result shape, so
  // only take it when its first token can start a layout.
  if (lex_.Peek().kind == TokKind::kLbrace) {
    const TokKind next = lex_.PeekNext().kind;
    if (next == TokKind::kInt || next == TokKind::kColon || next == TokKind::kRbrace) {
      lex_.Next();
      Layout layout;
      while (lex_.Peek().kind == TokKind::kInt) {
        const Token& t = lex_.Peek();
        if (t.int_value < 0 || t.int_value >= std::max<int64_t>(s.rank(), 1) || t.int_overflow) {
          return ErrorAtToken(
              t, fmt::format("layout dimension {} is out of range for rank {}", t.text, s.rank()));
        }
        // minor_to_major must be a permutation (XLA's LayoutUtil::ValidateLayout).
        if (std::find(layout.minor_to_major.begin(), layout.minor_to_major.end(), t.int_value) !=
            layout.minor_to_major.end()) {
          return ErrorAtToken(t, fmt::format("layout dimension {} appears twice", t.text));
        }
        layout.minor_to_major.push_back(t.int_value);
        lex_.Next();
        if (!ConsumeIf(TokKind::kComma)) break;
      }
      if (lex_.Peek().kind == TokKind::kColon) {
        const size_t colon = lex_.Peek().offset;
        TPUSIM_RETURN_IF_ERROR(ParseLayoutAttributes(colon, &layout));
      }
      TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kRbrace, "'}' to close the layout"));
      if (!layout.minor_to_major.empty() &&
          static_cast<int64_t>(layout.minor_to_major.size()) != s.rank()) {
        return ErrorAt(lex_.last_end() - 1,
                       fmt::format("layout has {} dimensions but the shape has rank {}",
                                   layout.minor_to_major.size(), s.rank()));
      }
      s.set_layout(std::move(layout));
    }
  }
  *out = std::move(s);
  return OkStatus();
}

Status HloParserImpl::ParseLayoutAttributes(size_t colon, Layout* layout) {
  // Character level: after ':' a sequence of `X(...)(...)` items up to the closing '}'.
  size_t p = colon + 1;
  const std::string_view t = text_;
  while (true) {
    while (p < t.size() && (t[p] == ' ' || t[p] == '\t')) ++p;
    if (p >= t.size()) return ErrorAt(colon, "unexpected end of file in a layout");
    if (t[p] == '}') break;
    const size_t item_start = p;
    const char key = t[p++];
    if (key == '(' || key == ')' || key == ',' || key == '{' || key == '\n') {
      return ErrorAt(item_start, fmt::format("unexpected '{}' in layout attributes", key));
    }
    std::vector<std::string_view> groups;
    while (p < t.size() && t[p] == '(') {
      const size_t close = t.find_first_of(")\n}", p);
      if (close == std::string_view::npos || t[close] != ')') {
        return ErrorAt(p, "unbalanced '(' in layout attributes");
      }
      groups.push_back(t.substr(p + 1, close - p - 1));
      p = close + 1;
    }
    const std::string_view item = t.substr(item_start, p - item_start);
    bool handled = false;
    if (key == 'T' && !groups.empty()) {
      std::vector<Tile> tiles;
      handled = true;
      for (std::string_view g : groups) {
        Tile tile;
        if (!ParseIntCsv(g, &tile.dims)) {
          handled = false;
          break;
        }
        tiles.push_back(std::move(tile));
      }
      if (handled) {
        if (!layout->tiles.empty())
          handled = false;
        else
          layout->tiles = std::move(tiles);
      }
    } else if ((key == 'E' || key == 'S') && groups.size() == 1) {
      std::vector<int64_t> v;
      if (ParseIntCsv(groups[0], &v) && v.size() == 1) {
        (key == 'E' ? layout->element_size_in_bits : layout->memory_space) = v[0];
        handled = true;
      }
    }
    if (!handled) layout->extra += std::string(item);
  }
  lex_.ResetTo(p);  // at the '}'
  return OkStatus();
}

Status HloParserImpl::ParseLiteral(const Shape& shape, LiteralValues* out, int depth) {
  if (depth > kMaxNestingDepth) {
    return ErrorAt(lex_.Peek().offset,
                   fmt::format("literal nesting deeper than {} levels", kMaxNestingDepth));
  }
  const Token& tok = lex_.Peek();
  if (tok.kind == TokKind::kLbrace && lex_.PeekNext().kind == TokKind::kDots) {
    lex_.Next();
    lex_.Next();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kRbrace, "'}' after '...'"));
    out->elided = true;
    return OkStatus();
  }
  if (shape.IsTuple()) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLparen, "'(' to open a tuple literal"));
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0) TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' between tuple elements"));
      LiteralValues element;
      TPUSIM_RETURN_IF_ERROR(ParseLiteral(shape.tuple_shapes(i), &element, depth + 1));
      out->tuple_elements.push_back(std::move(element));
    }
    return Expect(TokKind::kRparen, "')' to close the tuple literal");
  }
  if (!shape.IsArray()) {
    return ErrorAtToken(tok,
                        fmt::format("a constant of type {} cannot have a value", shape.ToString()));
  }
  if (shape.rank() == 0) return ParseScalarValue(shape.element_type(), out);
  return ParseArrayLiteral(shape, out);
}

Status HloParserImpl::ParseArrayLiteral(const Shape& shape, LiteralValues* out) {
  // Nested braces, one level per dimension; iterative, checking each level's element count.
  const int64_t rank = shape.rank();
  const Token open = lex_.Peek();
  if (open.kind != TokKind::kLbrace) {
    return ErrorAtToken(open, fmt::format("bad literal: expected '{{' to start a {} value, got {}",
                                          shape.ToString(false), Describe(open)));
  }
  if (shape.ElementCount() == 0) {
    // Any brace nesting without values (`{}`, `{ {}, {} }`).
    int depth = 0;
    do {
      const Token t = lex_.Next();
      if (t.kind == TokKind::kLbrace) {
        if (++depth > kMaxRank + 1) return ErrorAt(t.offset, "bad literal: nesting too deep");
      } else if (t.kind == TokKind::kRbrace) {
        --depth;
      } else if (t.kind != TokKind::kComma) {
        return ErrorAtToken(t, fmt::format("bad literal: {} has no elements but the value has {}",
                                           shape.ToString(false), Describe(t)));
      }
    } while (depth > 0);
    return OkStatus();
  }
  std::vector<int64_t> count(static_cast<size_t>(rank), 0);
  std::vector<size_t> open_offset(static_cast<size_t>(rank), 0);
  int64_t level = -1;  // index of the innermost open dimension
  while (true) {
    const Token tok = lex_.Peek();
    if (tok.kind == TokKind::kLbrace) {
      if (level + 1 >= rank) {
        return ErrorAt(tok.offset, fmt::format("bad literal: more than {} nested levels of braces "
                                               "for {}",
                                               rank, shape.ToString(false)));
      }
      if (level >= 0) ++count[static_cast<size_t>(level)];
      ++level;
      count[static_cast<size_t>(level)] = 0;
      open_offset[static_cast<size_t>(level)] = tok.offset;
      lex_.Next();
    } else if (tok.kind == TokKind::kRbrace) {
      if (level < 0) return ErrorAt(tok.offset, "bad literal: unbalanced '}'");
      const int64_t want = shape.dimensions(level);
      if (count[static_cast<size_t>(level)] != want) {
        return ErrorAt(
            open_offset[static_cast<size_t>(level)],
            fmt::format("bad literal: dimension {} of {} has {} elements, the value has {}", level,
                        shape.ToString(false), want, count[static_cast<size_t>(level)]));
      }
      lex_.Next();
      if (--level < 0) return OkStatus();
    } else if (tok.kind == TokKind::kComma) {
      lex_.Next();
    } else if (tok.kind == TokKind::kEof) {
      return ErrorAt(tok.offset, "unexpected end of file inside a literal");
    } else {
      if (level != rank - 1) {
        return ErrorAt(tok.offset, fmt::format("bad literal: expected '{{' for dimension {} of {}",
                                               level + 1, shape.ToString(false)));
      }
      ++count[static_cast<size_t>(level)];
      if (count[static_cast<size_t>(level)] > shape.dimensions(level)) {
        return ErrorAt(tok.offset,
                       fmt::format("bad literal: more than {} elements in dimension {} "
                                   "of {}",
                                   shape.dimensions(level), level, shape.ToString(false)));
      }
      TPUSIM_RETURN_IF_ERROR(ParseScalarValue(shape.element_type(), out));
    }
  }
}

Status HloParserImpl::ParseScalarValue(PrimitiveType type, LiteralValues* out) {
  const Token tok = lex_.Peek();
  if (IsComplex(type)) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLparen, "'(' to open a complex value"));
    TPUSIM_ASSIGN_OR_RETURN(double re, ParseNumber());
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' in a complex value"));
    TPUSIM_ASSIGN_OR_RETURN(double im, ParseNumber());
    out->float_values.push_back(re);
    out->float_values.push_back(im);
    return Expect(TokKind::kRparen, "')' to close a complex value");
  }
  if (type == PrimitiveType::kPred) {
    if (tok.kind == TokKind::kIdent && (tok.text == "true" || tok.text == "false")) {
      out->int_values.push_back(tok.text == "true" ? 1 : 0);
      lex_.Next();
      return OkStatus();
    }
    if (tok.kind == TokKind::kInt && (tok.int_value == 0 || tok.int_value == 1)) {
      out->int_values.push_back(tok.int_value);
      lex_.Next();
      return OkStatus();
    }
    return ErrorAtToken(tok,
                        fmt::format("bad literal: expected true or false, got {}", Describe(tok)));
  }
  if (IsFloatingPoint(type)) {
    if (tok.kind != TokKind::kInt && tok.kind != TokKind::kFloat) {
      return ErrorAtToken(tok, fmt::format("bad literal: expected a number for {}, got {}",
                                           PrimitiveTypeName(type), Describe(tok)));
    }
    // As XLA's parser: a number written out (not inf/nan) must round to a finite value of the
    // type; it is never silently made infinite. XLA prints the extremes with 9 significant digits
    // (f32's lowest as -3.40282347e+38, a little beyond FLT_MAX in decimal but rounding to it), so
    // the bound is the largest finite value plus half its unit in the last place: a value at or
    // past it rounds (to nearest even) to infinity.
    const double largest = type == PrimitiveType::kF64    ? std::numeric_limits<double>::max()
                           : type == PrimitiveType::kF32  ? std::numeric_limits<float>::max()
                           : type == PrimitiveType::kBF16 ? 3.3895313892515355e38
                           : type == PrimitiveType::kF16  ? 65504.0
                           : IsFloat8(type) ? Float8MaxFinite(*Float8FormatOf(type))
                                                          : 0.0;
    const double half_ulp = type == PrimitiveType::kF32    ? std::ldexp(1.0, 103)  // 2^(127-23-1)
                            : type == PrimitiveType::kBF16 ? std::ldexp(1.0, 119)  // 2^(127-7-1)
                            : type == PrimitiveType::kF16  ? 16.0                  // 2^(15-10-1)
                            : IsFloat8(type) ? Float8HalfUlpOfMax(*Float8FormatOf(type))
                                                           : 0.0;
    const bool written_number = tok.text.find_first_of("0123456789") != std::string_view::npos &&
                                !std::isnan(tok.float_value);
    const double magnitude = std::fabs(tok.float_value);
    const bool finite = half_ulp > 0 ? magnitude < largest + half_ulp : magnitude <= largest;
    if (largest > 0 && written_number && !finite) {
      return ErrorAtToken(tok, fmt::format("bad literal: {} is out of range for {} (largest finite "
                                           "value {:g})",
                                           tok.text, PrimitiveTypeName(type), largest));
    }
    // Between the largest value and the rounding bound: the value the type holds is the largest.
    const bool clamp = finite && largest > 0 && magnitude > largest;
    out->float_values.push_back(clamp ? std::copysign(largest, tok.float_value) : tok.float_value);
    lex_.Next();
    return OkStatus();
  }
  if (IsInteger(type)) {
    if (tok.kind != TokKind::kInt) {
      return ErrorAtToken(tok, fmt::format("bad literal: expected an integer for {}, got {}",
                                           PrimitiveTypeName(type), Describe(tok)));
    }
    const bool negative = !tok.text.empty() && tok.text[0] == '-';
    const int bits = BitWidth(type);
    bool ok = !tok.int_overflow;
    if (ok && IsUnsignedInteger(type)) {
      ok =
          !negative && (bits == 64 || static_cast<uint64_t>(tok.int_value) < (uint64_t{1} << bits));
    } else if (ok) {
      const bool wrapped = !negative && tok.int_value < 0;  // above INT64_MAX
      ok = !wrapped && (bits == 64 || (tok.int_value >= -(int64_t{1} << (bits - 1)) &&
                                       tok.int_value < (int64_t{1} << (bits - 1))));
    }
    if (!ok) {
      return ErrorAt(tok.offset, fmt::format("bad literal: {} is out of range for {}", tok.text,
                                             PrimitiveTypeName(type)));
    }
    out->int_values.push_back(tok.int_value);
    lex_.Next();
    return OkStatus();
  }
  return ErrorAtToken(tok,
                      fmt::format("bad literal: type {} has no values", PrimitiveTypeName(type)));
}

}  // namespace tpusim::hlo::internal
