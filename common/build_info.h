// The identity of this tpusim build, recorded in every report's `provenance`: the project version
// (CMakeLists.txt `project(VERSION)`) and the git commit of the source tree when CMake configured
// the build (cmake/TpusimBuildInfo.cmake; CMake re-configures when HEAD moves).
#pragma once

namespace tpusim {

/// "0.1.0": the project version.
const char* TpusimVersion();

/// The full 40-hex commit id of the source tree at configure time, with "-dirty" appended when
/// tracked files had uncommitted changes then; "unknown" when the source is not a git checkout (a
/// tarball) or git is absent.
const char* TpusimGitCommit();

}  // namespace tpusim
