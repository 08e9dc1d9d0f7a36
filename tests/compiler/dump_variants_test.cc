// Robustness to how a dump is written (issue 16): every real module of the corpus (tests/data/hlo
// and ../shared/hlo/real) is rewritten in the ways XLA's printer and parser allow — `%` prefixes
// dropped, operand shapes dropped, layouts dropped, commas in metadata, attributes in reverse
// order, no ROOT on a last instruction, no or empty computation signatures, elided constants, the
// other replica-group syntax — and each variant must parse, verify, survive print -> parse
// unchanged, describe the same computation as the original (opcodes, shapes without layouts,
// operands, attributes but layouts and literal values), and run as `tpusim run --timing-only` does
// (driver::RunModule: compile, then simulate) to the same number of ISA instructions and the same
// cycles as the original where the rewrite cannot change values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "compiler/compile.h"
#include "config/config_loader.h"
#include "driver/run_module.h"
#include "hlo/computation.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/structural_equal.h"
#include "hlo/verifier.h"

namespace tpusim::compiler {
namespace {

// ---- Line-level helpers over the printer's canonical text -------------------------------------

// Index of the bracket closing the one at `open` (same kind), or npos; skips strings.
size_t Closing(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t p = open; p < s.size(); ++p) {
    const char c = s[p];
    if (c == '"') {
      for (++p; p < s.size() && s[p] != '"'; ++p) p += s[p] == '\\' ? 1 : 0;
      continue;
    }
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') {
      if (--depth == 0) return p;
    }
  }
  return std::string::npos;
}

// Splits `s` at commas outside brackets and strings.
std::vector<std::string> SplitTopLevel(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t p = 0; p < s.size(); ++p) {
    const char c = s[p];
    if (c == '"') {
      for (++p; p < s.size() && s[p] != '"'; ++p) p += s[p] == '\\' ? 1 : 0;
      continue;
    }
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(s.substr(start, p - start));
      start = p + 1;
    }
  }
  parts.push_back(s.substr(start));
  return parts;
}

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' ');
  const size_t b = s.find_last_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// An instruction line `  [ROOT ]%n = SHAPE opcode(OPERANDS)ATTRS`, cut into its parts.
struct InstructionLine {
  std::string head;      // up to and including "opcode("
  std::string operands;  // between the parentheses
  std::string attrs;     // after ')', starting with ", " or empty
};

bool CutInstruction(const std::string& line, InstructionLine* out) {
  const size_t eq = line.find(" = ");
  if (eq == std::string::npos || line.find("HloModule") != std::string::npos) return false;
  size_t p = eq + 3;
  if (line[p] == '(') p = Closing(line, p) + 1;  // tuple shape
  p = line.find('(', p);                         // the operand list
  if (p == std::string::npos) return false;
  const size_t close = Closing(line, p);
  if (close == std::string::npos) return false;
  out->head = line.substr(0, p + 1);
  out->operands = line.substr(p + 1, close - p - 1);
  out->attrs = line.substr(close + 1);
  return true;
}

using Rewrite = std::function<std::string(const std::string& line)>;

std::string EachLine(const std::string& text, const Rewrite& f) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += f(text.substr(start, end - start));
    out += '\n';
    start = end + 1;
  }
  return out;
}

// ---- The variants ----------------------------------------------------------------------------

std::string NoPercent(const std::string& text) {
  std::string out;
  bool in_string = false;
  for (size_t p = 0; p < text.size(); ++p) {
    if (text[p] == '"' && (p == 0 || text[p - 1] != '\\')) in_string = !in_string;
    if (!in_string && text[p] == '%') continue;
    out += text[p];
  }
  return out;
}

std::string NoOperandShapes(const std::string& text) {
  return EachLine(text, [](const std::string& line) {
    InstructionLine l;
    if (!CutInstruction(line, &l) || l.head.find(" constant(") != std::string::npos ||
        l.head.find(" parameter(") != std::string::npos) {
      return line;
    }
    std::string ops;
    for (const std::string& piece : SplitTopLevel(l.operands)) {
      const std::string t = Trim(piece);
      const size_t name = t.rfind(" %");
      if (!ops.empty()) ops += ", ";
      ops += name == std::string::npos ? t : t.substr(name + 1);
    }
    return l.head + ops + ")" + l.attrs;
  });
}

std::string NoLayouts(const std::string& text) {
  std::string out;
  for (size_t p = 0; p < text.size(); ++p) {
    out += text[p];
    if (text[p] == ']' && p + 1 < text.size() && text[p + 1] == '{') {
      const size_t close = Closing(text, p + 1);
      if (close != std::string::npos) p = close;
    }
  }
  return out;
}

std::string MetadataCommas(const std::string& text) {
  std::string out = text;
  size_t p = 0;
  while ((p = out.find("metadata={", p)) != std::string::npos) {
    const size_t close = Closing(out, p + 9);
    if (close == std::string::npos) break;
    std::string inner = out.substr(p + 10, close - p - 10);
    std::string with;
    bool in_string = false;
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '"' && (i == 0 || inner[i - 1] != '\\')) in_string = !in_string;
      if (!in_string && inner[i] == ' ' && i > 0 && inner[i - 1] != ',') {
        with += ", ";
        continue;
      }
      with += inner[i];
    }
    out.replace(p + 10, close - p - 10, with);
    p += 10 + with.size();
  }
  return out;
}

std::string ReversedAttributes(const std::string& text) {
  return EachLine(text, [](const std::string& line) {
    InstructionLine l;
    if (!CutInstruction(line, &l) || l.attrs.size() < 2) return line;
    std::vector<std::string> attrs = SplitTopLevel(l.attrs.substr(2));
    std::string out = l.head + l.operands + ")";
    for (auto it = attrs.rbegin(); it != attrs.rend(); ++it) out += ", " + Trim(*it);
    return out;
  });
}

std::string NoLastRoot(const std::string& text) {
  // "ROOT" of an instruction followed by the computation's closing brace: XLA takes the last.
  std::string out = text;
  size_t p = 0;
  while ((p = out.find("  ROOT ", p)) != std::string::npos) {
    const size_t eol = out.find('\n', p);
    if (eol != std::string::npos && out.compare(eol + 1, 1, "}") == 0) out.erase(p + 2, 5);
    ++p;
  }
  return out;
}

// `%c (p: f32[]) -> f32[] {` -> `%c {` (or `%c () -> f32[] {` when `empty_params`).
std::string Signatures(const std::string& text, bool empty_params) {
  return EachLine(text, [&](const std::string& line) {
    if (line.empty() || line[0] == ' ' || line.back() != '{' ||
        line.find(" = ") != std::string::npos) {
      return line;
    }
    const size_t open = line.find(" (");
    if (open == std::string::npos) return line;
    const size_t close = Closing(line, open + 1);
    if (close == std::string::npos) return line;
    if (!empty_params) return line.substr(0, open) + " {";
    return line.substr(0, open) + " ()" + line.substr(close + 1);
  });
}

std::string ElidedConstants(const std::string& text) {
  return EachLine(text, [](const std::string& line) {
    const size_t c = line.find(" constant({");
    if (c == std::string::npos) return line;
    const size_t close = Closing(line, c + 10);
    if (close == std::string::npos) return line;
    return line.substr(0, c + 10) + "{...}" + line.substr(close + 1);
  });
}

// Replica groups in the other syntax: explicit lists that are an iota become `[g,s]<=[n]`, iota
// forms become explicit lists (module-level: the parser's own structures).
void SwapReplicaGroupSyntax(hlo::HloModule& m) {
  const int64_t devices = m.replica_count() * m.num_partitions();
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      hlo::ReplicaGroups& g = i->mutable_replica_groups();
      if (!i->has_replica_groups()) continue;
      if (g.iota_form) {
        auto expanded = hlo::ExpandReplicaGroups(g, devices);
        if (!expanded.ok()) continue;
        g.groups = *expanded;
        g.iota_form = false;
        continue;
      }
      if (g.groups.empty()) continue;
      const int64_t n = static_cast<int64_t>(g.groups.size());
      const int64_t s = static_cast<int64_t>(g.groups[0].size());
      bool iota = true;
      for (int64_t a = 0; a < n && iota; ++a) {
        iota = static_cast<int64_t>(g.groups[static_cast<size_t>(a)].size()) == s;
        for (int64_t b = 0; b < s && iota; ++b) {
          iota = g.groups[static_cast<size_t>(a)][static_cast<size_t>(b)] == a * s + b;
        }
      }
      if (!iota) continue;
      g.iota_form = true;
      g.iota = hlo::IotaTileAssignment{{n, s}, {n * s}, {}};
      g.groups.clear();
    }
  }
}

// ---- What must hold for every variant ----------------------------------------------------------

// Opcodes, shapes without layouts, operands and callees by position: what a rewrite keeps.
std::string Fingerprint(const hlo::HloModule& m) {
  std::string f;
  for (const auto& c : m.computations()) {
    f += c->IsEntry() ? "ENTRY{" : "{";
    std::map<const hlo::HloInstruction*, size_t> index;
    for (const auto& i : c->instructions()) {
      index[i.get()] = index.size();
      f += std::string(hlo::HloOpcodeString(i->opcode())) + ":" + i->shape().ToString(false) + "(";
      for (const hlo::HloInstruction* op : i->operands()) f += std::to_string(index[op]) + ",";
      f += ")";
      if (c->root_instruction() == i.get()) f += "*";
      f += ";";
    }
    f += "}";
  }
  return f;
}

struct Variant {
  std::string name;
  std::string text;
  bool compile;  // `tpusim run` it (timing-only) and compare program size and cycles (slow: few)
};

// What `tpusim run MODULE --config tpu-v4 --timing-only` makes of a module: the ISA instructions
// of its program and the simulated cycles; {-1, -1} when the run fails.
struct RunFigures {
  int64_t instructions = -1;
  int64_t cycles = -1;
  bool operator==(const RunFigures&) const = default;
};

RunFigures TimingOnlyRun(const hlo::HloModule& m) {
  static const config::ChipConfig chip = *config::LoadChipConfig("tpu-v4");
  driver::RunOptions o;
  o.timing_only = true;
  StatusOr<driver::RunModuleResult> r = driver::RunModule(m, chip, o);
  if (!r.ok()) return {};
  RunFigures f;
  f.instructions = 0;
  for (const isa::CoreProgram& core : r->compiled.program.cores) {
    f.instructions += static_cast<int64_t>(core.instructions.size());
  }
  f.cycles = static_cast<int64_t>(r->sim.cycles.value());
  return f;
}

// Variants run and compared with their original (CheckVariants).
int variants_run = 0;

void CheckVariants(const std::string& path) {
  SCOPED_TRACE(path);
  StatusOr<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  StatusOr<std::unique_ptr<hlo::HloModule>> original = hlo::ParseHloModule(*text, path);
  ASSERT_TRUE(original.ok()) << original.status().message();
  const std::string printed = hlo::PrintModule(**original);
  const std::string want = Fingerprint(**original);
  // Running is the slow part: only the bundled corpus, and only the variants marked.
  const bool bundled = path.find("tests/data/hlo") != std::string::npos;
  const RunFigures run = bundled ? TimingOnlyRun(**original) : RunFigures{};
  StatusOr<std::unique_ptr<hlo::HloModule>> swapped = hlo::ParseHloModule(printed, "swapped");
  ASSERT_TRUE(swapped.ok()) << swapped.status().message();
  SwapReplicaGroupSyntax(**swapped);
  const std::vector<Variant> variants = {
      {"printed", printed, false},
      {"no %", NoPercent(printed), false},
      {"no operand shapes", NoOperandShapes(printed), false},
      {"no layouts", NoLayouts(printed), false},
      {"metadata commas", MetadataCommas(printed), false},
      {"attributes reversed", ReversedAttributes(printed), false},
      {"no ROOT on the last instruction", NoLastRoot(printed), false},
      {"no signatures", Signatures(printed, false), false},
      {"empty parameter lists", Signatures(printed, true), false},
      {"elided constants", ElidedConstants(printed), false},
      {"other replica-group syntax", hlo::PrintModule(**swapped), true},
      {"all at once",
       NoLastRoot(Signatures(
           ReversedAttributes(MetadataCommas(NoOperandShapes(NoPercent(printed)))), false)),
       true},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::ParseHloModule(v.text, v.name);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_TRUE(hlo::VerifyModule(**m, v.text).ok()) << hlo::VerifyModule(**m, v.text).message();
    StatusOr<std::unique_ptr<hlo::HloModule>> again =
        hlo::ParseHloModule(hlo::PrintModule(**m), "reprinted");
    ASSERT_TRUE(again.ok()) << again.status().message();
    std::string diff;
    EXPECT_TRUE(hlo::ModulesEqual(**m, **again, &diff)) << diff;
    EXPECT_EQ(Fingerprint(**m), want);
    if (v.compile && run.cycles >= 0) {
      const RunFigures got = TimingOnlyRun(**m);
      ++variants_run;
      EXPECT_EQ(got.instructions, run.instructions);
      EXPECT_EQ(got.cycles, run.cycles);
    }
  }
}

std::vector<std::string> Corpus() {
  std::vector<std::string> files;
  for (const char* dir : {"tests/data/hlo", "../shared/hlo/real"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".hlo") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(DumpVariantsTest, TheRewritesThemselvesDoWhatTheySay) {
  const std::string line =
      "  ROOT %a.1 = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %y), metadata={op_type=\"Add\" "
      "op_name=\"a b\"}, sharding={replicated}\n}\n";
  EXPECT_EQ(NoOperandShapes(line),
            "  ROOT %a.1 = f32[4]{0} add(%x, %y), metadata={op_type=\"Add\" op_name=\"a b\"}, "
            "sharding={replicated}\n}\n");
  EXPECT_EQ(NoLayouts("f32[4]{0} s32[2,3]{1,0:T(8,128)} f32[]"), "f32[4] s32[2,3] f32[]");
  EXPECT_NE(MetadataCommas(line).find("op_type=\"Add\", op_name=\"a b\""), std::string::npos);
  EXPECT_NE(ReversedAttributes(line).find("), sharding={replicated}, metadata={"),
            std::string::npos);
  EXPECT_EQ(NoLastRoot(line).find("ROOT"), std::string::npos);
  EXPECT_EQ(Signatures("%c (p: f32[], q: (s32[], f32[])) -> f32[] {\n", false), "%c {\n");
  EXPECT_EQ(Signatures("%c (p: f32[]) -> f32[] {\n", true), "%c () -> f32[] {\n");
  EXPECT_EQ(NoPercent("%a = f32[] add(%b, %c), metadata={op_name=\"50%\"}"),
            "a = f32[] add(b, c), metadata={op_name=\"50%\"}");
}

TEST(DumpVariantsTest, EveryCorpusModuleSurvivesEveryRewrite) {
  const std::vector<std::string> files = Corpus();
  ASSERT_FALSE(files.empty()) << "tests/data/hlo holds the bundled corpus";
  if (!std::filesystem::is_directory("../shared/hlo/real")) {
    std::printf("../shared/hlo/real is absent: only the bundled corpus is rewritten\n");
  }
  for (const std::string& f : files) CheckVariants(f);
  std::printf("%d variants of bundled modules ran and matched their originals\n", variants_run);
  EXPECT_GE(variants_run, 2 * 19);  // two per bundled module that runs without flags
}

}  // namespace
}  // namespace tpusim::compiler
