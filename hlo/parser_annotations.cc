// Annotations any instruction may carry — sharding, metadata, frontend_attributes — and the raw,
// balanced-bracket scanner that keeps unknown attribute values verbatim (see parser_impl.h).
#include <fmt/format.h>

#include "hlo/parser_impl.h"

namespace tpusim::hlo::internal {
namespace {

char CloserOf(char c) { return c == '{' ? '}' : c == '(' ? ')' : ']'; }

// The offset just past the string literal that opens at t[p] (a '"' or '\''; a backslash escapes
// the next character), or npos when the text ends before its closing quote.
size_t PastQuoted(std::string_view t, size_t p) {
  const char quote = t[p];
  size_t e = p + 1;
  while (e < t.size() && t[e] != quote) e += (t[e] == '\\') ? 2 : 1;
  return e >= t.size() ? std::string_view::npos : e + 1;
}

}  // namespace

StatusOr<std::string> HloParserImpl::ScanRawValue() {
  const std::string_view t = text_;
  const size_t start = lex_.Peek().offset;
  std::vector<size_t> openers;
  size_t p = start;
  while (p < t.size()) {
    const char c = t[p];
    if (c == '"' || c == '\'') {
      const size_t past = PastQuoted(t, p);
      if (past == std::string_view::npos) return ErrorAt(p, "unterminated string");
      p = past;
      continue;
    }
    if (c == '/' && p + 1 < t.size() && t[p + 1] == '*') {
      const size_t close = t.find("*/", p + 2);
      if (close == std::string_view::npos) return ErrorAt(p, "unterminated /* comment");
      p = close + 2;
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      if (openers.size() >= static_cast<size_t>(kMaxNestingDepth)) {
        return ErrorAt(
            p, fmt::format("attribute value nested deeper than {} levels", kMaxNestingDepth));
      }
      openers.push_back(p);
    } else if (c == '}' || c == ')' || c == ']') {
      if (openers.empty()) break;  // closes something outside the value
      if (CloserOf(t[openers.back()]) != c) {
        return ErrorAt(p, fmt::format("mismatched '{}' (opened by '{}' at {}:{})", c,
                                      t[openers.back()], lex_.LocationOf(openers.back()).line,
                                      lex_.LocationOf(openers.back()).column));
      }
      openers.pop_back();
    } else if (openers.empty() && (c == ',' || c == '\n')) {
      break;
    }
    ++p;
  }
  if (!openers.empty()) {
    return ErrorAt(openers.back(), fmt::format("unbalanced '{}': end of file before its '{}'",
                                               t[openers.back()], CloserOf(t[openers.back()])));
  }
  std::string_view value = t.substr(start, p - start);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r')) {
    value.remove_suffix(1);
  }
  if (value.empty()) return ErrorAt(start, "expected an attribute value");
  lex_.ResetTo(p);
  return std::string(value);
}

StatusOr<std::string> HloParserImpl::ScanBalancedGroup() {
  const Token& tok = lex_.Peek();
  if (tok.kind != TokKind::kLbrace) return ErrorAtToken(tok, "expected '{'");
  const std::string_view t = text_;
  size_t depth = 0;
  size_t p = tok.offset;
  const size_t start = p;
  while (p < t.size()) {
    const char c = t[p];
    if (c == '"' || c == '\'') {
      const size_t past = PastQuoted(t, p);
      if (past == std::string_view::npos) return ErrorAt(p, "unterminated string");
      p = past;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) {
      lex_.ResetTo(p + 1);
      return std::string(t.substr(start, p + 1 - start));
    }
    ++p;
  }
  return ErrorAt(start, "unbalanced '{': end of file before its '}'");
}

Status HloParserImpl::ParseSharding(HloSharding* out, int depth) {
  if (depth > kMaxNestingDepth) {
    return ErrorAt(lex_.Peek().offset,
                   fmt::format("sharding nested deeper than {} levels", kMaxNestingDepth));
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' to open the sharding"));
  const Token tok = lex_.Peek();
  if (tok.kind == TokKind::kRbrace || tok.kind == TokKind::kLbrace) {
    out->kind = HloSharding::Kind::kTuple;
    while (!ConsumeIf(TokKind::kRbrace)) {
      HloSharding element;
      TPUSIM_RETURN_IF_ERROR(ParseSharding(&element, depth + 1));
      out->tuple_elements.push_back(std::move(element));
      if (lex_.Peek().kind != TokKind::kRbrace) {
        TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}' in the tuple sharding"));
      }
    }
    return OkStatus();
  }
  if (tok.kind != TokKind::kIdent) {
    return ErrorAtToken(tok, fmt::format("expected a sharding, got {}", Describe(tok)));
  }
  lex_.Next();
  if (tok.text == "replicated") {
    out->kind = HloSharding::Kind::kReplicated;
  } else if (tok.text == "manual") {
    out->kind = HloSharding::Kind::kManual;
  } else if (tok.text == "unknown") {
    out->kind = HloSharding::Kind::kUnknown;
  } else if (tok.text == "maximal") {
    out->kind = HloSharding::Kind::kMaximal;
    const Token& d = lex_.Peek();
    if (d.kind != TokKind::kIdent || d.text != "device") {
      return ErrorAtToken(d, "expected device=N after 'maximal'");
    }
    lex_.Next();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kEqual, "'=' after device"));
    TPUSIM_ASSIGN_OR_RETURN(out->device, ParseInt());
  } else if (tok.text == "devices") {
    out->kind = HloSharding::Kind::kTiled;
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kEqual, "'=' after devices"));
    const Token open = lex_.Peek();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLsquare, "'[' for the tile assignment dimensions"));
    while (!ConsumeIf(TokKind::kRsquare)) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
      out->tile_assignment_dims.push_back(v);
      if (lex_.Peek().kind != TokKind::kRsquare) {
        TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ']'"));
      }
    }
    if (lex_.Peek().kind == TokKind::kLeq) {
      out->iota_form = true;
      out->iota.dims = out->tile_assignment_dims;
      TPUSIM_RETURN_IF_ERROR(ParseIotaTail(&out->iota));
      TPUSIM_ASSIGN_OR_RETURN(out->tile_assignment_devices, out->iota.Expand());
    } else {
      while (lex_.Peek().kind == TokKind::kInt) {
        if (static_cast<int64_t>(out->tile_assignment_devices.size()) >= kMaxDevices) {
          return ErrorAt(lex_.Peek().offset, "too many devices in the tile assignment");
        }
        TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
        out->tile_assignment_devices.push_back(v);
        if (lex_.Peek().kind == TokKind::kComma && lex_.PeekNext().kind == TokKind::kInt) {
          lex_.Next();
        } else {
          break;
        }
      }
      IotaTileAssignment count_check{out->tile_assignment_dims, out->tile_assignment_dims, {}};
      StatusOr<std::vector<int64_t>> n = count_check.Expand();
      if (!n.ok() || n->size() != out->tile_assignment_devices.size()) {
        return ErrorAt(open.offset,
                       fmt::format("tile assignment [{}] needs {} devices, {} are listed",
                                   fmt::join(out->tile_assignment_dims, ","),
                                   n.ok() ? std::to_string(n->size()) : std::string("too many"),
                                   out->tile_assignment_devices.size()));
      }
    }
  } else if (tok.text == "mesh" || tok.text == "maximal_mesh") {
    // A named (mesh-and-axes) sharding, `{mesh[a=2,b=4], [{a},{}]}`: kept verbatim; tpusim
    // partitions only from tile assignments, so it reads as unknown.
    out->kind = HloSharding::Kind::kUnknown;
    lex_.ResetTo(tok.offset);
  } else {
    return ErrorAt(tok.offset, fmt::format("unknown sharding '{}'", tok.text));
  }
  // Modifiers.
  while (lex_.Peek().kind == TokKind::kIdent) {
    const Token& m = lex_.Peek();
    if (m.text == "last_tile_dim_replicate") {
      out->last_tile_dim_replicate = true;
      lex_.Next();
    } else if (m.text == "last_tile_dims" && lex_.PeekNext().kind == TokKind::kEqual) {
      lex_.Next();
      lex_.Next();
      TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' after last_tile_dims="));
      while (!ConsumeIf(TokKind::kRbrace)) {
        const Token& v = lex_.Peek();
        if (v.kind != TokKind::kIdent) return ErrorAtToken(v, "expected a subgroup type");
        out->last_tile_dims.emplace_back(lex_.Next().text);
        if (lex_.Peek().kind != TokKind::kRbrace) {
          TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}'"));
        }
      }
    } else {
      break;
    }
  }
  if (lex_.Peek().kind != TokKind::kRbrace && lex_.Peek().kind != TokKind::kEof) {
    // metadata={...}, shard_as N, shard_like N, ...: kept verbatim up to the closing '}'.
    const size_t start = lex_.Peek().offset;
    size_t p = start;
    int nest = 0;
    const std::string_view t = text_;
    while (p < t.size()) {
      const char c = t[p];
      if (c == '"') {
        size_t e = p + 1;
        while (e < t.size() && t[e] != '"') e += (t[e] == '\\') ? 2 : 1;
        p = e + 1;
        continue;
      }
      if (c == '{') ++nest;
      if (c == '}') {
        if (nest == 0) break;
        --nest;
      }
      ++p;
    }
    if (p >= t.size()) return ErrorAt(start, "unexpected end of file in a sharding");
    std::string_view extra = t.substr(start, p - start);
    while (!extra.empty() && (extra.back() == ' ' || extra.back() == '\n')) extra.remove_suffix(1);
    out->extra = std::string(extra);
    lex_.ResetTo(p);
  }
  return Expect(TokKind::kRbrace, "'}' to close the sharding");
}

Status HloParserImpl::ParseMetadata(OpMetadata* out) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' to open metadata"));
  // XLA's sub-attribute list: '{' (','? key=value)* '}' — a comma before each entry is optional.
  while (!ConsumeIf(TokKind::kRbrace)) {
    ConsumeIf(TokKind::kComma);
    const Token key = lex_.Peek();
    if (key.kind != TokKind::kIdent || lex_.PeekNext().kind != TokKind::kEqual) {
      return ErrorAtToken(key,
                          fmt::format("expected key=value in metadata, got {}", Describe(key)));
    }
    lex_.Next();
    lex_.Next();
    const Token& v = lex_.Peek();
    if (key.text == "op_type" || key.text == "op_name" || key.text == "source_file") {
      if (v.kind != TokKind::kString) {
        return ErrorAtToken(v, fmt::format("expected a string for metadata {}", key.text));
      }
      std::string s = lex_.Next().string_value;
      (key.text == "op_type"   ? out->op_type
       : key.text == "op_name" ? out->op_name
                               : out->source_file) = std::move(s);
    } else if (key.text == "source_line") {
      TPUSIM_ASSIGN_OR_RETURN(out->source_line, ParseInt());
    } else if (v.kind == TokKind::kLbrace) {
      TPUSIM_ASSIGN_OR_RETURN(std::string raw, ScanBalancedGroup());
      out->other.emplace_back(std::string(key.text), std::move(raw));
    } else if (v.kind == TokKind::kString || v.kind == TokKind::kInt || v.kind == TokKind::kIdent ||
               v.kind == TokKind::kFloat || v.kind == TokKind::kName) {
      const Token t = lex_.Next();
      out->other.emplace_back(std::string(key.text),
                              std::string(text_.substr(t.offset, t.end - t.offset)));
    } else {
      return ErrorAtToken(v, fmt::format("bad value {} for metadata {}", Describe(v), key.text));
    }
  }
  return OkStatus();
}

Status HloParserImpl::ParseFrontendAttributes(
    std::vector<std::pair<std::string, std::string>>* out) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' to open frontend_attributes"));
  while (!ConsumeIf(TokKind::kRbrace)) {
    const Token key = lex_.Peek();
    if ((key.kind != TokKind::kIdent && key.kind != TokKind::kString) ||
        lex_.PeekNext().kind != TokKind::kEqual) {
      return ErrorAtToken(
          key, fmt::format("expected key=\"value\" in frontend_attributes, got {}", Describe(key)));
    }
    lex_.Next();
    lex_.Next();
    std::string k = key.kind == TokKind::kString ? key.string_value : std::string(key.text);
    const Token& v = lex_.Peek();
    if (v.kind == TokKind::kString) {
      out->emplace_back(std::move(k), lex_.Next().string_value);
    } else if (v.kind == TokKind::kLbrace) {
      TPUSIM_ASSIGN_OR_RETURN(std::string raw, ScanBalancedGroup());
      out->emplace_back(std::move(k), std::move(raw));
    } else if (v.kind == TokKind::kEof || v.kind == TokKind::kError) {
      return ErrorAtToken(v, "bad value in frontend_attributes");
    } else {
      out->emplace_back(std::move(k), std::string(lex_.Next().text));
    }
    if (lex_.Peek().kind != TokKind::kRbrace) {
      TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or '}' in frontend_attributes"));
    }
  }
  return OkStatus();
}

}  // namespace tpusim::hlo::internal
