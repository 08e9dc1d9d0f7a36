// Literals in the device storage format of compile.h (what a driver writes into HBM before a run
// and reads back after it): the literal's own bytes (every device type is stored at its own width,
// little-endian, as the evaluator's Literal holds it). One implementation for
// `tpusim run` (driver/run_module.cc) and the compiler's tests.
#pragma once

#include <string>

#include "common/status.h"
#include "hlo/eval/literal.h"
#include "hlo/shape.h"

namespace tpusim::compiler {

/// The bytes of array literal `lit` as the device stores them.
std::string DeviceBytes(const hlo::Literal& lit);

/// The literal of array shape `shape` stored as `bytes` on the device. Internal if the byte count
/// does not match the shape.
StatusOr<hlo::Literal> LiteralFromDevice(const hlo::Shape& shape, const std::string& bytes);

}  // namespace tpusim::compiler
