// The cost a Pallas TPU kernel declares. `jax.experimental.pallas.pallas_call` lowers a kernel for
// the TPU to `custom-call(...), custom_call_target="tpu_custom_call"` whose backend_config holds the
// kernel as serialized Mosaic MLIR and, when the caller passed `cost_estimate=pl.CostEstimate(...)`,
// the cost XLA's TPU backend schedules and cost-models it with:
//
//   backend_config={"custom_call_config": {"body": "<base64 Mosaic bytecode>",
//                   "cost_estimate": {"flops": F, "transcendentals": T, "bytes_accessed": B,
//                                     "remote_bytes_transferred": R}, ...}}
//
// (JAX's jax/_src/tpu_custom_call.py writes it; XLA reads the same fields for the kernel's cost).
// tpusim cannot run the Mosaic body; it times such a kernel from these figures
// (compiler/lower/lower_kernel_estimate.cc) and counts them in the module's cost analysis.
#pragma once

#include <cstdint>
#include <optional>

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

/// The custom-call target of a Pallas (Mosaic) TPU kernel.
inline constexpr char kMosaicKernelTarget[] = "tpu_custom_call";

/// A kernel's declared cost: FLOP, transcendental operations, bytes read and written in HBM, and
/// bytes sent to other chips (ICI).
struct KernelCostEstimate {
  int64_t flops = 0;
  int64_t transcendentals = 0;
  int64_t bytes_accessed = 0;
  int64_t remote_bytes = 0;
};

/// Whether `inst` is a custom-call of target "tpu_custom_call".
bool IsMosaicKernel(const HloInstruction& inst);

/// The least any implementation of `inst` does: its operands read and its results written once
/// (bytes_accessed = their bytes, ShapeUtil::ByteSizeOf), no FLOP. What tpusim times a kernel
/// that declares no cost_estimate by — a lower bound, and the report says so.
KernelCostEstimate LeastKernelCost(const HloInstruction& inst);

/// The cost_estimate of a Mosaic kernel's backend_config, nullopt when it declares none (a
/// pallas_call without cost_estimate, or a backend_config without custom_call_config).
/// InvalidArgument when the backend_config is not strict JSON (the parser's line and column; NaN,
/// 1e400, invalid UTF-8), names a key twice in one object, is not an object, its
/// custom_call_config or cost_estimate is not an object, or a figure of cost_estimate is missing,
/// not an integer, negative or past 2^63 - 1 (the message names the field).
StatusOr<std::optional<KernelCostEstimate>> ReadKernelCostEstimate(const HloInstruction& inst);

}  // namespace tpusim::hlo
