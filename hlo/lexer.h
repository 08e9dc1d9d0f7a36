// The HLO text lexer (after xla/hlo/parser/hlo_lexer.cc). Turns text into tokens on demand; every
// token records its byte offset so the parser can report `file:line:col` for it. Whitespace, `//
// ...` and
// `/* ... */` comments are skipped. The context-free special tokens of the format are recognised
// directly: dim labels (`b01f_01io->b01f`), DxD (`3x3`), padding (`0_1x-1_2_1`), `<=`, `->`, `...`.
// Identifiers follow XLA: `[a-zA-Z_][a-zA-Z0-9_.-]*` (a `-` directly before `>` ends the
// identifier);
// `%ident` is a kName. The lexer never allocates per element of a shape and never recurses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"

namespace tpusim::hlo {

enum class TokKind : uint8_t {
  kEof,
  kError,  // text holds the offending character(s); error_message says why
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kLsquare,
  kRsquare,
  kComma,
  kColon,
  kEqual,
  kArrow,     // ->
  kLeq,       // <=
  kDots,      // ...
  kQuestion,  // ? (unbounded dynamic dimension)
  kName,      // %ident (text excludes the '%')
  kIdent,     // identifier, keyword, primitive type, opcode, enum value
  kInt,       // -?[0-9]+ (int_value; uint64 values above INT64_MAX wrap, `unsigned_overflow` set)
  kFloat,     // decimal with '.' or exponent, inf, -inf, nan, -nan (float_value)
  kString,    // "..." or '...' (string_value unescaped)
  kDimLabels,
  kDxD,
  kPad,
};

std::string_view TokKindName(TokKind kind);

struct Token {
  TokKind kind = TokKind::kEof;
  std::string_view text;  // the token's characters in the source (for kName without '%')
  size_t offset = 0;      // byte offset of the first character (of '%' for kName)
  size_t end = 0;         // byte offset one past the last character
  int64_t int_value = 0;
  bool int_overflow = false;  // kInt: does not fit in 64 bits at all
  double float_value = 0.0;
  std::string string_value;   // kString: unescaped contents
  std::string error_message;  // kError
};

class Lexer {
 public:
  /// Lexes `text` (the whole file; offsets and locations refer to it). `text` must outlive the
  /// lexer.
  explicit Lexer(std::string_view text);

  /// The current token (lexed lazily).
  const Token& Peek();
  /// The token after the current one.
  const Token& PeekNext();
  /// Returns the current token and advances.
  Token Next();
  /// Moves so that the next token starts at or after `offset` (used after raw, character-level
  /// scans).
  void ResetTo(size_t offset);
  /// Offset just past the last consumed token.
  size_t last_end() const { return last_end_; }
  /// Offset of the first non-trivia character at or after `offset` (skipping whitespace and
  /// comments).
  size_t SkipTrivia(size_t offset) const;

  std::string_view text() const { return text_; }
  /// 1-based line and column of a byte offset.
  SourceLocation LocationOf(size_t offset) const;

 private:
  Token LexAt(size_t offset) const;
  void LexNumberLike(size_t start, Token& tok) const;

  std::string_view text_;
  std::vector<size_t> line_starts_;
  size_t pos_ = 0;  // where the current token's lexing starts
  size_t last_end_ = 0;
  bool have_cur_ = false;
  bool have_next_ = false;
  Token cur_;
  Token next_;
};

}  // namespace tpusim::hlo
