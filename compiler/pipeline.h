// The compiler's pass pipeline: THE one place where the pass order is written (pipeline.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/pass/hlo_pass_pipeline.h"
#include "config/chip_config.h"

namespace tpusim::compiler {

/// The HLO-to-HLO passes that run before lowering, in order, for `config`;
/// `max_unrolled_instructions` is while-lowering's unrolling budget (CompileOptions).
/// `trip_counts` are the user's counts for data-dependent whiles (CompileOptions::trip_counts),
/// `branch_trip_counts` the whiles to run as branch loops (CompileOptions::branch_trip_counts).
HloPassPipeline BuildHloPipeline(const config::ChipConfig& config,
                                 int64_t max_unrolled_instructions = 100000,
                                 const std::map<std::string, int64_t>& trip_counts = {},
                                 const std::map<std::string, int64_t>& branch_trip_counts = {});

}  // namespace tpusim::compiler
