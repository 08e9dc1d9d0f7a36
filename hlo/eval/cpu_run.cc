#include "hlo/eval/cpu_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "hlo/eval/kernels/parallel.h"
#include "hlo/eval/npy.h"
#include "hlo/load.h"
#include "hlo/parser.h"
#include "hlo/verify_devices.h"

namespace tpusim::hlo {
namespace {

StatusOr<std::vector<Literal>> LoadInputs(const HloModule& module, const CpuRunOptions& o,
                                          int64_t device) {
  if (o.inputs_dir.empty()) {
    return Evaluator::MakeRandomArguments(module, o.seed, device, o.max_bytes);
  }
  const HloComputation* entry = module.entry_computation();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    namespace fs = std::filesystem;
    fs::path per_device =
        fs::path(o.inputs_dir) / fmt::format("replica_{}", device) / fmt::format("param_{}.npy", i);
    fs::path shared = fs::path(o.inputs_dir) / fmt::format("param_{}.npy", i);
    std::error_code ec;  // an unreadable or overlong path reads as missing, never throws
    fs::path path = fs::exists(per_device, ec) ? per_device : shared;
    if (!fs::exists(path, ec)) {
      return NotFound(fmt::format("input for ENTRY parameter {} ('{}'): neither {} nor {} exists",
                                  i, entry->parameter_instruction(i)->name(), shared.string(),
                                  per_device.string()));
    }
    TPUSIM_ASSIGN_OR_RETURN(
        Literal l, ReadNpyAs(path.string(), entry->parameter_instruction(i)->shape(), o.max_bytes));
    args.push_back(std::move(l));
  }
  return args;
}

}  // namespace

StatusOr<CpuRunResult> RunModuleOnCpu(const HloModule& module, const CpuRunOptions& o) {
  if (module.entry_computation() == nullptr)
    return InvalidArgument("module has no entry computation");
  if (o.repeat < 1) return InvalidArgument(fmt::format("--repeat must be >= 1, got {}", o.repeat));
  if (o.threads < 0)
    return InvalidArgument(fmt::format("--threads must be >= 0, got {}", o.threads));
  CpuRunResult result;
  result.partitions = o.partitions > 0 ? o.partitions : module.num_partitions();
  if (o.replicas > 0) {
    result.replicas = o.replicas;
  } else {
    // The devices `tpusim run` counts (hlo::DevicesToRun: a JAX pmap dump says replica_count=1,
    // its collectives name the devices), one replica per set of partitions.
    TPUSIM_ASSIGN_OR_RETURN(const int64_t devices, DevicesToRun(module, 0));
    result.replicas = std::max<int64_t>(1, devices / std::max<int64_t>(1, result.partitions));
  }
  result.threads = o.threads > 0 ? o.threads : DefaultThreadCount();
  int64_t devices = 0;
  if (__builtin_mul_overflow(result.replicas, result.partitions, &devices) || devices > 4096) {
    Status too_many = InvalidArgument(
        fmt::format("{} x {} devices (replicas x partitions) is more than the 4096 the CPU "
                    "evaluator runs",
                    result.replicas, result.partitions));
    return o.replicas > 0 ? too_many : LocateDeviceCountError(module, too_many);
  }

  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < devices; ++d) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Literal> a, LoadInputs(module, o, d));
    args.push_back(std::move(a));
  }
  EvaluatorOptions eo;
  eo.seed = o.seed;
  eo.threads = result.threads;
  eo.max_bytes = o.max_bytes;
  // Per-instruction timing: per_run[i][run - 1] = instruction i's total seconds in that run.
  std::map<const HloInstruction*, size_t> index_of;
  std::vector<std::vector<double>> per_run;
  int current_run = 0;
  if (o.time_instructions) {
    result.run_entry_seconds.assign(static_cast<size_t>(o.repeat), 0.0);
    eo.on_instruction = [&](const HloInstruction& inst, double seconds) {
      auto [it, inserted] = index_of.try_emplace(&inst, result.instructions.size());
      if (inserted) {
        CpuInstructionTime t;
        t.name = inst.name();
        t.opcode = std::string(HloOpcodeString(inst.opcode()));
        t.computation = inst.parent() ? inst.parent()->name() : std::string();
        t.in_entry = inst.parent() == module.entry_computation();
        result.instructions.push_back(std::move(t));
        per_run.emplace_back(static_cast<size_t>(o.repeat), 0.0);
      }
      if (current_run == 0) return;  // warm-up
      per_run[it->second][static_cast<size_t>(current_run - 1)] += seconds;
      if (result.instructions[it->second].in_entry) {
        result.run_entry_seconds[static_cast<size_t>(current_run - 1)] += seconds;
      }
      if (current_run == 1) ++result.instructions[it->second].evaluations;
    };
  }
  Evaluator ev(eo);
  std::vector<Literal> outputs;
  for (int run = 0; run <= o.repeat; ++run) {  // run 0 is the warm-up
    current_run = run;
    auto t0 = std::chrono::steady_clock::now();
    TPUSIM_ASSIGN_OR_RETURN(
        outputs, ev.EvaluateReplicated(module, result.replicas, result.partitions, args));
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (run > 0) result.run_seconds.push_back(s);
  }
  std::vector<double> sorted = result.run_seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  result.median_seconds = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  result.min_seconds = sorted.front();
  result.max_seconds = sorted.back();
  for (size_t i = 0; i < result.instructions.size(); ++i) {
    std::vector<double>& v = per_run[i];
    std::sort(v.begin(), v.end());
    result.instructions[i].median_seconds =
        v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }

  for (int64_t d = 0; d < devices; ++d) {
    std::vector<const Literal*> leaves = outputs[static_cast<size_t>(d)].Leaves();
    for (size_t k = 0; k < leaves.size(); ++k) {
      CpuOutputInfo info;
      info.device = d;
      info.index = static_cast<int64_t>(k);
      info.shape = leaves[k]->shape().ToString(false);
      info.dtype = std::string(PrimitiveTypeName(leaves[k]->element_type()));
      info.checksum = leaves[k]->Checksum();
      if (!o.outputs_dir.empty()) {
        namespace fs = std::filesystem;
        fs::path dir = devices > 1 ? fs::path(o.outputs_dir) / fmt::format("replica_{}", d)
                                   : fs::path(o.outputs_dir);
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec)
          return InvalidArgument(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
        info.file = (dir / fmt::format("output_{}.npy", k)).string();
        TPUSIM_RETURN_IF_ERROR(WriteNpy(info.file, *leaves[k]));
      }
      result.outputs.push_back(std::move(info));
    }
  }
  return result;
}

StatusOr<CpuRunResult> RunOnCpu(const std::string& path, const CpuRunOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(LoadedHloModule loaded, LoadHloModule(path));
  return RunModuleOnCpu(*loaded.module, options);
}

Json CpuRunResult::ToJson() const {
  Json j = Json::MakeObject();
  j["seconds_per_run"] = median_seconds;
  j["min_seconds"] = min_seconds;
  j["max_seconds"] = max_seconds;
  Json runs = Json::MakeArray();
  for (double s : run_seconds) runs.push_back(s);
  j["runs"] = std::move(runs);
  j["threads"] = threads;
  j["replicas"] = replicas;
  j["partitions"] = partitions;
  Json outs = Json::MakeArray();
  for (const CpuOutputInfo& o : outputs) {
    Json e = Json::MakeObject();
    e["device"] = o.device;
    e["index"] = o.index;
    e["shape"] = o.shape;
    e["dtype"] = o.dtype;
    e["checksum"] = fmt::format("0x{:016x}", o.checksum);
    if (!o.file.empty()) e["file"] = o.file;
    outs.push_back(std::move(e));
  }
  j["outputs"] = std::move(outs);
  return j;
}

std::string CpuRunResult::ToText() const {
  std::string s = fmt::format("CPU evaluation: {} replica(s) x {} partition(s), {} thread(s)\n",
                              replicas, partitions, threads);
  s += fmt::format("  seconds per run: median {:.6f}, min {:.6f}, max {:.6f} over {} run(s)\n",
                   median_seconds, min_seconds, max_seconds, run_seconds.size());
  for (const CpuOutputInfo& o : outputs) {
    s += fmt::format("  device {} output {}: {} checksum 0x{:016x}{}\n", o.device, o.index, o.shape,
                     o.checksum, o.file.empty() ? "" : " -> " + o.file);
  }
  return s;
}

}  // namespace tpusim::hlo
