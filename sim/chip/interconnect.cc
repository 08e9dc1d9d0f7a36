#include "sim/chip/interconnect.h"

#include <algorithm>
#include <string>

#include "common/check.h"

namespace tpusim::sim {
namespace {

const char* kDimNames[] = {"x", "y", "z"};

}  // namespace

Interconnect Interconnect::Build(const config::ChipConfig& config, TransferNetwork& network) {
  Interconnect ic;
  const config::SystemConfig& sys = config.system;
  ic.chips_ = static_cast<int>(sys.chips);
  ic.cores_per_chip_ = static_cast<int>(config.tensorcores);
  ic.hbm_shared_ = config.hbm.shared_by_cores;
  const double hbm_bpc = config.HbmBytesPerCycle();
  ic.hbm_latency_ = Cycles(static_cast<uint64_t>(config.hbm.latency_cycles));
  ic.hop_latency_ = Cycles(static_cast<uint64_t>(std::max<int64_t>(sys.ici_hop_latency_cycles, 1)));

  switch (sys.topology) {
    case config::Topology::kSingle:
      ic.shape_ = {1};
      break;
    case config::Topology::kRing:
      ic.shape_ = {sys.chips};
      break;
    case config::Topology::kTorus2D:
    case config::Topology::kTorus3D:
      ic.shape_ = sys.shape;
      break;
  }
  int64_t product = 1;
  for (int64_t d : ic.shape_) product *= d;
  TPUSIM_CHECK(product == sys.chips && ic.cores_per_chip_ >= 1)
      << "Interconnect::Build: a config that config::ValidateChipConfig refuses";

  if (sys.ici_dimension_rings) {
    // Global core id = local core + cores_per_chip x chip id, chip id = x + X (y + Y z): the cores
    // of a chip and the first torus dimension longer than 1 before it are one ring of cores
    // (consecutive ids, stride 1), each later dimension a ring of its own.
    ic.ring_dimensions_.push_back({ic.cores_per_chip_, 1});
    int64_t dim_stride = ic.cores_per_chip_;
    bool first = true;
    for (int64_t size : ic.shape_) {
      if (size > 1 && first) {
        ic.ring_dimensions_[0].length *= size;  // dimensions before it have length 1
        first = false;
      } else if (size > 1) {
        ic.ring_dimensions_.push_back({size, dim_stride});
      }
      dim_stride *= size;
    }
    if (ic.ring_dimensions_.size() < 2) ic.ring_dimensions_.clear();
  }

  // Snake order: path(d) = path(d-1) forward, then reversed, then forward, ... once per
  // coordinate of dimension d; chip id = x + X * (y + Y * z).
  std::vector<int64_t> path = {0};
  int64_t stride = 1;
  for (int64_t size : ic.shape_) {
    std::vector<int64_t> next;
    for (int64_t i = 0; i < size; ++i) {
      for (size_t k = 0; k < path.size(); ++k) {
        next.push_back(i * stride + path[i % 2 == 0 ? k : path.size() - 1 - k]);
      }
    }
    path = std::move(next);
    stride *= size;
  }
  ic.ring_rank_.assign(path.size(), 0);
  for (size_t k = 0; k < path.size(); ++k) ic.ring_rank_[static_cast<size_t>(path[k])] = k;

  for (int c = 0; c < ic.chips_; ++c) {
    std::string chip = "chip" + std::to_string(c);
    if (ic.hbm_shared_) {
      ic.hbm_.push_back(network.AddResource(chip + ".hbm", hbm_bpc));
    } else {
      for (int k = 0; k < ic.cores_per_chip_; ++k) {
        ic.hbm_.push_back(network.AddResource(chip + ".core" + std::to_string(k) + ".hbm",
                                              config.HbmBytesPerCyclePerCore()));
      }
    }
    ic.host_.push_back(
        network.AddResource(chip + ".host", config.host_bandwidth_bytes_per_s / config.clock_hz));
  }

  const double link_bpc = config.IciLinkBytesPerCycle();
  ic.link_.assign(ic.chips_, std::vector<int>(ic.shape_.size() * 2, -1));
  for (int c = 0; c < ic.chips_; ++c) {
    for (size_t d = 0; d < ic.shape_.size(); ++d) {
      if (ic.shape_[d] <= 1) continue;
      for (int dir = 0; dir < 2; ++dir) {
        std::string p =
            "chip" + std::to_string(c) + ".ici." + kDimNames[d] + (dir == 0 ? "+" : "-");
        int id = network.AddResource(p, link_bpc);
        ic.link_[c][d * 2 + dir] = id;
        ic.links_.push_back(id);
      }
    }
  }

  if (ic.cores_per_chip_ > 1) {
    double onchip_bpc = link_bpc > 0 ? 2 * link_bpc : hbm_bpc;
    const int n = ic.cores_per_chip_;
    ic.onchip_.assign(static_cast<size_t>(ic.chips_) * n * n, -1);
    for (int c = 0; c < ic.chips_; ++c) {
      for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
          if (a == b) continue;
          ic.onchip_[(static_cast<size_t>(c) * n + a) * n + b] =
              network.AddResource("chip" + std::to_string(c) + ".core" + std::to_string(a) +
                                      "_to_core" + std::to_string(b),
                                  onchip_bpc);
        }
      }
    }
  }
  return ic;
}

int Interconnect::hbm(int chip, int core) const {
  return hbm_shared_ ? hbm_[chip] : hbm_[chip * cores_per_chip_ + core];
}

int64_t Interconnect::RingPosition(int core) const {
  return ring_rank_[static_cast<size_t>(core / cores_per_chip_)] * cores_per_chip_ +
         core % cores_per_chip_;
}

Route Interconnect::CoreToCore(int from, int to, bool minus_on_tie) const {
  TPUSIM_CHECK(from != to);
  const int n = cores_per_chip_;
  int chip_a = from / n, chip_b = to / n;
  Route r;
  if (chip_a == chip_b) {
    r.uses.push_back(
        {onchip_[(static_cast<size_t>(chip_a) * n + from % n) * n + to % n], UseKind::kThrough});
    r.latency = hop_latency_;
    return r;
  }
  // Dimension-ordered routing; chip id = x + X * (y + Y * z).
  std::vector<int64_t> pos(shape_.size()), dst(shape_.size());
  int64_t a = chip_a, b = chip_b;
  for (size_t d = 0; d < shape_.size(); ++d) {
    pos[d] = a % shape_[d];
    dst[d] = b % shape_[d];
    a /= shape_[d];
    b /= shape_[d];
  }
  auto chip_of = [&](const std::vector<int64_t>& p) {
    int64_t id = 0, stride = 1;
    for (size_t d = 0; d < shape_.size(); ++d) {
      id += p[d] * stride;
      stride *= shape_[d];
    }
    return static_cast<int>(id);
  };
  for (size_t d = 0; d < shape_.size(); ++d) {
    int64_t size = shape_[d];
    int64_t fwd = ((dst[d] - pos[d]) % size + size) % size;
    if (fwd == 0) continue;
    bool plus = minus_on_tie ? fwd < size - fwd : fwd <= size - fwd;
    int64_t steps = plus ? fwd : size - fwd;
    for (int64_t s = 0; s < steps; ++s) {
      r.uses.push_back({link_[chip_of(pos)][d * 2 + (plus ? 0 : 1)], UseKind::kThrough});
      pos[d] = ((pos[d] + (plus ? 1 : -1)) % size + size) % size;
      ++r.hops;
    }
  }
  r.latency = hop_latency_ * static_cast<uint64_t>(r.hops);
  return r;
}

}  // namespace tpusim::sim
