// Sizing a slice for a module: a single-chip config names a chip generation (configs/tpu-v4.yaml is
// one v4 chip); a module that needs more TensorCores than one chip has runs on the smallest slice
// of that generation that holds it, the way a Cloud TPU user picks v4-8, v4-16, v5litepod-8, ...
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"
#include "common/status.h"
#include "config/chip_config.h"

namespace tpusim::config {

/// The largest slice SliceForCores builds: a full TPU v4 pod, 4096 chips as a 16x16x16 torus
/// [Jouppi et al., "TPU v4", ISCA 2023, §2].
inline constexpr int64_t kMaxSliceChips = 4096;

/// The slice a module of `cores` devices (replicas x partitions, one per TensorCore) runs on.
///  * config.total_cores() >= cores: `config` unchanged, `*note` empty.
///  * config is one chip (system.chips == 1) with ICI links: a slice of C chips, C the smallest
///  power
///    of two with C * chip.tensorcores >= cores (Cloud TPU slices come in powers of two), joined as
///    the generation's ICI allows — system.ici.links_per_chip 6 → torus3d, 4 → torus2d, 2 → ring.
///    The torus shape doubles the smallest dimension (the first on ties) until it holds C chips:
///    4 → [2,2,1], 8 → [2,2,2], 16 → [4,2,2] (a v4-32 is 2x2x4 [Cloud TPU docs, "TPU v4"]; the
///    order of the dimensions does not change a torus); 2D: 2 → [2,1], 4 → [2,2], 8 → [4,2]
///    (v5litepod-8 is 2x4). Every other field is the chip's. The name becomes
///    "<name> (<shape> slice)"; `*note` says what was derived, for the user.
/// Errors: InvalidArgument when a multi-chip config (an explicit slice) is too small, or the chip
/// has no ICI (system.ici.links_per_chip 0, e.g. TPU v1), or the slice would exceed kMaxSliceChips
/// — naming the config and the count.
StatusOr<ChipConfig> SliceForCores(const ChipConfig& config, int64_t cores, std::string* note);

/// The slice a run used, for its report's `slice` (docs/report-schema.md): {"chips",
/// "tensorcores_per_chip", "topology", "shape" [chips per dimension], "derived" (whether
/// SliceForCores sized it: `note` is non-empty), "note" (when derived)}.
Json SliceJson(const ChipConfig& slice, const std::string& note);

}  // namespace tpusim::config
