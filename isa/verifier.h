// Verifier: static checks of a Program against a chip's sizes, before anything runs it. Each error
// names the core, the instruction index, its source line when known, the mnemonic and the field:
//   "core 0 instruction 4 (mm.tasm:9) mxu.matmul: field 'k': 300 exceeds the array's 128 rows"
// Checks: program cores <= system cores; MXU index, K/N within the array, accumulator rows, dtype
// and precision-part combinations; every VMEM/HBM/SMEM/host byte range an instruction touches lies
// inside the configured memory; addresses aligned to their element size; VPU function/dtype
// combinations; counts >= 1; loops balanced and at most kMaxLoopDepth deep; every waited-on flag is
// signalled somewhere (a sync.signal, a DMA of that core, or a remote DMA aimed at it); replica
// groups and permutations well formed; the cores of each group run the same sequence of collectives
// (opcode and every field but the addresses). The interpreter re-checks dynamically what cannot be
// seen statically.
#pragma once

#include "common/status.h"
#include "isa/memory_sizes.h"
#include "isa/program.h"

namespace tpusim::isa {

/// OK, or InvalidArgument listing up to `max_errors` problems (one per line, in program order).
Status Verify(const Program& program, const MemorySizes& sizes, int max_errors = 20);

}  // namespace tpusim::isa
