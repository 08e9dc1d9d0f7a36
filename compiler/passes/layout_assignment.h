// layout-assignment: the physical dimension order (minor_to_major) each array takes in HBM where the
// module leaves it free, chosen as XLA's TPU layout assignment chooses it, so that the arrays'
// tile-padded sizes (hlo/tiled_layout.h) — what HBM traffic and capacity count — are those of the
// layouts a TPU would use.
//
// Why it matters: the HBM tiles put the most minor dimension on the 128 lanes. A PyTorch (NCHW)
// activation f32[64,64,12,12] kept row-major has 12 on the lanes and takes 14x its logical bytes;
// in the layout XLA gives it ({1,0,3,2}: the 64 features on the lanes, the batch on the sublanes) it
// takes 2x.
//
// The rules (XLA's TPU layout assignment is not public; these are what the measured TPU v3 profiles
// of ../shared/calibration show on 30,000+ arrays, see docs/codegen.md, "Layouts"):
//  * Seeds, from convolutions. An activation (a convolution's input or output) gets its feature or
//    its batch dimension on the lanes — whichever pads less, the feature dimension on a tie — the
//    other one on the sublanes, and its spatial dimensions major, the last one most minor:
//    NHWC bf16[16,38,38,256] -> {3,0,2,1}; bf16[16,300,300,3] -> {0,3,2,1} (batch on the lanes).
//    A kernel gets its output or its input feature dimension on the lanes, whichever pads less (the
//    output feature on a tie), the other on the sublanes: HWIO f32[3,3,256,256] -> {3,2,1,0},
//    bf16[1,1,256,12] -> {2,3,1,0}. Dimension labels come from dim_labels, so the input- and
//    filter-gradient forms follow the same rules.
//  * Propagation, as XLA's LayoutAssignment propagates operand and result constraints: outward
//    from the seeds, breadth-first in program order, through ops that keep their operand's
//    dimensions (elementwise ops, convert, copy, pad, slice, dynamic-slice, dynamic-update-slice,
//    concatenate, reverse, reduce-window, select-and-scatter), through transposes (the layout
//    permuted, so the transpose of a laid-out array is the bitcast XLA makes of it), and from a
//    reduce's operand to its result. The first layout to reach an array wins. Then, in a dump
//    taken after XLA's layout assignment, outward from every layout the dump states, to the
//    arrays the compiler inserted.
//  * The rest: an array no constraint reaches takes the order that pads least (row-major unless
//    another pair of dimensions on the lanes and sublanes pads strictly less — the profiles show
//    f32[4,512,7,4]{1,3,2,0}, f32[4,4,512,4]{2,1,3,0}), and spreads it the same way.
//  * Fixed: ENTRY parameters and the entry result (the entry computation layout), tuples, and every
//    array whose layout the module states — in a dump taken after XLA's layout assignment (any
//    tiled or non-row-major layout in the entry), each stated layout is XLA's and is kept; in a dump
//    taken before it every printed layout is the printer's default and all but the fixed ones are
//    free.
//
// The layouts change no value: tpusim's simulated memory holds every array row-major in its logical
// dimensions; the layout decides only how many bytes the array takes and moves in its TPU tiles.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "hlo/computation.h"
#include "hlo/tiled_layout.h"

namespace tpusim::compiler {

/// minor_to_major of each array `AssignTpuLayouts` laid out (only arrays whose order differs from
/// the one they had).
using TpuLayouts = std::map<const hlo::HloInstruction*, std::vector<int64_t>>;

/// The layouts XLA's TPU layout assignment would give the free arrays of `entry` (rules above).
/// `tiles` decides which candidate pads less (hlo::TiledByteSize); with tiles.min_tile_bytes == 0
/// (arrays stored untiled) nothing is assigned. Deterministic; never fails.
TpuLayouts AssignTpuLayouts(const hlo::HloComputation& entry, const hlo::TileRule& tiles);

/// `shape` with the physical order `minor_to_major` (no tiles: TpuTile picks them).
hlo::Shape InLayout(const hlo::Shape& shape, const std::vector<int64_t>& minor_to_major);

}  // namespace tpusim::compiler
