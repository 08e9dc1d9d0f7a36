// sim/chip/interconnect.h: the routes between cores — dimension-ordered over the torus, each
// dimension the shorter way round (ties +, or - when asked), one ICI link direction per hop and a
// hop latency each; the on-chip path between two cores of a chip; every chip's HBM and host
// link — and the collectives' ring order: chips in snake order so neighbours are one hop apart,
// and the per-dimension rings of system.ici.dimension_rings.
#include "sim/chip/interconnect.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::TinyChip;

// The resource paths a route uses, in order.
std::vector<std::string> Paths(const TransferNetwork& net, const Route& r) {
  std::vector<std::string> out;
  for (const ResourceUse& u : r.uses) out.push_back(net.resource_path(u.resource));
  return out;
}

config::ChipConfig Torus(std::vector<int64_t> shape, int cores_per_chip = 1) {
  int64_t chips = 1;
  for (int64_t s : shape) chips *= s;
  config::ChipConfig c = TinyChip(static_cast<int>(chips), cores_per_chip);
  c.system.topology =
      shape.size() == 2 ? config::Topology::kTorus2D : config::Topology::kTorus3D;
  c.system.shape = std::move(shape);
  c.system.ici_links_per_chip = 2 * static_cast<int64_t>(c.system.shape.size());
  return c;
}

TEST(InterconnectTest, ARingRouteTakesTheShorterWayWithAHopLatencyEach) {
  StatRegistry stats;
  TransferNetwork net("net", stats);
  const Interconnect ic = Interconnect::Build(TinyChip(6), net);  // 6 chips on a ring, 50/hop
  EXPECT_EQ(ic.chips(), 6);
  const Route r1 = ic.CoreToCore(0, 1);
  EXPECT_EQ(r1.hops, 1);
  EXPECT_EQ(r1.latency, Cycles(50));
  EXPECT_EQ(Paths(net, r1), (std::vector<std::string>{"chip0.ici.x+"}));
  const Route r5 = ic.CoreToCore(0, 5);  // one hop the - way round, not five
  EXPECT_EQ(r5.hops, 1);
  EXPECT_EQ(Paths(net, r5), (std::vector<std::string>{"chip0.ici.x-"}));
  // Three hops either way: + by default, - when asked (a bidirectional ring's other half).
  EXPECT_EQ(Paths(net, ic.CoreToCore(1, 4)),
            (std::vector<std::string>{"chip1.ici.x+", "chip2.ici.x+", "chip3.ici.x+"}));
  EXPECT_EQ(Paths(net, ic.CoreToCore(1, 4, true)),
            (std::vector<std::string>{"chip1.ici.x-", "chip0.ici.x-", "chip5.ici.x-"}));
  EXPECT_EQ(ic.CoreToCore(1, 4).latency, Cycles(150));
}

TEST(InterconnectTest, TorusRoutesAreDimensionOrdered) {
  StatRegistry stats;
  TransferNetwork net("net", stats);
  const Interconnect ic = Interconnect::Build(Torus({4, 4}), net);
  // Chip (1, 0) -> chip (3, 2): x first (2 hops, a tie: +), then y (2 hops, a tie: +).
  const Route r = ic.CoreToCore(1, 3 + 2 * 4);
  EXPECT_EQ(r.hops, 4);
  EXPECT_EQ(r.latency, Cycles(4 * 50));
  EXPECT_EQ(Paths(net, r), (std::vector<std::string>{"chip1.ici.x+", "chip2.ici.x+",
                                                     "chip3.ici.y+", "chip7.ici.y+"}));
}

// Moved from transfer_network_test.cc.
TEST(InterconnectTest, TorusRoutesAreDimensionOrderedShortestWay) {
  config::ChipConfig c;
  c.clock_hz = 1e9;
  c.tensorcores = 2;
  c.hbm.bandwidth_bytes_per_s = 1e11;
  c.system.chips = 8;
  c.system.topology = config::Topology::kTorus2D;
  c.system.shape = {4, 2};
  c.system.ici_link_bandwidth_bytes_per_s = 1e10;
  c.system.ici_hop_latency_cycles = 10;
  StatRegistry stats;
  TransferNetwork net("net", stats);
  const Interconnect ic = Interconnect::Build(c, net);
  // Core 0 (chip 0 at x0,y0) to core 15 (chip 7 at x3,y1): x goes -1 (shorter), then y +1: 2 hops.
  Route r = ic.CoreToCore(0, 15);
  EXPECT_EQ(r.hops, 2);
  EXPECT_EQ(r.latency.value(), 20u);
  EXPECT_EQ(net.resource_path(r.uses[0].resource), "chip0.ici.x-");
  EXPECT_EQ(net.resource_path(r.uses[1].resource), "chip3.ici.y+");
  // Same chip: the on-chip path.
  Route same = ic.CoreToCore(2, 3);
  EXPECT_EQ(net.resource_path(same.uses[0].resource), "chip1.core0_to_core1");
}

TEST(InterconnectTest, CoresOfOneChipUseTheOnChipPath) {
  StatRegistry stats;
  TransferNetwork net("net", stats);
  const Interconnect ic = Interconnect::Build(TinyChip(2, 2), net);
  EXPECT_EQ(ic.cores_per_chip(), 2);
  const Route r = ic.CoreToCore(0, 1);
  EXPECT_EQ(r.hops, 0);
  EXPECT_EQ(Paths(net, r), (std::vector<std::string>{"chip0.core0_to_core1"}));
  EXPECT_EQ(r.latency, Cycles(50));  // one ICI hop's latency (assumption, interconnect.h)
  // Twice the ICI link bandwidth (16 B/cycle): 32 B/cycle in the network's fixed point.
  EXPECT_EQ(net.rate_fp(r.uses[0].resource),
            net.rate_fp(ic.CoreToCore(0, 2).uses[0].resource) * 2);
  EXPECT_EQ(net.resource_path(ic.hbm(1, 1)), "chip1.hbm");  // shared by the chip's cores
  EXPECT_EQ(net.resource_path(ic.host(1)), "chip1.host");
  EXPECT_EQ(ic.hbm_latency(), Cycles(20));
}

TEST(InterconnectTest, PrivateHbmIsOneServerPerCore) {
  config::ChipConfig c = TinyChip(1, 2);
  c.hbm.shared_by_cores = false;
  StatRegistry stats;
  TransferNetwork net("net", stats);
  const Interconnect ic = Interconnect::Build(c, net);
  EXPECT_EQ(net.resource_path(ic.hbm(0, 0)), "chip0.core0.hbm");
  EXPECT_EQ(net.resource_path(ic.hbm(0, 1)), "chip0.core1.hbm");
  // Each a half of the chip's bandwidth (TPU v2/v3: each TensorCore owns half the HBM).
  StatRegistry shared_stats;
  TransferNetwork shared_net("net", shared_stats);
  const Interconnect shared = Interconnect::Build(TinyChip(1, 2), shared_net);
  EXPECT_EQ(net.rate_fp(ic.hbm(0, 0)), net.rate_fp(ic.hbm(0, 1)));
  EXPECT_EQ(net.rate_fp(ic.hbm(0, 0)) * 2, shared_net.rate_fp(shared.hbm(0, 0)));
}

// A 2 x 2 torus: the ring visits (0,0) (1,0) (1,1) (0,1), every step one hop; the cores of a chip
// are consecutive on it.
TEST(InterconnectTest, TheCollectiveRingSnakesThroughTheTorus) {
  StatRegistry stats;
  TransferNetwork net("net", stats);
  const Interconnect ic = Interconnect::Build(Torus({2, 2}, 2), net);
  // Global core = chip * 2 + core; chips 0 (0,0), 1 (1,0), 2 (0,1), 3 (1,1).
  const std::vector<int64_t> want = {0, 1, 2, 3, 6, 7, 4, 5};
  for (int core = 0; core < 8; ++core) EXPECT_EQ(ic.RingPosition(core), want[core]) << core;
  // Per-dimension rings: x with the chip's two cores (4 long, stride 1), then y (2 long, the
  // chips' stride of 4 cores).
  ASSERT_EQ(ic.ring_dimensions().size(), 2u);
  EXPECT_EQ(ic.ring_dimensions()[0].length, 4);
  EXPECT_EQ(ic.ring_dimensions()[0].stride, 1);
  EXPECT_EQ(ic.ring_dimensions()[1].length, 2);
  EXPECT_EQ(ic.ring_dimensions()[1].stride, 4);
  const Interconnect::RingDimension& y = ic.ring_dimensions()[1];
  EXPECT_EQ(ic.RingCoordinate(6, y), 1);
  EXPECT_EQ(ic.RingNeighbour(6, y, 1), 2);  // wraps round
  EXPECT_EQ(ic.RingNeighbour(1, ic.ring_dimensions()[0], -2), 3);
}

}  // namespace
}  // namespace tpusim::sim
