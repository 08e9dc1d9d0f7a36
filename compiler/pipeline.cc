#include "compiler/pipeline.h"

#include "compiler/hlo/verifier.h"
#include "compiler/passes/batch_norm_expander.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/passes/canonicalize.h"
#include "compiler/passes/convolution_lowering.h"
#include "compiler/passes/custom_call_expander.h"
#include "compiler/passes/spmd_partitioner.h"

namespace tpusim::compiler {

// Order (DESIGN.md §1): call-inliner -> batch-norm-expander -> custom-call-expander ->
// lower-convolution -> canonicalize -> [spmd-partition -> lower-convolution -> fuse-elementwise ->
// tile-for-mxu] -> plan-memory -> schedule. The bracketed passes do not exist yet; tiling, memory
// planning and emission happen in compiler/lower/ (lower_module.cc), which runs after this
// pipeline.
HloPassPipeline BuildHloPipeline(const config::ChipConfig& /*config*/) {
  HloPassPipeline pipeline("hlo");
  pipeline.set_verifier([](const hlo::HloModule& m) { return hlo::VerifyModule(m); });
  pipeline.AddPass<CallInliner>();
  pipeline.AddPass<BatchNormExpander>();
  pipeline.AddPass<CustomCallExpander>();
  pipeline.AddPass<ConvolutionLowering>();
  pipeline.AddPass<Canonicalize>();
  pipeline.AddPass<SpmdPartitioner>();  // a no-op unless num_partitions > 1
  return pipeline;
}

}  // namespace tpusim::compiler
