// Interconnect: the bandwidth resources of a system of chips, registered in one TransferNetwork,
// and the routes between cores.
//
//  - HBM: one fair-share server per chip at chip.hbm.bandwidth_bytes_per_s (path "chip<c>.hbm"),
//  or, when
//    chip.hbm.shared_by_cores is false (TPU v2/v3: each TensorCore owns half the HBM [P S6, S9]),
//    one per core at bandwidth / tensorcores ("chip<c>.core<k>.hbm"). Latency
//    chip.hbm.latency_cycles.
//  - Host link (PCIe): one server per chip at chip.host.bandwidth_bytes_per_s ("chip<c>.host"); a
//  host
//    transfer pays the HBM latency too (assumption: no PCIe latency key exists; the HBM side
//    dominates).
//  - ICI: one server per link direction ("chip<c>.ici.x+" is the link leaving chip c towards +x) at
//    system.ici.link_bandwidth_bytes_per_s, per system.topology: ring = one dimension of `chips`
//    with wrap-around; torus2d / torus3d = system.shape with wrap-around in every dimension of size
//    > 1. Routes are dimension-ordered (x, then y, then z), each dimension the shorter way round
//    (ties go +); a transfer over h hops uses all h link directions at once (cut-through) and pays
//    h hop latencies.
//  - On-chip core-to-core path (cores of one chip, e.g. the two TensorCores of a v4 megacore): one
//    server per ordered pair of cores ("chip<c>.core<a>_to_core<b>") at twice the ICI link
//    bandwidth — the Hot Chips 32 TPUv2/v3 notes describe the internal links as "twice as fast" as
//    the external ones [S S3] — or at the chip's HBM bandwidth when no ICI is configured; latency
//    one ICI hop (at least 1 cycle). This is an assumption: Google has not published the on-chip
//    path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/units.h"
#include "config/chip_config.h"
#include "sim/chip/transfer_network.h"

namespace tpusim::sim {

/// A route: the resources a transfer uses and its latency after the last byte.
struct Route {
  std::vector<ResourceUse> uses;
  Cycles latency;
  int hops = 0;  // ICI hops (0 within a chip)
};

class Interconnect {
 public:
  /// Registers every resource of `config` in `network`. `config` is valid
  /// (config::ValidateChipConfig: the schema's ranges and the topology's consistency, checked once
  /// by the loader and by Simulator::Run); TPUSIM_CHECKs that the shape's product is the chip count.
  static Interconnect Build(const config::ChipConfig& config, TransferNetwork& network);

  /// HBM server used by `core` (a core index within its chip) of `chip`.
  int hbm(int chip, int core) const;
  int host(int chip) const { return host_[chip]; }
  Cycles hbm_latency() const { return hbm_latency_; }

  /// Route from global core `from` to global core `to` (global = chip * tensorcores + core),
  /// different. A dimension whose two ways round are equally short goes + (the - way with
  /// `minus_on_tie`: the counter-clockwise half of a bidirectional ring).
  Route CoreToCore(int from, int to, bool minus_on_tie = false) const;

  /// Position of global core `core` on the ring the ici.* collectives run (CollectiveUnit): chips
  /// in snake (boustrophedon) order over the torus — x fastest, each dimension's sweep reversed on
  /// every other pass of the next one — so consecutive chips are one ICI hop apart and, when the
  /// slowest varying dimension > 1 has even length, the last chip is one wrap-around hop from the
  /// first; the cores of a chip are consecutive. The naive order by core id would route the step
  /// from chip (1,0) to chip (0,1) of a 2x2 torus over two hops. Rings embedded in the torus this
  /// way are how collectives are laid out on TPU pods [Jouppi et al., ISCA 2023, §3: "the 3D torus
  /// … rings in each dimension"] (the exact TPU ring order is unpublished: assumption).
  int64_t RingPosition(int core) const;

  /// The rings an all-reduce over every core of the slice runs, one dimension at a time
  /// (system.ici.dimension_rings): the first torus dimension longer than 1 with the cores of each
  /// of its chips (consecutive on the ring: one on-chip hop, then one ICI hop), then each later
  /// dimension longer than 1 (a ring or torus topology wraps round, so each ring's neighbours are
  /// one hop apart). Empty when there are fewer than two (then the one snake ring is the same
  /// thing) or when the key is false.
  struct RingDimension {
    int64_t length = 1;  // cores along the dimension
    int64_t stride = 1;  // global core id step between neighbours along it
  };
  const std::vector<RingDimension>& ring_dimensions() const { return ring_dimensions_; }
  /// `core`'s coordinate along ring dimension `d`.
  int64_t RingCoordinate(int core, const RingDimension& d) const {
    return (core / d.stride) % d.length;
  }
  /// The core `delta` steps from `core` along ring dimension `d`, wrapping round.
  int RingNeighbour(int core, const RingDimension& d, int64_t delta) const {
    const int64_t c = RingCoordinate(core, d);
    const int64_t to = ((c + delta) % d.length + d.length) % d.length;
    return static_cast<int>(core + (to - c) * d.stride);
  }

  /// ICI link resources (for the report), in creation order.
  const std::vector<int>& links() const { return links_; }
  int chips() const { return chips_; }
  int cores_per_chip() const { return cores_per_chip_; }

 private:
  int chips_ = 1;
  int cores_per_chip_ = 1;
  bool hbm_shared_ = true;
  std::vector<int64_t> shape_;          // chips per dimension
  std::vector<int> hbm_;                // per chip (shared) or per chip*cores (split)
  std::vector<int> host_;               // per chip
  std::vector<int> links_;              // all ICI link directions
  std::vector<std::vector<int>> link_;  // [chip][dim*2 + (0:+ 1:-)] -> resource, -1 if none
  std::vector<int> onchip_;             // [chip][a][b] flattened, -1 on the diagonal
  std::vector<int64_t> ring_rank_;      // [chip] -> position of the chip on the snake ring
  std::vector<RingDimension> ring_dimensions_;
  Cycles hbm_latency_;
  Cycles hop_latency_;
};

}  // namespace tpusim::sim
