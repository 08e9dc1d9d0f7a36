#include "tests/fuzz/fuzz_entry_points.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "config/config_loader.h"
#include "config/derived.h"
#include "hlo/inspect.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/structural_equal.h"
#include "hlo/verifier.h"
#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "isa/encoding.h"
#include "isa/memory_sizes.h"
#include "isa/verifier.h"
#include "tests/fuzz/fuzz_pipeline.h"

namespace tpusim::fuzz {
namespace {

// The `tiny` chip's sizes, loaded once (configs/tiny.yaml through the source tree's configs/).
const isa::MemorySizes& TinySizes() {
  static const isa::MemorySizes sizes = [] {
    StatusOr<config::ChipConfig> chip = config::LoadChipConfig("tiny");
    TPUSIM_CHECK(chip.ok()) << "fuzz: cannot load configs/tiny.yaml: " << chip.status().message();
    return isa::MemorySizes::FromChipConfig(*chip);
  }();
  return sizes;
}

// Labels in program order (core, then instruction index; labels at one position keep their
// order). A listing prints them core by core, so their order in Program::symbols — which is not
// meaningful — may change (found by fuzz_asm: a label of core 4 defined before one of core 2).
std::vector<isa::Symbol> ByPosition(std::vector<isa::Symbol> symbols) {
  std::stable_sort(symbols.begin(), symbols.end(), [](const isa::Symbol& a, const isa::Symbol& b) {
    return std::make_pair(a.core, a.index) < std::make_pair(b.core, b.index);
  });
  return symbols;
}

}  // namespace

std::string_view TargetName(Target target) {
  switch (target) {
    case Target::kHlo:
      return "hlo";
    case Target::kAsm:
      return "asm";
    case Target::kDecode:
      return "decode";
    case Target::kConfig:
      return "config";
    case Target::kPipeline:
      return "pipeline";
    case Target::kOutputPaths:
      return "outputs";
  }
  return "?";
}

Status FuzzHlo(std::string_view text) {
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text, "fuzz.hlo");
  if (!module.ok()) return module.status();
  Status verified = hlo::VerifyModule(**module, text);
  if (!verified.ok()) return verified;
  // What `tpusim inspect` computes from any verified module (FLOP and byte counts of huge shapes).
  const hlo::InspectSummary summary = hlo::SummarizeModule(**module);
  (void)hlo::InspectToText(summary);
  (void)hlo::InspectToJson(summary).Dump();
  // The printer's contract: its output parses back to an equal module.
  const std::string printed = hlo::PrintModule(**module);
  StatusOr<std::unique_ptr<hlo::HloModule>> again = hlo::ParseHloModule(printed, "printed.hlo");
  if (!again.ok()) {
    return Internal("printed module does not parse: " + again.status().message());
  }
  std::string difference;
  if (!hlo::ModulesEqual(**module, **again, &difference)) {
    return Internal("printed module parses to a different module: " + difference);
  }
  return OkStatus();
}

Status FuzzAsm(std::string_view text) {
  StatusOr<isa::Program> program = isa::Assemble(text, "fuzz.tasm");
  if (!program.ok()) return program.status();
  // Whatever the assembler accepts must encode, decode and disassemble back to the same program.
  StatusOr<isa::Program> decoded = isa::DecodeProgram(isa::EncodeProgram(*program), "fuzz.tbin");
  if (!decoded.ok())
    return Internal("assembled program does not decode: " + decoded.status().message());
  if (!(*decoded == *program)) return Internal("encode -> decode changed the program");
  StatusOr<isa::Program> reassembled = isa::Assemble(isa::Disassemble(*program), "fuzz.tasm");
  if (!reassembled.ok()) {
    return Internal("disassembly does not assemble: " + reassembled.status().message());
  }
  // The disassembler's contract: instructions, HLO tags, tables, data and symbols come back exactly
  // (source lines become the listing's own line numbers).
  bool same = reassembled->cores.size() == program->cores.size() &&
              reassembled->replica_groups == program->replica_groups &&
              reassembled->permutations == program->permutations &&
              reassembled->hlo_names == program->hlo_names && reassembled->data == program->data &&
              ByPosition(reassembled->symbols) == ByPosition(program->symbols);
  for (size_t c = 0; same && c < program->cores.size(); ++c) {
    const isa::CoreProgram& a = program->cores[c];
    const isa::CoreProgram& b = reassembled->cores[c];
    same = a.instructions == b.instructions;
    for (size_t i = 0; same && i < a.instructions.size(); ++i) same = a.hlo_tag(i) == b.hlo_tag(i);
  }
  if (!same) return Internal("disassemble -> assemble changed the program");
  return isa::Verify(*program, TinySizes());
}

Status FuzzDecode(std::string_view bytes) {
  StatusOr<isa::Program> program = isa::DecodeProgram(bytes, "fuzz.tbin");
  if (!program.ok()) return program.status();
  StatusOr<isa::Program> again = isa::DecodeProgram(isa::EncodeProgram(*program), "again.tbin");
  if (!again.ok())
    return Internal("re-encoded program does not decode: " + again.status().message());
  if (!(*again == *program)) return Internal("decode -> encode -> decode changed the program");
  return isa::Verify(*program, TinySizes());
}

Status FuzzConfig(std::string_view yaml) {
  StatusOr<config::ChipConfig> chip =
      config::LoadChipConfigFromString(std::string(yaml), "configs/fuzz.yaml");
  if (!chip.ok()) return chip.status();
  // Everything a command computes from an accepted config must be computable without UB.
  const config::DerivedFigures derived = config::Derive(*chip);
  (void)config::DerivedToText(*chip, derived);
  (void)config::DerivedToJson(*chip, derived).Dump();
  (void)isa::MemorySizes::FromChipConfig(*chip);
  return OkStatus();
}

Status RunFuzzTarget(Target target, std::string_view input) {
  switch (target) {
    case Target::kHlo:
      return FuzzHlo(input);
    case Target::kAsm:
      return FuzzAsm(input);
    case Target::kDecode:
      return FuzzDecode(input);
    case Target::kConfig:
      return FuzzConfig(input);
    case Target::kPipeline:
      return FuzzPipeline(input);
    case Target::kOutputPaths:
      return FuzzOutputPaths(input);
  }
  return Internal("unknown fuzz target");
}

}  // namespace tpusim::fuzz
