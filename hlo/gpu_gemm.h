// A GEMM custom-call of XLA's GPU backend read as the dot it is. After GPU compilation XLA writes a
// plain dot as `custom-call(lhs, rhs), custom_call_target="__cublas$gemm"` (also
// "__cublas$lt$matmul", and "__hipblas$gemm" / "__hipblaslt$matmul" on ROCm) whose backend_config
// (GemmBackendConfig, xla/service/gpu/backend_configs.proto; at the top level or under
// "gemm_backend_config") carries the dot's dimension numbers and precision. The parser reads such
// a call as that dot, so the evaluator and the compiler see one instruction with one meaning, and
// a module dumped after GPU compilation runs on a TPU as its dots would.
//
// Contract: only the plain form becomes a dot — two operands, an array result, alpha_real 1 (or
// absent), alpha_imag 0, beta 0 (or absent) and epilogue DEFAULT (or absent). Scaled, biased
// (beta != 0 with a third operand) and epilogue-fused calls, and those returning a (result,
// workspace) tuple, stay custom-calls: the lowering then names them as GPU calls with the
// remedies (compiler/lower/lower_module.cc).
#pragma once

#include <memory>

#include "hlo/instruction.h"

namespace tpusim::hlo {

/// True for the GEMM targets above.
bool IsGpuGemmTarget(std::string_view target);

/// `call` (a custom-call with its operands not yet attached, as the parser holds it, and
/// `operand_count` operands pending) as a dot of the same name, shape, location, metadata and
/// frontend attributes, or nullptr when it is not the plain form of the contract above.
std::unique_ptr<HloInstruction> GpuGemmAsDot(const HloInstruction& call, size_t operand_count);

}  // namespace tpusim::hlo
