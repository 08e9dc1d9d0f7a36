#include "isa/disassembler.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <map>

namespace tpusim::isa {
namespace {

bool IsAddressField(std::string_view name) {
  return name == "addr" || name == "src" || name == "dst" || name == "lhs" || name == "a" ||
         name == "b" || name == "pred";
}

std::string FormatImm(const Instruction& inst, uint32_t bits) {
  int dt = FieldIndex(inst.opcode, "dtype");
  bool is_float = dt >= 0 && IsFloat(static_cast<DType>(inst.fields[dt]));
  if (!is_float) return fmt::format("{}", static_cast<int32_t>(bits));
  float f = std::bit_cast<float>(bits);
  if (std::isnan(f)) return fmt::format("{:#x}", bits);  // keeps sign and payload
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", f);  // shortest text that reads back to the same float
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string FormatField(const Instruction& inst, const FieldSpec& spec, uint64_t raw) {
  switch (spec.kind) {
    case FieldKind::kU:
      return IsAddressField(spec.name) ? fmt::format("{:#x}", raw) : fmt::format("{}", raw);
    case FieldKind::kS:
      return fmt::format("{}", static_cast<int64_t>(raw));
    case FieldKind::kBool:
      return raw ? "1" : "0";
    case FieldKind::kImm:
      return FormatImm(inst, static_cast<uint32_t>(raw));
    default:
      return std::string(EnumValueName(spec.kind, raw));
  }
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string FormatInstruction(const Instruction& inst) {
  const OpcodeInfo& info = Info(inst.opcode);
  std::string out(info.mnemonic);
  for (size_t i = 0; i < info.fields.size(); ++i) {
    out += i == 0 ? " " : ", ";
    out += info.fields[i].name;
    out += "=";
    out += FormatField(inst, info.fields[i], inst.fields[i]);
  }
  return out;
}

std::string Disassemble(const Program& p) {
  std::string out =
      fmt::format("# tpusim program, version {}, {} core(s)\n", p.version, p.num_cores());
  if (!p.source_file.empty()) out += fmt::format(".source {}\n", Quote(p.source_file));
  for (size_t i = 0; i < p.replica_groups.size(); ++i) {
    out += fmt::format(".replica_groups {}", i);
    const auto& groups = p.replica_groups[i].groups;
    for (size_t g = 0; g < groups.size(); ++g) {
      out += fmt::format("{}{{{}}}", g == 0 ? " " : ", ", fmt::join(groups[g], ","));
    }
    out += "\n";
  }
  for (size_t i = 0; i < p.permutations.size(); ++i) {
    out += fmt::format(".permutation {}", i);
    const auto& pairs = p.permutations[i].pairs;
    for (size_t j = 0; j < pairs.size(); ++j) {
      out += fmt::format("{}{{{},{}}}", j == 0 ? " " : ", ", pairs[j].first, pairs[j].second);
    }
    out += "\n";
  }
  for (size_t i = 0; i < p.hlo_names.size(); ++i) {
    out += fmt::format(".hlo_name {} {}\n", i, Quote(p.hlo_names[i]));
  }
  for (const DataSegment& d : p.data) {
    out += fmt::format(".data {} core={}, addr={:#x}, hex ", Name(d.space), d.core, d.address);
    for (unsigned char c : d.bytes) out += fmt::format("{:02x}", c);
    out += "\n";
  }
  // Labels by (core, index), in declaration order.
  std::multimap<std::pair<int, int>, std::string> labels;
  for (const Symbol& s : p.symbols) labels.emplace(std::make_pair(s.core, s.index), s.name);
  // The assembler's `.hlo` tag persists across `.core` switches, so the current tag is tracked
  // across cores too (found by fuzzing: resetting it per core re-tagged untagged instructions).
  int32_t tag = kNoHloTag;
  for (int c = 0; c < p.num_cores(); ++c) {
    const CoreProgram& core = p.cores[c];
    out += fmt::format(".core {}\n", c);
    int depth = 0;
    for (size_t i = 0; i <= core.instructions.size(); ++i) {
      auto [lo, hi] = labels.equal_range({c, static_cast<int>(i)});
      for (auto it = lo; it != hi; ++it) out += it->second + ":\n";
      if (i == core.instructions.size()) break;
      int32_t t = core.hlo_tag(i);
      if (t != tag) {
        out += t == kNoHloTag ? std::string("  .hlo none\n") : fmt::format("  .hlo {}\n", t);
        tag = t;
      }
      const Instruction& inst = core.instructions[i];
      if (inst.opcode == Opcode::kCtrlEndLoop && depth > 0) --depth;
      out += std::string(2 + 2 * depth, ' ') + FormatInstruction(inst) + "\n";
      if (inst.opcode == Opcode::kCtrlLoop) ++depth;
    }
  }
  return out;
}

}  // namespace tpusim::isa
