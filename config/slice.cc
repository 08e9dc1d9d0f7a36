#include "config/slice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "config/schema.h"

namespace tpusim::config {

StatusOr<ChipConfig> SliceForCores(const ChipConfig& config, int64_t cores, std::string* note) {
  note->clear();
  if (cores <= config.total_cores()) return config;
  const std::string what = fmt::format(
      "{} devices (replicas x partitions) need {} TensorCores but config '{}' has {} ({} chip(s) "
      "x {} TensorCores)",
      cores, cores, config.name, config.total_cores(), config.system.chips, config.tensorcores);
  if (config.system.chips > 1) {
    return InvalidArgument(what +
                           "; choose a larger slice, or a single-chip config (e.g. tpu-v4) to "
                           "let tpusim size the slice");
  }
  const int64_t links = config.system.ici_links_per_chip;
  const size_t dims = links >= 6 ? 3 : links >= 4 ? 2 : links >= 2 ? 1 : 0;
  if (dims == 0) {
    return InvalidArgument(what + fmt::format("; system.ici.links_per_chip is {}, so '{}' chips "
                                              "cannot be joined into a slice",
                                              links, config.name));
  }
  const int64_t tc = std::max<int64_t>(1, config.tensorcores);
  // Doubling stops past the largest slice, so no count from the input can make it overflow or spin.
  int64_t chips = 1;
  while (chips <= kMaxSliceChips && chips * tc < cores) chips *= 2;
  if (chips > kMaxSliceChips) {
    return InvalidArgument(what +
                           fmt::format("; that needs more than the largest slice tpusim builds "
                                       "({} chips, a TPU v4 pod)",
                                       kMaxSliceChips));
  }
  std::vector<int64_t> shape(dims, 1);
  for (int64_t c = 1; c < chips; c *= 2) {
    *std::min_element(shape.begin(), shape.end()) *= 2;
  }
  ChipConfig out = config;
  out.system.chips = chips;
  out.system.shape = shape;
  out.system.topology = dims == 3   ? Topology::kTorus3D
                        : dims == 2 ? Topology::kTorus2D
                                    : Topology::kRing;
  std::string shape_text = fmt::format("{}", fmt::join(shape, "x"));
  out.name = fmt::format("{} ({} slice)", config.name, shape_text);
  *note = fmt::format("{}; simulating a {} slice of {} '{}' chips ({} TensorCores, {} ICI)", what,
                      shape_text, chips, config.name, chips * tc,
                      dims == 3   ? "3D torus"
                      : dims == 2 ? "2D torus"
                                  : "ring");
  return out;
}

Json SliceJson(const ChipConfig& slice, const std::string& note) {
  Json::Array shape;
  for (int64_t d : slice.system.shape) shape.emplace_back(d);
  Json j = Json::Object{{"chips", slice.system.chips},
                        {"tensorcores_per_chip", slice.tensorcores},
                        {"topology", TopologyName(slice.system.topology)},
                        {"shape", Json(std::move(shape))},
                        {"derived", !note.empty()}};
  if (!note.empty()) j["note"] = note;
  return j;
}

}  // namespace tpusim::config
