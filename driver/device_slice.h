// The devices a module runs on and the chip or slice that holds them: one rule for `tpusim run`
// (driver/run_module.h), `tpusim compile`, `tpusim compare` (driver/compare.h) and the Python
// package; compiler::Compile counts its devices with the same hlo::DevicesToRun. The slice for an
// assembled program's cores (`tpusim exec`) is here too.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "config/chip_config.h"
#include "hlo/module.h"
#include "isa/program.h"

namespace tpusim::driver {

/// What a run of a module configures.
struct DeviceSlice {
  int64_t devices = 1;        // replicas x partitions, one TensorCore each (hlo::DevicesToRun)
  int64_t partitions = 1;     // the module's num_partitions (>= 1)
  config::ChipConfig config;  // the chip or slice simulated (config::SliceForCores)
  std::string note;           // config::SliceForCores's note: non-empty when the slice was derived
  /// Replicas of the module: each runs all `partitions` partitions on its own devices.
  int64_t replicas() const { return devices / partitions; }
};

/// The devices of `module` (hlo::DevicesToRun: `requested` = --replicas when > 0, else the
/// module's replica_count x num_partitions, its Shardy mesh, or the largest device id its
/// collectives name) and the chip or slice of `config` that holds them (config::SliceForCores: a
/// single-chip config grows into the smallest power-of-two slice of its generation).
/// Errors: hlo::DevicesToRun's (--replicas not a multiple of the partitions); config::SliceForCores's
/// (an explicit slice too small, a chip without ICI, more than kMaxSliceChips), located at the
/// instruction naming the largest device id when that id, not --replicas or the module's header,
/// set the count (hlo::LocateDeviceCountError: "file:line:col: error: '%ar' (all-reduce) names
/// device D: ...").
StatusOr<DeviceSlice> SliceForModule(const hlo::HloModule& module, const config::ChipConfig& config,
                                     int64_t requested);

/// The chip or slice of `config` that holds a program's cores (`tpusim exec`; config::SliceForCores,
/// `*note` as it sets it). Errors: config::SliceForCores's, located at the first instruction of the
/// program's highest core when the program came from assembly text ("prog.tasm:L:1: error: the
/// program has N cores (code for core C starts here): ..."; e.g. the line after `.core 65535`).
StatusOr<config::ChipConfig> SliceForProgram(const isa::Program& program,
                                             const config::ChipConfig& config, std::string* note);

}  // namespace tpusim::driver
