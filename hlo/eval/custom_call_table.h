// The custom-call targets the CPU evaluator knows, each with its semantics and the source it was
// taken from. Real dumps (PyTorch/XLA on AWS Trainium) call vendor kernels by name; an unknown
// target is an Unimplemented error naming the target and the instruction, never a guess.
// Sharding annotations are identities on values: `Sharding` (with_sharding_constraint,
// mark_sharding) and `xla.sdy.FuncResultSharding` (JAX with Shardy), as XLA's ShardingRemover
// treats them (compiler/passes/sharding_remover.h removes them before the lowering); so are the
// layout and memory-placement annotations `LayoutConstraint`, `MoveToHost`, `MoveToDevice` and
// `annotate_device_placement` (compiler/passes/annotation_custom_calls.h).
//
// Target                          | operands                       | semantics
// --------------------------------|--------------------------------|------------------------------------------
// AwsNeuronTransferWithStaticRing | (x)                            | identity: y = x. A
// host<->device transfer
//                                 |                                | marker; every use in
//                                 shared/hlo/real/ |                                | (147 calls)
//                                 has result shape == operand |                                |
//                                 shape and feeds weights/params onward.
// AwsNeuronGelu                   | (x)                            | y = x * Phi(x) = 0.5 x (1 +
// erf(x/sqrt2))
//                                 |                                | (torch.nn.functional.gelu,
//                                 approximate= |                                | "none";
//                                 torch-neuronx xla_impl/ops.py |                                |
//                                 overrides gelu with this target).
// AwsNeuronGeluApprxTanh          | (x)                            | y = 0.5 x (1 + tanh(sqrt(2/pi)
// (x + 0.044715
//                                 |                                | x^3))) (gelu
//                                 approximate="tanh"; the GPT-2 |                                |
//                                 module calls it where HF's gelu_new is).
// AwsNeuronGeluBackward           | (x)                            | dGelu/dx = Phi(x) + x phi(x),
// NOT multiplied
//                                 |                                | by the incoming gradient:
//                                 torch-neuronx's |                                |
//                                 Gelu.backward_impl builds |                                |
//                                 multiply(grad, custom-call(input)).
// AwsNeuronSoftmax                | (x), backend_config="<dim>"    | softmax over dimension <dim>
// (default: the
//                                 |                                | last): exp(x - max) / sum
//                                 exp(x - max).
// AwsNeuronSoftmaxBackward        | (y, dy), backend_config="<dim>"| dx = y * (dy - sum_dim(dy *
// y)); operand 0 is
//                                 |                                | the softmax output, operand 1
//                                 its gradient.
// AwsNeuronRmsNorm                | (x, w, eps), backend_config=   | y = x * rsqrt(mean_dim(x^2) +
// eps) * w, w [n]
//                                 | "<dim>"                        | broadcast along <dim>.
//
// Sources for the softmax / rms-norm conventions: AWS transformers-neuronx `hlo.py` builds
// `CustomCall(logits, custom_call_target="AwsNeuronSoftmax", backend_config=str(dim).encode())` and
// `CustomCall(hidden, weight, eps, custom_call_target="AwsNeuronRmsNorm", backend_config=str(dim))`
// whose reference HLO (rms_norm_legacy) is exactly the formula above (computed in f32, cast to the
// result type); the softmax-backward operand order {y, dLdy} and formula are from public analyses
// of the Neuron compiler's NativeToCustomSoftmaxDx pass. None of AwsNeuronSoftmax*,
// AwsNeuronRmsNorm or AwsNeuronGeluBackward occurs in shared/hlo/real/ (only
// TransferWithStaticRing, Gelu, GeluApprxTanh), so the dimension inference could not be checked
// against a real dump: backend_config is parsed as a decimal (negative counts from the end); an
// empty config means the last dimension. The RmsNorm calls seen in public dumps (f32[4096,1,4] with
// backend_config="0", weight f32[4096]) confirm that <dim> is the normalized dimension and the
// weight's length is that dimension's size.
//
// All computations run in f64 and round once to the result type (the Neuron kernels compute in f32
// or better; f64 keeps the reference on the exact side).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// What a custom-call needs from its instruction.
struct CustomCallInfo {
  std::string_view target;
  std::string_view backend_config;
  std::string_view instruction_name;  // for error messages
  const Shape* result_shape = nullptr;
  /// Set (when not null) for a call whose TPU expansion is a data-dependent while loop (Eigh,
  /// syevd: the Jacobi sweeps): the trips that loop runs on these operands, which the evaluator
  /// records under the call's name as it records a while's (EvaluatorOptions::while_trips).
  int64_t* loop_trips = nullptr;
};

/// Evaluates a known target; Unimplemented "custom-call target 'X' (instruction 'y') is not in the
/// CPU evaluator's table (known: ...)" for unknown targets; InvalidArgument for wrong operand
/// counts/shapes.
StatusOr<Literal> EvaluateCustomCall(const CustomCallInfo& info,
                                     std::span<const Literal* const> operands,
                                     const KernelOptions& options);

/// The targets in the table, sorted.
std::vector<std::string> KnownCustomCallTargets();

}  // namespace tpusim::hlo
