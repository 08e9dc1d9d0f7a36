// TPU tiled layouts: which tile XLA's TPU layout assignment gives an array, and how many bytes the
// array takes (and moves) once every tile is padded whole.
//
// A TPU stores an array in HBM as tiles over its most minor dimensions (layout text
// `{3,0,2,1:T(8,128)(2,1)}`): the minor dimension on the 128 lanes, the second-minor on the 8
// sublanes. A tile is moved and stored whole, so `bf16[300,300,3,16]{3,2,1,0}` (16 on the lanes, 3
// on the sublanes, tile T(4,128)) takes 10.7x its logical 8.6 MB. The profiled TPU v3 training
// steps of
// ../shared/calibration show exactly these tiles on 30,000+ arrays and that the bytes a fusion
// moves are its operands' and outputs' tile-padded sizes (README there).
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/shape.h"

namespace tpusim::hlo {

/// The chip figures that decide the default tile (config keys `core.vpu.lanes`,
/// `core.vpu.sublanes`, `chip.hbm.tile_min_bytes`).
struct TileRule {
  int64_t lanes = 128;         // elements on the minor dimension of a full tile
  int64_t sublanes = 8;        // rows of a full tile
  int64_t min_tile_bytes = 0;  // bytes of the smallest tile; 0 = arrays are stored untiled
};

/// The tile of `array` (dims of the tile, applied to the array's most minor dimensions in its
/// layout's order, size-1 dimensions taken as major unless the layout has a tile or the array has
/// fewer than two larger dimensions, as XLA's TPU layout assignment places them): the layout's
/// first tile if the shape has one (`T(8,128)` in a dump taken after
/// XLA's layout assignment), else the one XLA's TPU layout assignment picks, as the calibration
/// profiles show it:
///   rank >= 2: (r, lanes), r the smallest power of two >= the second-minor dimension with
///              r * lanes * element bytes >= min_tile_bytes, at most sublanes
///              (f32: T(2,128), T(4,128), T(8,128); bf16: T(4,128), T(8,128); pred/s8: T(8,128));
///   rank <= 1: (t), t the smallest power of two >= the element count with t * element bytes >=
///              min_tile_bytes, at most lanes * sublanes (f32: T(256), T(512), T(1024)).
/// Empty when min_tile_bytes is 0 and the shape has no tile (an untiled array).
std::vector<int64_t> TpuTile(const Shape& array, const TileRule& rule);

/// Bytes `array` takes stored in tiles of `tile` (TpuTile): each of the most minor dimensions
/// (layout order; row-major without a layout) rounded up to its tile dimension, times the rest,
/// times the element size (ByteSize's for sub-byte types). ByteSize() for an empty tile.
/// Saturating.
int64_t TiledByteSize(const Shape& array, const std::vector<int64_t>& tile);

/// Whether a `copy` from an array `from` to an array `to` moves data on a TPU: both state a layout
/// and the two differ in physical order (minor_to_major) or tiles — the layout changes XLA's
/// layout assignment inserts, which its TPU profiles list as "data formatting". A copy between
/// equal layouts, or where either array states none (a dump taken before layout assignment), is a
/// no-op, as XLA's algebraic simplifier removes it.
bool CopyChangesLayout(const Shape& from, const Shape& to);

}  // namespace tpusim::hlo
