// `tpusim cpu MODEL.hlo [--replicas N] [--partitions P] [--inputs DIR] [--outputs DIR] [--repeat R]
//  [--seed S] [--threads T] [--max-bytes B] [--json]`: evaluates the module on the host CPU with
//  the
// reference evaluator (hlo/eval), reports wall seconds per run (median of R timed runs after
// one warm-up, with min/max), the thread count, and each output's shape, dtype and checksum;
// optionally reads inputs from / writes outputs to .npy files (hlo/eval/cpu_run.h describes
// the layout).
#include <iostream>
#include <memory>

#include "driver/host_cpu.h"
#include "driver/limits.h"
#include "hlo/eval/cpu_run.h"
#include "hlo/load.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterCpuCommand(CLI::App& app) {
  struct Args {
    std::string model;
    double max_seconds = 0;
    hlo::CpuRunOptions options;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("cpu", "evaluate an HLO module on the host CPU and time it");
  cmd->add_option("model", args->model, "HLO text file")->required();
  cmd->add_option("--replicas", args->options.replicas,
                  "replicas to evaluate in lockstep, each running every partition (default: the "
                  "devices `tpusim run` counts / partitions)")
      ->check(DeviceCount());
  cmd->add_option("--partitions", args->options.partitions,
                  "partitions per replica (default: the module's num_partitions)")
      ->check(DeviceCount());
  cmd->add_option(
      "--inputs", args->options.inputs_dir,
      "folder with param_<i>.npy (or replica_<d>/param_<i>.npy); default: random from --seed");
  cmd->add_option(
      "--outputs", args->options.outputs_dir,
      "folder to write output_<k>.npy (replica_<d>/output_<k>.npy for several devices)");
  cmd->add_option("--repeat", args->options.repeat, "timed runs after one warm-up (default 3)")
      ->check(IntegerOf<int>(1));
  cmd->add_option("--seed", args->options.seed,
                  "seed for random inputs and rng ops (elided constants are fixed: seed 0)");
  cmd->add_option("--threads", args->options.threads, "worker threads (default: all cores)")
      ->check(IntegerOf<int>(0));
  cmd->add_option("--max-bytes", args->options.max_bytes,
                  "largest single value in bytes (default 4 GiB)")
      ->check(IntegerOf<int64_t>(1));
  cmd->add_flag("--json", args->json, "print the result as JSON");
  AddLimitOptions(cmd, &args->max_seconds);
  cmd->callback([args] {
    driver::SetPhase("parse and verify");
    const hlo::LoadedHloModule loaded = LoadModuleOrFail(args->model);
    driver::SetPhase("evaluate");
    hlo::CpuRunResult r = OrFail(driver::RunOnHostCpu(*loaded.module, args->options));
    if (args->json) {
      std::cout << r.ToJson().Dump() << "\n";
    } else {
      std::cout << r.ToText();
    }
  });
}

}  // namespace tpusim::cli
