#include "hlo/lexer.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

namespace tpusim::hlo {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c) || c == '.' || c == '-'; }

// End of an identifier starting at `p` (which must be an ident start), stopping before "->".
size_t IdentEnd(std::string_view t, size_t p) {
  size_t e = p + 1;
  while (e < t.size() && IsIdentChar(t[e])) {
    if (t[e] == '-' && e + 1 < t.size() && t[e + 1] == '>') break;
    ++e;
  }
  return e;
}

// Matches `[chars]{2,}` at p; returns the end or npos.
size_t MatchLabelRun(std::string_view t, size_t p, std::string_view chars) {
  size_t e = p;
  while (e < t.size() && (IsDigit(t[e]) || chars.find(t[e]) != std::string_view::npos)) ++e;
  return e - p >= 2 ? e : std::string_view::npos;
}

// dim labels: [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
size_t MatchDimLabels(std::string_view t, size_t p) {
  size_t e = MatchLabelRun(t, p, "bf?");
  if (e == std::string_view::npos || e >= t.size() || t[e] != '_') return std::string_view::npos;
  e = MatchLabelRun(t, e + 1, "io?");
  if (e == std::string_view::npos || t.substr(e, 2) != "->") return std::string_view::npos;
  e = MatchLabelRun(t, e + 2, "bf?");
  if (e == std::string_view::npos || (e < t.size() && IsIdentChar(t[e]))) {
    return std::string_view::npos;
  }
  return e;
}

// -?[0-9]+ at p; returns the end or npos.
size_t MatchInt(std::string_view t, size_t p, bool allow_minus) {
  size_t e = p;
  if (allow_minus && e < t.size() && t[e] == '-') ++e;
  size_t digits = e;
  while (e < t.size() && IsDigit(t[e])) ++e;
  return e > digits ? e : std::string_view::npos;
}

// padding: -?N_-?N(_-?N)?(x-?N_-?N(_-?N)?)*
size_t MatchPad(std::string_view t, size_t p) {
  size_t e = p;
  while (true) {
    e = MatchInt(t, e, true);
    if (e == std::string_view::npos || e >= t.size() || t[e] != '_') return std::string_view::npos;
    e = MatchInt(t, e + 1, true);
    if (e == std::string_view::npos) return std::string_view::npos;
    if (e < t.size() && t[e] == '_') {
      e = MatchInt(t, e + 1, true);
      if (e == std::string_view::npos) return std::string_view::npos;
    }
    if (e + 1 < t.size() && t[e] == 'x' && (IsDigit(t[e + 1]) || t[e + 1] == '-')) {
      ++e;
      continue;
    }
    break;
  }
  if (e < t.size() && (IsIdentStart(t[e]) || t[e] == '.')) return std::string_view::npos;
  return e;
}

// DxD: N(xN)+
size_t MatchDxD(std::string_view t, size_t p) {
  size_t e = MatchInt(t, p, false);
  int parts = 1;
  while (e != std::string_view::npos && e + 1 < t.size() && t[e] == 'x' && IsDigit(t[e + 1])) {
    e = MatchInt(t, e + 1, false);
    ++parts;
  }
  if (e == std::string_view::npos || parts < 2) return std::string_view::npos;
  if (e < t.size() && (IsIdentStart(t[e]) || t[e] == '.')) return std::string_view::npos;
  return e;
}

}  // namespace

std::string_view TokKindName(TokKind kind) {
  switch (kind) {
    case TokKind::kEof:
      return "end of file";
    case TokKind::kError:
      return "invalid token";
    case TokKind::kLbrace:
      return "'{'";
    case TokKind::kRbrace:
      return "'}'";
    case TokKind::kLparen:
      return "'('";
    case TokKind::kRparen:
      return "')'";
    case TokKind::kLsquare:
      return "'['";
    case TokKind::kRsquare:
      return "']'";
    case TokKind::kComma:
      return "','";
    case TokKind::kColon:
      return "':'";
    case TokKind::kEqual:
      return "'='";
    case TokKind::kArrow:
      return "'->'";
    case TokKind::kLeq:
      return "'<='";
    case TokKind::kDots:
      return "'...'";
    case TokKind::kQuestion:
      return "'?'";
    case TokKind::kName:
      return "name";
    case TokKind::kIdent:
      return "identifier";
    case TokKind::kInt:
      return "integer";
    case TokKind::kFloat:
      return "number";
    case TokKind::kString:
      return "string";
    case TokKind::kDimLabels:
      return "dim labels";
    case TokKind::kDxD:
      return "NxM";
    case TokKind::kPad:
      return "padding";
  }
  return "token";
}

Lexer::Lexer(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

SourceLocation Lexer::LocationOf(size_t offset) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const size_t line = static_cast<size_t>(it - line_starts_.begin());  // 1-based
  const size_t start = line_starts_[line - 1];
  return SourceLocation{static_cast<int>(line), static_cast<int>(offset - start + 1)};
}

size_t Lexer::SkipTrivia(size_t p) const {
  const std::string_view t = text_;
  while (p < t.size()) {
    const char c = t[p];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++p;
    } else if (c == '/' && p + 1 < t.size() && t[p + 1] == '/') {
      while (p < t.size() && t[p] != '\n') ++p;
    } else if (c == '/' && p + 1 < t.size() && t[p + 1] == '*') {
      const size_t close = t.find("*/", p + 2);
      if (close == std::string_view::npos) return p;  // LexAt reports the unterminated comment
      p = close + 2;
    } else {
      break;
    }
  }
  return p;
}

const Token& Lexer::Peek() {
  if (!have_cur_) {
    cur_ = LexAt(pos_);
    have_cur_ = true;
  }
  return cur_;
}

const Token& Lexer::PeekNext() {
  Peek();
  if (!have_next_) {
    next_ = cur_.kind == TokKind::kEof ? cur_ : LexAt(cur_.end);
    have_next_ = true;
  }
  return next_;
}

Token Lexer::Next() {
  Peek();
  Token t = std::move(cur_);
  last_end_ = t.end;
  pos_ = t.end;
  if (have_next_) {
    cur_ = std::move(next_);
    have_next_ = false;
  } else {
    have_cur_ = false;
  }
  return t;
}

void Lexer::ResetTo(size_t offset) {
  pos_ = std::min(offset, text_.size());
  last_end_ = pos_;
  have_cur_ = false;
  have_next_ = false;
}

Token Lexer::LexAt(size_t offset) const {
  const std::string_view t = text_;
  Token tok;
  const size_t p = SkipTrivia(offset);
  tok.offset = p;
  auto finish = [&](TokKind kind, size_t end) {
    tok.kind = kind;
    tok.end = end;
    tok.text = t.substr(p, end - p);
    return tok;
  };
  auto error = [&](size_t end, std::string message) {
    tok.error_message = std::move(message);
    return finish(TokKind::kError, std::max(end, p + 1));
  };
  if (p >= t.size()) return finish(TokKind::kEof, t.size());
  const char c = t[p];
  switch (c) {
    case '{':
      return finish(TokKind::kLbrace, p + 1);
    case '}':
      return finish(TokKind::kRbrace, p + 1);
    case '(':
      return finish(TokKind::kLparen, p + 1);
    case ')':
      return finish(TokKind::kRparen, p + 1);
    case '[':
      return finish(TokKind::kLsquare, p + 1);
    case ']':
      return finish(TokKind::kRsquare, p + 1);
    case ',':
      return finish(TokKind::kComma, p + 1);
    case ':':
      return finish(TokKind::kColon, p + 1);
    case '=':
      return finish(TokKind::kEqual, p + 1);
    case '?':
      return finish(TokKind::kQuestion, p + 1);
    default:
      break;
  }
  if (c == '/' && p + 1 < t.size() && t[p + 1] == '*') {
    return error(t.size(), "unterminated /* comment");
  }
  if (c == '<') {
    if (p + 1 < t.size() && t[p + 1] == '=') return finish(TokKind::kLeq, p + 2);
    return error(p + 1, "unexpected character '<'");
  }
  if (c == '-' && p + 1 < t.size() && t[p + 1] == '>') return finish(TokKind::kArrow, p + 2);
  if (c == '.' && t.substr(p, 3) == "...") return finish(TokKind::kDots, p + 3);
  if (c == '%') {
    if (p + 1 >= t.size() || !IsIdentStart(t[p + 1])) {
      return error(p + 1, "expected a name after '%'");
    }
    const size_t e = IdentEnd(t, p + 1);
    tok.kind = TokKind::kName;
    tok.end = e;
    tok.text = t.substr(p + 1, e - p - 1);
    return tok;
  }
  if (c == '"' || c == '\'') {
    std::string value;
    size_t e = p + 1;
    while (e < t.size() && t[e] != c) {
      if (t[e] == '\\' && e + 1 < t.size()) {
        const char n = t[e + 1];
        switch (n) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case 'r':
            value += '\r';
            break;
          default:
            value += n;  // \\ \" \' and anything else: the character itself
        }
        e += 2;
      } else {
        value += t[e++];
      }
    }
    if (e >= t.size()) return error(t.size(), "unterminated string");
    tok.string_value = std::move(value);
    return finish(TokKind::kString, e + 1);
  }
  if (IsDigit(c) || c == '-' || c == '.') {
    if (IsDigit(c)) {
      const size_t e = MatchDimLabels(t, p);
      if (e != std::string_view::npos) return finish(TokKind::kDimLabels, e);
    }
    LexNumberLike(p, tok);
    return tok;
  }
  if (IsIdentStart(c) || c == '?') {
    if (c == 'b' || c == 'f') {
      const size_t e = MatchDimLabels(t, p);
      if (e != std::string_view::npos) return finish(TokKind::kDimLabels, e);
    }
    size_t e = IdentEnd(t, p);
    const std::string_view word = t.substr(p, e - p);
    if (word == "inf") {
      tok.float_value = std::numeric_limits<double>::infinity();
      return finish(TokKind::kFloat, e);
    }
    if (word == "nan") {
      if (e < t.size() && t[e] == '(') {  // nan(0x7fc00000): payload ignored
        const size_t close = t.find(')', e);
        if (close == std::string_view::npos) return error(t.size(), "unterminated nan(...)");
        e = close + 1;
      }
      tok.float_value = std::numeric_limits<double>::quiet_NaN();
      return finish(TokKind::kFloat, e);
    }
    return finish(TokKind::kIdent, e);
  }
  return error(p + 1, std::string("unexpected character '") + c + "'");
}

void Lexer::LexNumberLike(size_t p, Token& tok) const {
  const std::string_view t = text_;
  auto finish = [&](TokKind kind, size_t end) {
    tok.kind = kind;
    tok.end = end;
    tok.text = t.substr(p, end - p);
  };
  if (size_t e = MatchPad(t, p); e != std::string_view::npos) return finish(TokKind::kPad, e);
  if (size_t e = MatchDxD(t, p); e != std::string_view::npos) return finish(TokKind::kDxD, e);
  if (t[p] == '-' && p + 1 < t.size() && IsIdentStart(t[p + 1])) {
    const size_t e = IdentEnd(t, p + 1);
    const std::string_view word = t.substr(p + 1, e - p - 1);
    if (word == "inf") {
      tok.float_value = -std::numeric_limits<double>::infinity();
      return finish(TokKind::kFloat, e);
    }
    if (word == "nan") {
      size_t end = e;
      if (end < t.size() && t[end] == '(') {
        const size_t close = t.find(')', end);
        end = close == std::string_view::npos ? t.size() : close + 1;
      }
      tok.float_value = -std::numeric_limits<double>::quiet_NaN();
      return finish(TokKind::kFloat, end);
    }
    tok.error_message = "expected a number after '-'";
    return finish(TokKind::kError, p + 1);
  }
  // [-]digits[.digits][e[+-]digits]  or  [-].digits...
  size_t e = p;
  if (t[e] == '-') ++e;
  const size_t digits_start = e;
  while (e < t.size() && IsDigit(t[e])) ++e;
  const size_t int_end = e;
  bool is_float = false;
  if (e < t.size() && t[e] == '.' && !(e + 1 < t.size() && t[e + 1] == '.')) {
    is_float = true;
    ++e;
    while (e < t.size() && IsDigit(t[e])) ++e;
  }
  if (e == digits_start || (e == digits_start + 1 && t[digits_start] == '.')) {
    tok.error_message = "expected a number";
    return finish(TokKind::kError, std::max(e, p + 1));
  }
  if (e < t.size() && (t[e] == 'e' || t[e] == 'E')) {
    size_t x = e + 1;
    if (x < t.size() && (t[x] == '+' || t[x] == '-')) ++x;
    if (x < t.size() && IsDigit(t[x])) {
      is_float = true;
      e = x;
      while (e < t.size() && IsDigit(t[e])) ++e;
    }
  }
  if (is_float) {
    const std::string copy(t.substr(p, e - p));
    tok.float_value = std::strtod(copy.c_str(), nullptr);
    return finish(TokKind::kFloat, e);
  }
  // Integer: accumulate the magnitude in uint64 with an overflow check.
  uint64_t mag = 0;
  bool overflow = false;
  for (size_t i = digits_start; i < int_end; ++i) {
    const uint64_t d = static_cast<uint64_t>(t[i] - '0');
    if (mag > (UINT64_MAX - d) / 10) overflow = true;
    mag = mag * 10 + d;
  }
  const bool negative = t[p] == '-';
  if (negative && mag > (uint64_t{1} << 63)) overflow = true;
  tok.int_overflow = overflow;
  tok.int_value = negative ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
  tok.float_value = negative ? -static_cast<double>(mag) : static_cast<double>(mag);
  finish(TokKind::kInt, e);
}

}  // namespace tpusim::hlo
