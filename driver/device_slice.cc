#include "driver/device_slice.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/diagnostic.h"
#include "config/slice.h"
#include "hlo/verify_devices.h"

namespace tpusim::driver {

StatusOr<DeviceSlice> SliceForModule(const hlo::HloModule& module, const config::ChipConfig& config,
                                     int64_t requested) {
  DeviceSlice s;
  TPUSIM_ASSIGN_OR_RETURN(s.devices, hlo::DevicesToRun(module, requested));
  s.partitions = std::max<int64_t>(1, module.num_partitions());
  StatusOr<config::ChipConfig> slice = config::SliceForCores(config, s.devices, &s.note);
  if (!slice.ok()) {
    return requested > 0 ? slice.status() : hlo::LocateDeviceCountError(module, slice.status());
  }
  s.config = std::move(slice).value();
  return s;
}

StatusOr<config::ChipConfig> SliceForProgram(const isa::Program& program,
                                             const config::ChipConfig& config, std::string* note) {
  StatusOr<config::ChipConfig> slice = config::SliceForCores(config, program.num_cores(), note);
  if (slice.ok() || program.source_file.empty()) return slice;
  for (int c = program.num_cores() - 1; c >= 0; --c) {
    const isa::CoreProgram& core = program.cores[static_cast<size_t>(c)];
    if (core.instructions.empty() || core.source_line(0) <= 0) continue;
    return LocatedError(program.source_file, "", SourceLocation{core.source_line(0), 1},
                        fmt::format("the program has {} cores (code for core {} starts here): {}",
                                    program.num_cores(), c, slice.status().message()));
  }
  return slice;
}

}  // namespace tpusim::driver
