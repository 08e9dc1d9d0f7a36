#include "sim/report/collectives.h"

#include <fmt/format.h>

#include <algorithm>

namespace tpusim::sim {

double BusyBandwidthBytesPerSecond(uint64_t bytes, uint64_t busy_cycles, double clock_hz) {
  return busy_cycles == 0
             ? 0.0
             : static_cast<double>(bytes) * clock_hz / static_cast<double>(busy_cycles);
}

Json CollectiveReportJson(const SimResult& s) {
  Json j;
  Json cores = Json::MakeArray();
  for (const CoreResult& c : s.cores) {
    const uint64_t coll = c.stalls[static_cast<int>(StallCategory::kIciBound)];
    const std::string unit = c.path + ".ici";
    Json cj;
    cj["core"] = c.core;
    cj["path"] = c.path;
    cj["cycles"] = c.cycles.value();
    cj["collective_cycles"] = coll;
    cj["compute_cycles"] = c.cycles.value() - std::min<uint64_t>(coll, c.cycles.value());
    cj["ici_unit_busy_cycles"] = s.stats->Get(unit, "busy_cycles").value_or(0);
    cj["ici_bytes_sent"] = s.stats->Get(unit, "bytes_sent").value_or(0);
    cj["collectives"] = s.stats->Get(unit, "collectives").value_or(0);
    cores.push_back(std::move(cj));
  }
  j["per_core"] = std::move(cores);
  Json links = Json::MakeArray();
  for (const std::string& link : s.ici_links) {
    const uint64_t bytes = s.stats->Get(link, "bytes").value_or(0);
    const uint64_t busy = s.stats->Get(link, "busy_cycles").value_or(0);
    Json lj;
    lj["link"] = link;
    lj["bytes"] = bytes;
    lj["busy_cycles"] = busy;
    // Achieved while busy: bytes / the link's busy time; over the run: bytes / seconds.
    lj["busy_bandwidth_bytes_per_s"] = BusyBandwidthBytesPerSecond(bytes, busy, s.clock_hz);
    lj["average_bandwidth_bytes_per_s"] =
        s.seconds() > 0 ? static_cast<double>(bytes) / s.seconds() : 0.0;
    links.push_back(std::move(lj));
  }
  j["links"] = std::move(links);
  return j;
}

std::string CollectiveReportText(const SimResult& s) {
  if (s.ici_links.empty() && s.cores.size() <= 1) return "";
  std::string out = "\ncollectives vs compute (per core; collective = ici_bound cycles)\n";
  out += fmt::format("  {:<14} {:>14} {:>14} {:>14} {:>7} {:>16} {:>14}\n", "core", "cycles",
                     "compute", "collective", "coll%", "ICI unit busy", "ICI B sent");
  for (const CoreResult& c : s.cores) {
    const uint64_t coll = c.stalls[static_cast<int>(StallCategory::kIciBound)];
    const uint64_t cyc = c.cycles.value();
    const std::string unit = c.path + ".ici";
    out +=
        fmt::format("  {:<14} {:>14} {:>14} {:>14} {:>6.1f}% {:>16} {:>14}\n", c.path, cyc,
                    cyc - std::min(coll, cyc), coll,
                    cyc == 0 ? 0.0 : 100.0 * static_cast<double>(coll) / static_cast<double>(cyc),
                    s.stats->Get(unit, "busy_cycles").value_or(0),
                    s.stats->Get(unit, "bytes_sent").value_or(0));
  }
  bool header = false;
  for (const std::string& link : s.ici_links) {
    const uint64_t bytes = s.stats->Get(link, "bytes").value_or(0);
    const uint64_t busy = s.stats->Get(link, "busy_cycles").value_or(0);
    if (bytes == 0) continue;
    if (!header) {
      out += fmt::format("  {:<24} {:>14} {:>14} {:>16}\n", "ICI link (busy)", "bytes",
                         "busy cycles", "GB/s while busy");
      header = true;
    }
    out += fmt::format("  {:<24} {:>14} {:>14} {:>16.4g}\n", link, bytes, busy,
                       BusyBandwidthBytesPerSecond(bytes, busy, s.clock_hz) / 1e9);
  }
  return out;
}

}  // namespace tpusim::sim
