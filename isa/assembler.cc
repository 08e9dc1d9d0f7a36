#include "isa/assembler.h"

#include <fmt/format.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "isa/encoding.h"
#include "isa/loop_structure.h"
#include "isa/numerics.h"

namespace tpusim::isa {
namespace {

// An error at a 0-based column of the current line; turned into a located Status by the caller.
struct ParseError {
  int col = 0;
  std::string message;
};

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

// A cursor over one line (comments already removed).
class LineCursor {
 public:
  explicit LineCursor(std::string_view line) : s_(line) {}
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= s_.size();
  }
  int col() const { return static_cast<int>(pos_); }
  char Peek() {
    SkipSpace();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  std::string_view Ident() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && IsIdentChar(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  // A value token: everything up to a comma, a brace or whitespace.
  std::string_view Value() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ' ' && s_[pos_] != '\t' &&
           s_[pos_] != '{' && s_[pos_] != '}' && s_[pos_] != '\r')
      ++pos_;
    return s_.substr(start, pos_ - start);
  }
  std::optional<std::string> QuotedString() {
    SkipSpace();
    if (pos_ >= s_.size() || s_[pos_] != '"') return std::nullopt;
    std::string out;
    for (++pos_; pos_ < s_.size(); ++pos_) {
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\' && pos_ + 1 < s_.size()) {
        char n = s_[++pos_];
        out += n == 'n' ? '\n' : n;
      } else {
        out += c;
      }
    }
    return std::nullopt;
  }
  std::string_view rest() const { return s_.substr(pos_); }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// Removes a `#` or `;` comment, respecting double-quoted strings.
std::string_view StripComment(std::string_view line) {
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '#' || c == ';') {
      return line.substr(0, i);
    }
  }
  return line;
}

std::optional<int64_t> ParseSigned(std::string_view v) {
  bool neg = !v.empty() && v[0] == '-';
  if (neg) v.remove_prefix(1);
  auto u = ParseUnsigned(v);
  if (!u) return std::nullopt;
  if (neg) {
    if (*u > uint64_t{1} << 63) return std::nullopt;
    return static_cast<int64_t>(0 - *u);
  }
  if (*u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(*u);
}

std::optional<float> ParseFloat(std::string_view v) {
  std::string s(v);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  float f = std::strtof(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  // A number written out that overflows f32 (1e400) is refused, as XLA's parser refuses it; only
  // "inf" / "-inf" spell an infinity.
  if (std::isinf(f) && s.find_first_of("0123456789") != std::string::npos) return std::nullopt;
  return f;
}

// The raw 32 bits of an Imm field given the instruction's dtype.
std::optional<uint32_t> ParseImm(std::string_view v, bool is_float) {
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    auto u = ParseUnsigned(v);
    if (!u || *u > 0xFFFFFFFFull) return std::nullopt;
    return static_cast<uint32_t>(*u);
  }
  if (is_float) {
    auto f = ParseFloat(v);
    if (!f) return std::nullopt;
    return std::bit_cast<uint32_t>(*f);
  }
  auto s = ParseSigned(v);
  if (!s || *s < INT32_MIN || *s > INT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(static_cast<int32_t>(*s));
}

std::string FieldList(const OpcodeInfo& info) {
  std::string out;
  for (const FieldSpec& f : info.fields) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out.empty() ? "(none)" : out;
}

std::string EnumChoices(FieldKind kind) {
  std::string out;
  for (int i = 0; i < EnumCardinality(kind); ++i) {
    out += (i ? ", " : "") + std::string(EnumValueName(kind, i));
  }
  return out;
}

// Parses the fields after the mnemonic (cursor positioned after it).
StatusOr<Instruction> ParseFields(Opcode op, LineCursor& cur, int mnemonic_col, ParseError& err) {
  const OpcodeInfo& info = Info(op);
  Instruction inst;
  inst.opcode = op;
  std::vector<bool> seen(info.fields.size(), false);
  std::vector<std::pair<int, std::string_view>> imm_values;  // resolved after dtype is known
  std::vector<int> value_cols(info.fields.size(), mnemonic_col);
  auto fail = [&](int col, std::string msg) -> Status {
    err = {col, std::move(msg)};
    return InvalidArgument("");
  };
  bool first = true;
  while (!cur.AtEnd()) {
    if (!first && !cur.Consume(',')) {
      return fail(cur.col(), "expected ',' between fields");
    }
    first = false;
    int name_col = cur.col();
    cur.SkipSpace();
    name_col = cur.col();
    std::string_view name = cur.Ident();
    if (name.empty()) return fail(name_col, "expected a field name");
    int idx = FieldIndex(op, name);
    if (idx < 0) {
      return fail(name_col, fmt::format("{} has no field '{}' (fields: {})", info.mnemonic, name,
                                        FieldList(info)));
    }
    if (seen[idx]) return fail(name_col, fmt::format("field '{}' given twice", name));
    seen[idx] = true;
    if (!cur.Consume('=')) return fail(cur.col(), fmt::format("expected '=' after '{}'", name));
    cur.SkipSpace();
    int vcol = cur.col();
    value_cols[idx] = vcol;
    std::string_view v = cur.Value();
    if (v.empty()) return fail(vcol, fmt::format("missing value for field '{}'", name));
    const FieldSpec& spec = info.fields[idx];
    uint64_t raw = 0;
    switch (spec.kind) {
      case FieldKind::kU: {
        auto u = ParseUnsigned(v);
        if (!u)
          return fail(vcol,
                      fmt::format("field '{}': expected an unsigned integer, got '{}'", name, v));
        raw = *u;
        break;
      }
      case FieldKind::kS: {
        auto s = ParseSigned(v);
        if (!s)
          return fail(vcol, fmt::format("field '{}': expected an integer, got '{}'", name, v));
        raw = static_cast<uint64_t>(*s);
        break;
      }
      case FieldKind::kBool:
        if (v == "1" || v == "true") {
          raw = 1;
        } else if (v == "0" || v == "false") {
          raw = 0;
        } else {
          return fail(vcol, fmt::format("field '{}': expected 0 or 1, got '{}'", name, v));
        }
        break;
      case FieldKind::kImm:
        imm_values.emplace_back(idx, v);
        continue;
      default: {
        auto e = ParseEnumValue(spec.kind, v);
        if (!e) {
          return fail(vcol, fmt::format("field '{}': '{}' is not a {} (one of: {})", name, v,
                                        FieldKindName(spec.kind), EnumChoices(spec.kind)));
        }
        raw = *e;
      }
    }
    Status st = CheckFieldValue(spec, raw);
    if (!st.ok()) return fail(vcol, st.message());
    inst.fields[idx] = raw;
  }
  for (size_t i = 0; i < info.fields.size(); ++i) {
    if (seen[i]) continue;
    if (!info.fields[i].has_default) {
      return fail(mnemonic_col, fmt::format("{}: missing field '{}' ({})", info.mnemonic,
                                            info.fields[i].name, info.fields[i].doc));
    }
    inst.fields[i] = static_cast<uint64_t>(info.fields[i].default_value);
  }
  int dt = FieldIndex(op, "dtype");
  bool is_float = dt >= 0 && IsFloat(static_cast<DType>(inst.fields[dt]));
  for (auto [idx, v] : imm_values) {
    auto bits = ParseImm(v, is_float);
    if (!bits) {
      return fail(value_cols[idx],
                  fmt::format("field '{}': '{}' is not a valid {} immediate", info.fields[idx].name,
                              v, is_float ? "f32" : "32-bit integer"));
    }
    inst.fields[idx] = *bits;
  }
  return inst;
}

class Assembler {
 public:
  Assembler(std::string_view text, std::string_view file) : text_(text), file_(file) {
    program_.source_file = std::string(file);
  }

  StatusOr<Program> Run() {
    int line_no = 0;
    size_t start = 0;
    while (start <= text_.size()) {
      size_t nl = text_.find('\n', start);
      std::string_view line =
          text_.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
      ++line_no;
      line_ = line_no;
      ParseError err;
      Status st = Line(StripComment(line), err);
      if (!st.ok()) {
        if (!st.message().empty()) return st;
        return LocatedError(file_, text_, {line_no, err.col + 1}, err.message);
      }
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
    return Finish();
  }

 private:
  struct CoreState {
    std::vector<std::pair<int, int>> open_loops;  // (line, col) of each open ctrl.loop
    std::vector<int32_t> tags;
  };

  Status Fail(ParseError& err, int col, std::string msg) {
    err = {col, std::move(msg)};
    return InvalidArgument("");
  }

  CoreState& Core(int c) {
    if (static_cast<int>(program_.cores.size()) <= c) {
      program_.cores.resize(c + 1);
      states_.resize(c + 1);
    }
    return states_[c];
  }

  Status Line(std::string_view line, ParseError& err) {
    LineCursor cur(line);
    if (cur.AtEnd()) return OkStatus();
    if (cur.Peek() == '.') {
      int col = cur.col();
      std::string_view word = cur.Ident();
      if (!ParseMnemonic(word)) return Directive(word, col, cur, err);
      // Not a directive after all: fall through is impossible (mnemonics never start with '.').
    }
    int col = cur.col();
    std::string_view word = cur.Ident();
    if (word.empty()) return Fail(err, col, "expected an instruction, a label or a directive");
    if (cur.Peek() == ':') {
      cur.Consume(':');
      Core(core_);
      for (const Symbol& s : program_.symbols) {
        if (s.name == word) return Fail(err, col, fmt::format("label '{}' defined twice", word));
      }
      program_.symbols.push_back({std::string(word), core_,
                                  static_cast<int32_t>(program_.cores[core_].instructions.size())});
      if (cur.AtEnd()) return OkStatus();
      col = cur.col();
      word = cur.Ident();
    }
    auto op = ParseMnemonic(word);
    if (!op) {
      return Fail(err, col, fmt::format("unknown instruction '{}'", word));
    }
    auto inst = ParseFields(*op, cur, col, err);
    if (!inst.ok()) return inst.status();
    CoreState& cs = Core(core_);
    CoreProgram& cp = program_.cores[core_];
    if (*op == Opcode::kCtrlLoop) {
      if (Status st = CheckLoopDepth(cs.open_loops.size()); !st.ok()) {
        return Fail(err, col, st.message());
      }
      cs.open_loops.push_back({line_, col});
    } else if (*op == Opcode::kCtrlEndLoop) {
      if (cs.open_loops.empty()) return Fail(err, col, "ctrl.endloop without a matching ctrl.loop");
      cs.open_loops.pop_back();
    } else if (*op == Opcode::kCtrlBreakUnless && cs.open_loops.empty()) {
      return Fail(err, col, "ctrl.break_unless outside a loop (it leaves the innermost ctrl.loop)");
    }
    if (*op == Opcode::kSyncBarrier || Info(*op).unit == Unit::kIci) {
      bool perm = *op == Opcode::kIciCollectivePermute;
      int idx = FieldIndex(*op, perm ? "pairs" : "group");
      uint64_t v = inst->fields[idx];
      size_t size = perm ? program_.permutations.size() : program_.replica_groups.size();
      if (v >= size) {
        return Fail(err, col,
                    fmt::format("{}={} refers to a missing {} table entry (define it first with "
                                "{})",
                                perm ? "pairs" : "group", v, perm ? "permutation" : "replica group",
                                perm ? ".permutation" : ".replica_groups"));
      }
    }
    cp.instructions.push_back(*inst);
    cp.source_lines.push_back(line_);
    cs.tags.push_back(hlo_tag_);
    return OkStatus();
  }

  Status Directive(std::string_view word, int col, LineCursor& cur, ParseError& err) {
    if (word == ".core") {
      cur.SkipSpace();
      int vcol = cur.col();
      auto v = ParseUnsigned(cur.Value());
      if (!v || *v > 65535) return Fail(err, vcol, "expected a core number 0..65535");
      core_ = static_cast<int>(*v);
      Core(core_);
      return ExpectEnd(cur, err);
    }
    if (word == ".replica_groups" || word == ".permutation") {
      bool perm = word == ".permutation";
      TPUSIM_RETURN_IF_ERROR(TableIndex(
          cur, err, perm ? program_.permutations.size() : program_.replica_groups.size()));
      std::vector<std::vector<int32_t>> lists;
      // A core is in at most one replica group of a table; a permutation sends from each source
      // and to each target once (the verifier's rules, located here at the repeated id).
      std::set<int32_t> members, sources, targets;
      while (!cur.AtEnd()) {
        if (!lists.empty() && !cur.Consume(',')) return Fail(err, cur.col(), "expected ','");
        if (!cur.Consume('{')) return Fail(err, cur.col(), "expected '{'");
        std::vector<int32_t> ids;
        while (!cur.Consume('}')) {
          if (!ids.empty() && !cur.Consume(',')) return Fail(err, cur.col(), "expected ',' or '}'");
          cur.SkipSpace();
          int vcol = cur.col();
          auto v = ParseUnsigned(cur.Value());
          if (!v || *v > 65535) return Fail(err, vcol, "expected a core id 0..65535");
          const int32_t id = static_cast<int32_t>(*v);
          std::set<int32_t>& seen = !perm ? members : ids.empty() ? sources : targets;
          if (!seen.insert(id).second) {
            return Fail(err, vcol,
                        fmt::format("core {} appears twice {}", id,
                                    !perm          ? "in this table (a core is in at most one "
                                                     "replica group)"
                                    : ids.empty() ? "as a source of this permutation"
                                                  : "as a target of this permutation"));
          }
          ids.push_back(id);
          core_ids_.push_back({id, line_, vcol});
        }
        if (perm && ids.size() != 2) {
          return Fail(err, cur.col() - 1, "a permutation pair is {source,target}");
        }
        lists.push_back(std::move(ids));
      }
      if (perm) {
        Permutation p;
        for (auto& l : lists) p.pairs.emplace_back(l[0], l[1]);
        program_.permutations.push_back(std::move(p));
      } else {
        program_.replica_groups.push_back({std::move(lists)});
      }
      return OkStatus();
    }
    if (word == ".hlo_name") {
      TPUSIM_RETURN_IF_ERROR(TableIndex(cur, err, program_.hlo_names.size()));
      cur.SkipSpace();
      int scol = cur.col();
      auto s = cur.QuotedString();
      if (!s) return Fail(err, scol, "expected a quoted HLO instruction name");
      program_.hlo_names.push_back(*s);
      return ExpectEnd(cur, err);
    }
    if (word == ".hlo") {
      cur.SkipSpace();
      int vcol = cur.col();
      if (cur.Peek() == '"') {
        auto s = cur.QuotedString();
        if (!s) return Fail(err, vcol, "unterminated string");
        int32_t found = -1;
        for (size_t i = 0; i < program_.hlo_names.size(); ++i) {
          if (program_.hlo_names[i] == *s) found = static_cast<int32_t>(i);
        }
        if (found < 0) {
          found = static_cast<int32_t>(program_.hlo_names.size());
          program_.hlo_names.push_back(*s);
        }
        hlo_tag_ = found;
        return ExpectEnd(cur, err);
      }
      std::string_view v = cur.Value();
      if (v == "none") {
        hlo_tag_ = kNoHloTag;
        return ExpectEnd(cur, err);
      }
      auto n = ParseUnsigned(v);
      if (!n || *n >= program_.hlo_names.size()) {
        return Fail(err, vcol,
                    fmt::format("expected none, a quoted name or an index below {} (the "
                                ".hlo_name entries so far)",
                                program_.hlo_names.size()));
      }
      hlo_tag_ = static_cast<int32_t>(*n);
      return ExpectEnd(cur, err);
    }
    if (word == ".source") {
      cur.SkipSpace();
      int scol = cur.col();
      auto s = cur.QuotedString();
      if (!s) return Fail(err, scol, "expected a quoted file name");
      // Informational (the HLO file a compiled listing came from): the instructions' source lines
      // are lines of this text, so Program::source_file stays this file.
      return ExpectEnd(cur, err);
    }
    if (word == ".data") return Data(cur, err);
    return Fail(err, col,
                fmt::format("unknown directive '{}' (directives: .core, .replica_groups, "
                            ".permutation, .hlo_name, .hlo, .data, .source)",
                            word));
  }

  Status TableIndex(LineCursor& cur, ParseError& err, size_t expected) {
    cur.SkipSpace();
    int vcol = cur.col();
    auto v = ParseUnsigned(cur.Value());
    if (!v || *v != expected) {
      return Fail(err, vcol,
                  fmt::format("expected table index {} (entries are numbered in order)", expected));
    }
    return OkStatus();
  }

  Status ExpectEnd(LineCursor& cur, ParseError& err) {
    if (!cur.AtEnd()) return Fail(err, cur.col(), "unexpected text at the end of the line");
    return OkStatus();
  }

  Status Data(LineCursor& cur, ParseError& err) {
    DataSegment seg;
    cur.SkipSpace();
    int scol = cur.col();
    auto space = ParseEnumValue(FieldKind::kMemSpace, cur.Ident());
    if (!space || *space == static_cast<uint64_t>(MemSpace::kAcc)) {
      return Fail(err, scol, "expected a memory space: hbm, vmem, smem or host");
    }
    seg.space = static_cast<MemSpace>(*space);
    bool have_core = false, have_addr = false;
    int addr_col = 0;
    for (int i = 0; i < 2; ++i) {
      if (i > 0 && !cur.Consume(',')) return Fail(err, cur.col(), "expected ','");
      cur.SkipSpace();
      int kcol = cur.col();
      std::string_view key = cur.Ident();
      if (!cur.Consume('=')) return Fail(err, cur.col(), "expected '='");
      cur.SkipSpace();
      int vcol = cur.col();
      auto v = ParseUnsigned(cur.Value());
      if (!v) return Fail(err, vcol, "expected an unsigned integer");
      if (key == "core" && !have_core) {
        if (*v > 65535) return Fail(err, vcol, "core id out of range");
        seg.core = static_cast<int32_t>(*v);
        have_core = true;
      } else if (key == "addr" && !have_addr) {
        seg.address = *v;
        addr_col = vcol;
        have_addr = true;
      } else {
        return Fail(err, kcol, "expected core=N, addr=A");
      }
    }
    if (!cur.Consume(',')) return Fail(err, cur.col(), "expected ',' before the element type");
    cur.SkipSpace();
    int tcol = cur.col();
    std::string_view type = cur.Ident();
    if (type == "hex") {
      cur.SkipSpace();
      int hcol = cur.col();
      std::string_view hex = cur.Value();
      if (hex.size() % 2 != 0) return Fail(err, hcol, "hex data needs an even number of digits");
      for (size_t i = 0; i < hex.size(); i += 2) {
        auto b = ParseUnsigned(std::string("0x") + std::string(hex.substr(i, 2)));
        if (!b) return Fail(err, hcol + static_cast<int>(i), "not a hex digit");
        seg.bytes.push_back(static_cast<char>(*b));
      }
      if (seg.address > UINT64_MAX - seg.bytes.size()) return AddressWraps(seg, addr_col, err);
      program_.data.push_back(std::move(seg));
      return ExpectEnd(cur, err);
    }
    auto dt = ParseEnumValue(FieldKind::kDType, type);
    if (!dt) {
      return Fail(err, tcol,
                  "expected hex or an element type (bf16, f32, f16, f64, s4, u4, s8, u8, s16, u16, "
                  "s32, u32, s64, u64, pred or an f8 type: f8e4m3fn, f8e5m2, f8e4m3, f8e3m4, "
                  "f8e4m3fnuz, f8e5m2fnuz, f8e4m3b11fnuz, f8e8m0fnu)");
    }
    DType dtype = static_cast<DType>(*dt);
    bool first = true;
    while (!cur.AtEnd()) {
      if (!first && !cur.Consume(',')) return Fail(err, cur.col(), "expected ','");
      first = false;
      cur.SkipSpace();
      int vcol = cur.col();
      std::string_view v = cur.Value();
      if (!IsFloat(dtype)) {  // integers and pred: the value in the type's range, or its hex bits
        const bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
        std::optional<int64_t> s;
        if (hex) {
          if (auto u = ParseUnsigned(v); u && (IntBits(dtype) >= 64 || *u >> IntBits(dtype) == 0)) {
            s = NormalizeInt(static_cast<int64_t>(*u), dtype);
          }
        } else if (auto d = ParseSigned(v); d && NormalizeInt(*d, dtype) == *d) {
          s = d;
        } else if (auto u = ParseUnsigned(v); u && dtype == DType::kU64) {
          s = static_cast<int64_t>(*u);  // a u64 above 2^63 - 1
        }
        if (!s) return Fail(err, vcol, fmt::format("{} out of range for {}", v, Name(dtype)));
        char e[8];
        StoreInt(e, dtype, *s);
        seg.bytes.append(e, static_cast<size_t>(DTypeBytes(dtype)));
        continue;
      }
      auto bits = ParseImm(v, /*is_float=*/true);
      if (!bits) return Fail(err, vcol, fmt::format("'{}' is not a {} value", v, Name(dtype)));
      const uint32_t b = *bits;
      if (dtype == DType::kF32) {
        char buf[4];
        std::memcpy(buf, &b, 4);
        seg.bytes.append(buf, 4);
      } else {  // bf16, f16, f8: rounded to the type; f64: exact (StoreFloat)
        char e[8];
        StoreFloat(e, dtype, std::bit_cast<float>(b));
        seg.bytes.append(e, static_cast<size_t>(DTypeBytes(dtype)));
      }
    }
    if (seg.address > UINT64_MAX - seg.bytes.size()) return AddressWraps(seg, addr_col, err);
    program_.data.push_back(std::move(seg));
    return OkStatus();
  }

  Status AddressWraps(const DataSegment& seg, int addr_col, ParseError& err) {
    return Fail(err, addr_col,
                fmt::format("the segment's {} bytes from addr=0x{:x} wrap past the end of the "
                            "64-bit address space",
                            seg.bytes.size(), seg.address));
  }

  StatusOr<Program> Finish() {
    for (size_t c = 0; c < states_.size(); ++c) {
      if (!states_[c].open_loops.empty()) {
        auto [line, col] = states_[c].open_loops.back();
        return LocatedError(file_, text_, {line, col + 1},
                            fmt::format("core {}: ctrl.loop without a matching ctrl.endloop", c));
      }
      bool any_tag = false;
      for (int32_t t : states_[c].tags) any_tag |= t != kNoHloTag;
      if (any_tag) program_.cores[c].hlo_tags = states_[c].tags;
    }
    if (program_.cores.empty()) program_.cores.resize(1);
    // Every core a replica group or permutation names must be a core of this program.
    for (const CoreIdUse& use : core_ids_) {
      if (use.id >= program_.num_cores()) {
        return LocatedError(file_, text_, {use.line, use.col + 1},
                            fmt::format("core {} is not a core of this program ({} core(s): "
                                        "the highest .core is {})",
                                        use.id, program_.num_cores(), program_.num_cores() - 1));
      }
    }
    return std::move(program_);
  }

  struct CoreIdUse {
    int32_t id;
    int line, col;
  };
  std::vector<CoreIdUse> core_ids_;  // in .replica_groups and .permutation tables

  std::string_view text_;
  std::string_view file_;
  Program program_;
  std::vector<CoreState> states_;
  int core_ = 0;
  int line_ = 0;
  int32_t hlo_tag_ = kNoHloTag;
};

}  // namespace

std::optional<uint64_t> ParseUnsigned(std::string_view v) {
  if (v.empty()) return std::nullopt;
  int base = 10;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    base = 16;
    v.remove_prefix(2);
  }
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out, base);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return out;
}

StatusOr<Program> Assemble(std::string_view text, std::string_view file_name) {
  return Assembler(text, file_name).Run();
}

StatusOr<Instruction> AssembleInstruction(std::string_view line) {
  LineCursor cur(StripComment(line));
  int col = (cur.SkipSpace(), cur.col());
  std::string_view word = cur.Ident();
  auto op = ParseMnemonic(word);
  ParseError err;
  if (!op)
    return LocatedError("", line, {1, col + 1}, fmt::format("unknown instruction '{}'", word));
  auto inst = ParseFields(*op, cur, col, err);
  if (!inst.ok()) return LocatedError("", line, {1, err.col + 1}, err.message);
  return inst;
}

}  // namespace tpusim::isa
