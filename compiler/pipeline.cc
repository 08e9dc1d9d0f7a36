#include "compiler/pipeline.h"

#include "compiler/lower/lowerer.h"
#include "compiler/passes/all_reduce_combiner.h"
#include "compiler/passes/annotation_custom_calls.h"
#include "compiler/passes/async_to_sync.h"
#include "compiler/passes/batch_norm_expander.h"
#include "compiler/passes/bitcast_convert_expander.h"
#include "compiler/passes/batched_gather_scatter_normalizer.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/passes/canonicalize.h"
#include "compiler/passes/cholesky_expander.h"
#include "compiler/passes/collective_expander.h"
#include "compiler/passes/complex_expander.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/convolution_lowering.h"
#include "compiler/passes/convolution_negative_padding.h"
#include "compiler/passes/custom_call_expander.h"
#include "compiler/passes/eigh_expander.h"
#include "compiler/passes/float8_dot_upcast.h"
#include "compiler/passes/integer_dot_expander.h"
#include "compiler/passes/lapack_custom_calls.h"
#include "compiler/passes/map_expander.h"
#include "compiler/passes/output_fusion_scheduling.h"
#include "compiler/passes/pad_negative_padding.h"
#include "compiler/passes/partial_reduce_expander.h"
#include "compiler/passes/pred_reduce_expander.h"
#include "compiler/passes/ragged_dot_rewriter.h"
#include "compiler/passes/ragged_all_to_all_decomposer.h"
#include "compiler/passes/reduce_precision_expander.h"
#include "compiler/passes/reduce_window_lowering.h"
#include "compiler/passes/rng_bit_generator_expander.h"
#include "compiler/passes/rng_expander.h"
#include "compiler/passes/select_and_scatter_expander.h"
#include "compiler/passes/sort_expander.h"
#include "compiler/passes/triangular_solve_expander.h"
#include "compiler/passes/sharding_remover.h"
#include "compiler/passes/spmd_partitioner.h"
#include "compiler/passes/dynamic_padder.h"
#include "compiler/passes/stochastic_convert_decomposer.h"
#include "compiler/passes/data_formatting.h"
#include "compiler/passes/topk_expander.h"
#include "compiler/passes/trailing_window_dims.h"
#include "compiler/passes/unique_scatter_expander.h"
#include "compiler/passes/variadic_reduce_expander.h"
#include "compiler/passes/variadic_scatter_splitter.h"
#include "compiler/passes/while_lowering.h"
#include "compiler/passes/zero_sized_elimination.h"
#include "hlo/verifier.h"

namespace tpusim::compiler {

// Order (DESIGN.md §1): data-formatting -> async-to-sync -> call-inliner -> eigh-expander ->
// rng-expander ->
// rng-bit-generator-expander -> while-lowering -> constant-folding -> rng-state-assignment ->
// dynamic-padder -> batch-norm-expander -> lapack-custom-calls -> cholesky-expander ->
// triangular-solve-expander -> custom-call-expander -> sharding-remover -> spmd-partitioner ->
// ragged-all-to-all-decomposer -> collective-expander -> complex-expander ->
// ragged-dot-rewriter -> integer-dot-expander -> float8-dot-upcast ->
// pad-negative-padding -> convolution-negative-padding -> lower-convolution ->
// lower-reduce-window ->
// select-and-scatter-expander -> map-expander -> reduce-precision-expander ->
// stochastic-convert-decomposer -> topk-expander -> variadic-reduce-expander ->
// batched-gather-scatter-normalizer -> trailing-window-dims -> variadic-scatter-splitter ->
// unique-scatter-expander -> pred-reduce-expander -> sort-expander -> canonicalize ->
// zero-sized-hlo-elimination ->
// all-reduce-combiner -> output-fusion-scheduling -> [fuse-elementwise ->
// tile-for-mxu] -> plan-memory -> schedule. The bracketed passes do not exist yet; tiling, memory
// planning and emission happen in compiler/lower/ (lower_module.cc), which runs after this
// pipeline. spmd-partitioner runs before canonicalize (as XLA partitions before its
// simplifications): the `sharding=` annotations describe the user's shapes, and canonicalize
// changes the rank of batched dots (which would leave a rank-4 sharding on a rank-3 dot).
HloPassPipeline BuildHloPipeline(const config::ChipConfig& config,
                                 int64_t max_unrolled_instructions,
                                 const std::map<std::string, int64_t>& trip_counts,
                                 const std::map<std::string, int64_t>& branch_trip_counts) {
  HloPassPipeline pipeline("hlo");
  pipeline.set_verifier([](const hlo::HloModule& m) { return hlo::VerifyModule(m); });
  pipeline.AddPass<DataFormatting>();  // first: fused computations are still apart
  pipeline.AddPass<AsyncToSync>();       // before call-inliner: async-start/done become calls
  pipeline.AddPass<CallInliner>();
  pipeline.AddPass<EighExpander>();  // before while-lowering: its sweeps are a while
  pipeline.AddPass<RngExpander>();  // before while-lowering: each unrolled trip draws its state
  pipeline.AddPass<RngBitGeneratorExpander>();  // rng_three_fry / rng_philox as XLA expands them
  pipeline.AddPass<WhileLowering>(max_unrolled_instructions, trip_counts, branch_trip_counts);
  // After unrolling: copies' induction variables fold too. A broadcast the VPU reads in place is
  // left alone (as a constant it would be loaded element by element).
  pipeline.AddPass<ConstantFolding>(IsVirtualBroadcast);
  pipeline.AddPass<RngStateAssignment>();   // after unrolling, in the evaluator's order
  pipeline.AddPass<DynamicPadder>();  // after unrolling and constant-folding: sizes are constants
  pipeline.AddPass<BatchNormExpander>();
  pipeline.AddPass<LapackCustomCalls>();  // JAX's CPU LAPACK calls -> cholesky, triangular-solve
  pipeline.AddPass<CholeskyExpander>();  // before triangular-solve-expander, as in XLA
  pipeline.AddPass<TriangularSolveExpander>();
  pipeline.AddPass<CustomCallExpander>();
  pipeline.AddPass<AnnotationCustomCalls>();  // LayoutConstraint, MoveToHost, ...
  pipeline.AddPass<ShardingRemover>();     // Sharding stays only for the partitioner
  pipeline.AddPass<SpmdPartitioner>();     // a no-op unless num_partitions > 1
  pipeline.AddPass<RaggedAllToAllDecomposer>();  // before collective-expander: its all-to-alls
  pipeline.AddPass<CollectiveExpander>();  // after the partitioner, which inserts collectives
  pipeline.AddPass<ComplexExpander>();  // after the partitioner: shardings name c64 dimensions
  pipeline.AddPass<RaggedDotRewriter>();   // a dense dot, before the dot type passes
  pipeline.AddPass<IntegerDotExpander>();  // before float8-dot-upcast: s32 dots as s8 digits
  pipeline.AddPass<Float8DotUpcast>();  // before lower-convolution: the MXU takes bf16
  pipeline.AddPass<PadNegativePadding>();
  pipeline.AddPass<ConvolutionNegativePadding>();  // before lower-convolution: slices, not pads
  pipeline.AddPass<ConvolutionLowering>(config.core.mxu.rows);
  pipeline.AddPass<ReduceWindowLowering>();
  pipeline.AddPass<SelectAndScatterExpander>();
  pipeline.AddPass<MapExpander>();
  pipeline.AddPass<ReducePrecisionExpander>();
  pipeline.AddPass<BitcastConvertExpander>();  // bitcast-convert across widths: integer ops
  pipeline.AddPass<StochasticConvertDecomposer>();
  pipeline.AddPass<TopKExpander>();  // before sort-expander: it becomes a sort
  pipeline.AddPass<PartialReduceExpander>();  // before variadic-reduce-expander: a reduce
  pipeline.AddPass<VariadicReduceExpander>();
  pipeline.AddPass<BatchedGatherScatterNormalizer>();  // after the partitioner: index components
  pipeline.AddPass<TrailingWindowDims>();
  pipeline.AddPass<VariadicScatterSplitter>();
  pipeline.AddPass<UniqueScatterExpander>();  // after the splitter: what it could not split
  pipeline.AddPass<PredReduceExpander>();
  pipeline.AddPass<SortExpander>();
  pipeline.AddPass<Canonicalize>();
  // After the expanders and canonicalize, which make empty arrays of empty ones (the transposes
  // of a ragged-dot of 0 groups).
  pipeline.AddPass<ZeroSizedHloElimination>();
  pipeline.AddPass<AllReduceCombiner>();       // after the partitioner, which inserts all-reduces
  pipeline.AddPass<OutputFusionScheduling>();  // last: dots are canonical, convolutions lowered
  return pipeline;
}

}  // namespace tpusim::compiler
