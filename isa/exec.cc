#include "isa/exec.h"

#include <fmt/format.h>

#include "common/file_util.h"
#include "isa/assembler.h"
#include "isa/encoding.h"
#include "isa/numerics.h"
#include "isa/verifier.h"
#include "isa/work_units.h"

namespace tpusim::isa {

StatusOr<Program> LoadProgramFile(const std::string& path) {
  StatusOr<std::string> file = ReadFile(path);
  if (!file.ok()) return file.status();
  std::string_view bytes = *file;
  if (bytes.substr(0, 4) == "TPUS") return DecodeProgram(bytes, path);
  // Not a program file: it must be assembly text. Binary bytes mean a corrupt or foreign file.
  for (unsigned char c : bytes) {
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) {
      return InvalidArgument(
          fmt::format("{}: not a tpusim program (bad magic; expected \"TPUS\") and "
                      "not assembly text",
                      path));
    }
  }
  return Assemble(bytes, path);
}

StatusOr<DumpSpec> ParseDumpSpec(std::string_view text) {
  auto bad = [&](std::string why) {
    return InvalidArgument(
        fmt::format("--dump '{}': {} (expected SPACE[.CORE]:ADDR:COUNT:DTYPE, "
                    "e.g. vmem:0x100:8:f32 or hbm.1:0:4:s32)",
                    text, why));
  };
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() != 4) return bad("expected 4 parts separated by ':'");
  DumpSpec spec;
  std::string_view space = parts[0];
  if (size_t dot = space.find('.'); dot != std::string_view::npos) {
    auto core = ParseUnsigned(space.substr(dot + 1));
    if (!core || *core > 65535) return bad("bad core number");
    spec.core = static_cast<int>(*core);
    space = space.substr(0, dot);
  }
  auto s = ParseEnumValue(FieldKind::kMemSpace, space);
  if (!s || static_cast<MemSpace>(*s) == MemSpace::kAcc)
    return bad("space must be hbm, vmem, smem or host");
  spec.space = static_cast<MemSpace>(*s);
  auto addr = ParseUnsigned(parts[1]);
  if (!addr) return bad("bad address");
  spec.address = *addr;
  auto count = ParseUnsigned(parts[2]);
  if (!count || *count == 0 || *count > (uint64_t{1} << 24)) return bad("count must be 1..2^24");
  spec.count = *count;
  auto dt = ParseEnumValue(FieldKind::kDType, parts[3]);
  if (!dt) return bad("dtype must be bf16, f32, s8, s32 or pred");
  spec.dtype = static_cast<DType>(*dt);
  return spec;
}

StatusOr<std::string> FormatDump(Interpreter& interp, const DumpSpec& spec) {
  const MemorySizes& sizes = interp.sizes();
  if (spec.core < 0 || spec.core >= sizes.cores) {
    return InvalidArgument(fmt::format("--dump: core {} does not exist", spec.core));
  }
  SparseMemory& mem = interp.memory(spec.space, spec.core);
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(spec.dtype));
  std::string bytes(spec.count * eb, '\0');
  Status st = mem.Read(spec.address, bytes.data(), bytes.size());
  if (!st.ok()) return InvalidArgument("--dump: " + st.message());
  std::string out = fmt::format("{}.{}[{:#x}] {} x {}:", Name(spec.space), spec.core, spec.address,
                                Name(spec.dtype), spec.count);
  for (uint64_t i = 0; i < spec.count; ++i) {
    const char* p = bytes.data() + i * eb;
    out += i ? ", " : " ";
    if (IsFloat(spec.dtype)) {
      out += fmt::format("{}", LoadFloat(p, spec.dtype));
    } else {
      out += fmt::format("{}", LoadInt(p, spec.dtype));
    }
  }
  return out;
}

StatusOr<std::unique_ptr<Interpreter>> RunProgram(const Program& program,
                                                  const config::ChipConfig& chip,
                                                  const InterpreterOptions& options) {
  MemorySizes sizes = MemorySizes::FromChipConfig(chip);
  TPUSIM_RETURN_IF_ERROR(Verify(program, sizes));
  // A verified program that surely does more work than the budget is refused before it runs,
  // with the budget it needs (its loops' counts are immediates: MinimumWorkUnits).
  if (const uint64_t least = MinimumWorkUnits(program, sizes); least > options.max_instructions) {
    return ResourceExhausted(fmt::format(
        "{}: the program does at least {} units of work (every instruction {} plus its element "
        "operations, over all cores and loop trips), more than the instruction budget of {}: "
        "run it with --max-instructions {} or more (tpusim exec)",
        program.source_file.empty() ? "<program>" : program.source_file, least,
        kInstructionWorkUnits, options.max_instructions, least));
  }
  auto interp = std::make_unique<Interpreter>(sizes, options);
  TPUSIM_RETURN_IF_ERROR(interp->Load(program));
  TPUSIM_RETURN_IF_ERROR(interp->Run());
  return interp;
}

StatusOr<std::string> ExecReport(Interpreter& interp, const Program& program,
                                 const config::ChipConfig& chip,
                                 const std::vector<DumpSpec>& dumps) {
  std::string out = fmt::format(
      "executed {} instructions on {} core(s) of {} (interpreter, no timing)\n", interp.executed(),
      program.num_cores(), chip.name.empty() ? "the chip" : chip.name);
  for (const DumpSpec& d : dumps) {
    if (d.space != MemSpace::kHost && d.core >= program.num_cores()) {
      return InvalidArgument(fmt::format("--dump: core {} is not a core of the program ({} cores)",
                                         d.core, program.num_cores()));
    }
    TPUSIM_ASSIGN_OR_RETURN(std::string line, FormatDump(interp, d));
    out += line + "\n";
  }
  return out;
}

StatusOr<std::string> ExecProgram(const Program& program, const config::ChipConfig& chip,
                                  const std::vector<DumpSpec>& dumps,
                                  const InterpreterOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<Interpreter> interp, RunProgram(program, chip, options));
  return ExecReport(*interp, program, chip, dumps);
}

}  // namespace tpusim::isa
