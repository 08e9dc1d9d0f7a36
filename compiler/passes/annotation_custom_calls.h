// annotation-custom-calls: custom-calls that annotate a value rather than compute one, each turned
// into what XLA's TPU pipeline makes of it before the lowering (values are unchanged by all):
//
//  * `LayoutConstraint` (jax.experimental.layout's with_layout_constraint): XLA's layout
//    assignment (xla/service/layout_assignment.cc) treats it as a copy whose result has the
//    custom-call's layout. It becomes `copy(x)` with that result shape; tpusim then treats it as any
//    copy (canonicalize removes copies: its simulated memory holds arrays in their logical order,
//    and the layout only sizes HBM tiles, compiler/passes/layout_assignment.h).
//  * `annotate_device_placement` with frontend attribute `_xla_buffer_placement` (jax.device_put
//    with a memory kind inside jit): XLA's ConvertMemoryPlacementToInternalAnnotations makes
//    "pinned_host" / "unpinned_host" a `MoveToHost` and "device" a `MoveToDevice`; any other value
//    is an InvalidArgument error.
//  * `MoveToHost` / `MoveToDevice` (host memory offloading): XLA's HostOffloader
//    (xla/service/host_offloader.cc) places the value in host memory (memory space S(5)) and
//    inserts the copies to and from it, DMAs over PCIe; a MoveToDevice of a value already on the
//    device is removed. tpusim does not lower host memory yet: both become their operand (an
//    identity, the values XLA computes), and `tpusim run` names them in a report note with the
//    bytes XLA would move over the host link, time these cycles do not include
//    (HostOffloadNote, compiler/compile.h).
//
// Errors (located, `file:line:col: error: %name (custom-call): ...`): InvalidArgument for an
// annotation with other than one operand or whose result's dimensions or element type differ from
// its operand's, and for an unknown `_xla_buffer_placement`.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class AnnotationCustomCalls : public HloPass {
 public:
  std::string_view name() const override { return "annotation-custom-calls"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

/// True for the host-offload annotations this pass turns into identities: MoveToHost,
/// MoveToDevice and annotate_device_placement.
bool IsHostOffloadAnnotation(const hlo::HloInstruction& inst);

}  // namespace tpusim::compiler
