// The compiler's pass pipeline: THE one place where the pass order is written (pipeline.cc).
#pragma once

#include <string>

#include "compiler/pass/hlo_pass_pipeline.h"
#include "config/chip_config.h"

namespace tpusim::compiler {

/// The HLO-to-HLO passes that run before lowering, in order, for `config`.
HloPassPipeline BuildHloPipeline(const config::ChipConfig& config);

}  // namespace tpusim::compiler
