#include "driver/device_slice.h"

#include <algorithm>
#include <utility>

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

}  // namespace tpusim::driver
