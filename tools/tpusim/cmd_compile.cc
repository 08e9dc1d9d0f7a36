// `tpusim compile MODEL.hlo --config C -o PROG.tasm [--replicas N] [--dump-after=PASS]
//  [--placements P.json] [--timing-only] [--unroll-budget N]`: compiles an HLO module to tpusim's
//  ISA and writes the
// assembly (isa::Disassemble, which `tpusim asm` assembles back). --dump-after prints the HLO text
// after that pass to stdout; --placements writes where every parameter and output leaf lives in
// HBM.
#include <iostream>
#include <memory>
#include <utility>

#include "common/file_util.h"
#include "common/json.h"
#include "compiler/compile.h"
#include "driver/device_slice.h"
#include "driver/limits.h"
#include "hlo/load.h"
#include "isa/disassembler.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {
namespace {

Json PlacementJson(const compiler::BufferPlacement& p) {
  Json j = Json::MakeObject();
  j["name"] = p.name;
  j["parameter_number"] = p.parameter_number;
  Json index = Json::MakeArray();
  for (int64_t i : p.tuple_index) index.push_back(i);
  j["tuple_index"] = std::move(index);
  j["core"] = static_cast<int64_t>(p.core);
  j["hbm_address"] = p.hbm_address;
  j["shape"] = p.shape.ToString(false);
  j["dtype"] = std::string(isa::Name(p.dtype));
  j["bytes"] = p.bytes;
  return j;
}

}  // namespace

void RegisterCompileCommand(CLI::App& app) {
  struct Args {
    std::string input;
    double max_seconds = 0;
    std::string output;
    ConfigOptions config;
    int64_t replicas = 0;
    std::string dump_after;
    std::string placements;
    bool timing_only = false;
    bool megacore = true;
    int64_t max_unrolled_instructions = 100000;
    std::vector<std::string> custom_call_costs;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("compile", "compile an HLO module to tpusim assembly (.tasm)");
  cmd->add_option("model", args->input, "HLO text file")->required();
  cmd->add_option("-o,--output", args->output,
                  "assembly file to write (default: MODEL with .tasm)");
  args->config.AddTo(cmd);
  cmd->add_option("--replicas", args->replicas,
                  "replicas (cores) to compile for (default: the "
                  "module's replica_count)")
      ->check(DeviceCount());
  cmd->add_option("--dump-after", args->dump_after,
                  "print the HLO module after this pass (fusion: the lowering's fusion decisions)");
  cmd->add_option("--custom-call-cost", args->custom_call_costs,
                  "TARGET=CYCLES: time an unknown custom-call target as CYCLES cycles of its core "
                  "(repeatable)");
  AddOnOffFlags(cmd, "megacore", &args->megacore,
                "split large dots of a single-device module over the chip's TensorCores when they "
                "share its HBM (TPU v4/v5p; the default)",
                "one TensorCore per device");
  cmd->add_option(
         "--unroll-budget", args->max_unrolled_instructions,
         "while loops are unrolled while the copies add at most N HLO instructions; longer "
         "loops run as ISA loops (ctrl.loop); 0: every loop an ISA loop")
      ->check(IntegerOf<int64_t>(0));
  cmd->add_option("--placements", args->placements,
                  "write the HBM placement of every parameter and output leaf as JSON");
  cmd->add_flag("--timing-only", args->timing_only,
                "do not materialize constant values (for modules too big to hold)");
  AddLimitOptions(cmd, &args->max_seconds);
  cmd->callback([args] {
    std::string out = args->output;
    if (out.empty()) {
      const size_t dot = args->input.rfind('.');
      const size_t slash = args->input.rfind('/');
      const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
      out = (has_ext ? args->input.substr(0, dot) : args->input) + ".tasm";
    }
    OutputSet outputs;  // written together after a complete compile, or not at all
    OrFail(outputs.Declare("-o", out));
    if (!args->placements.empty()) OrFail(outputs.Declare("--placements", args->placements));
    config::ChipConfig chip = args->config.Load();
    driver::SetPhase("parse and verify");
    std::unique_ptr<hlo::HloModule> module = LoadModuleOrFail(args->input).module;
    compiler::CompileOptions options;
    options.num_replicas = args->replicas;
    options.dump_after = args->dump_after;
    options.timing_only = args->timing_only;
    options.megacore = args->megacore;
    options.max_unrolled_instructions = args->max_unrolled_instructions;
    options.custom_call_cycles = OrFail(ParseCustomCallCosts(args->custom_call_costs));
    driver::DeviceSlice slice = OrFail(driver::SliceForModule(*module, chip, args->replicas));
    chip = std::move(slice.config);
    if (!slice.note.empty()) std::cerr << "tpusim: note: " << slice.note << "\n";
    driver::SetPhase("compile");
    compiler::CompiledModule compiled = OrFail(compiler::Compile(*module, chip, options));
    if (!args->dump_after.empty()) std::cout << compiled.dump;
    outputs.Set("-o", isa::Disassemble(compiled.program));
    if (!args->placements.empty()) {
      Json j = Json::MakeObject();
      Json params = Json::MakeArray(), outs = Json::MakeArray();
      for (const auto& p : compiled.parameters) params.push_back(PlacementJson(p));
      for (const auto& p : compiled.outputs) outs.push_back(PlacementJson(p));
      j["parameters"] = std::move(params);
      j["outputs"] = std::move(outs);
      j["hbm_bytes_used"] = compiled.hbm_bytes_used;
      j["peak_vmem_bytes"] = compiled.peak_vmem_bytes;
      outputs.Set("--placements", j.Dump());
    }
    OrFail(outputs.Commit());
    size_t total = 0;
    for (const auto& c : compiled.program.cores) total += c.instructions.size();
    std::cerr << "wrote " << out << ": " << compiled.program.num_cores() << " core(s), " << total
              << " instruction(s), " << compiled.hbm_bytes_used << " HBM bytes per core, peak VMEM "
              << compiled.peak_vmem_bytes << " bytes (passes: " << compiled.pass_names << ")\n";
  });
}

}  // namespace tpusim::cli
