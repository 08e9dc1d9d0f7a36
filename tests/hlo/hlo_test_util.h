// Helpers shared by the HLO tests: where the real modules live and how to list them.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace tpusim::hlo::testing {

/// Folder of the shared real-module corpus (../shared/hlo/real relative to the repository root,
/// which is the tests' working directory); empty if absent.
inline std::string SharedRealDir() {
  const std::filesystem::path p = std::filesystem::path("..") / "shared" / "hlo" / "real";
  return std::filesystem::is_directory(p) ? p.string() : std::string();
}

/// Sorted paths of the *.hlo files in `dir` (empty if it does not exist).
inline std::vector<std::string> HloFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  if (dir.empty() || !std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".hlo") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tpusim::hlo::testing
