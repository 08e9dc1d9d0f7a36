// What bounds each HLO op's time on the simulated TPU (the per-op column of `tpusim compare`).
//
// Each of an op's instructions is put in a class — MXU (mxu.load_weights, mxu.matmul), VPU (vpu.*,
// xlu.*, mxu.pop), HBM (dma.hbm_to_vmem, dma.vmem_to_hbm), ICI (dma.vmem_to_remote, ici.*), host
// (dma.host_to_hbm, dma.hbm_to_host), sync (sync.*, scalar): its resource (isa::ResourceOf, the
// classes behind the stall categories of docs/report-schema.md), the scalar unit's time counted as
// sync. The op's bound is the class whose instructions were charged the most of its retirement
// cycles (in-order retirement, sim_result.h; summed over cores), with that share; ties go to the
// first of MXU, HBM, VPU, ICI, host. Sync cycles count only when nothing else was charged.
#pragma once

#include <vector>

#include "isa/program.h"
#include "sim/sim_result.h"

namespace tpusim::sim {

enum class OpBound { kNone, kMxu, kVpu, kHbm, kIci, kHost, kSync };
/// "MXU", "VPU", "HBM", "ICI", "host", "sync"; "-" for kNone.
const char* OpBoundName(OpBound b);

struct OpBoundShare {
  OpBound bound = OpBound::kNone;  // kNone: no cycles were charged to the op
  double fraction = 0;             // of the op's retirement cycles charged to the bound's class
};

/// One entry per HLO tag (Program::hlo_names indexing) of `program`, as run in `result`.
std::vector<OpBoundShare> OpBounds(const SimResult& result, const isa::Program& program);

}  // namespace tpusim::sim
