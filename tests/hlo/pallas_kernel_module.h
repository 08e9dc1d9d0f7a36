// An HLO module with one Pallas TPU kernel, shared by tests/hlo/kernel_cost_estimate_test.cc (the
// declaration read) and tests/driver/kernel_estimate_test.cc (the kernel timed).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace tpusim::testing {

// What JAX 0.10's pallas_call writes for the TPU platform (jax.jit(f).trace(x, y).lower(
// lowering_platforms=('tpu',))), with the Mosaic body cut short: tpusim never reads it.
inline std::string KernelModule(int64_t flops, int64_t transcendentals, int64_t bytes) {
  return fmt::format(R"(
HloModule jit_add
ENTRY main.1 {{
  x.1 = f32[1024,1024]{{1,0}} parameter(0)
  y.1 = f32[1024,1024]{{1,0}} parameter(1)
  ROOT pallas_call.1 = f32[1024,1024]{{1,0}} custom-call(x.1, y.1), custom_call_target="tpu_custom_call", operand_layout_constraints={{f32[1024,1024]{{1,0}}, f32[1024,1024]{{1,0}}}}, backend_config={{"custom_call_config": {{"body": "TUzvUgFNTElSMjMuMC4w", "cost_estimate": {{
"bytes_accessed":{},
"flops":{},
"remote_bytes_transferred":0,
"transcendentals":{}
}}, "serialization_format": 1, "needs_layout_passes": true}}}}
}}
)",
                     bytes, flops, transcendentals);
}

}  // namespace tpusim::testing
