// Writing a command's outputs (report, CSV, trace, assembly, ...): every output of a run is
// committed together at its end, or none is.
//
// What is at an output path decides how it is written:
//  - nothing, or a regular file (also through a chain of symlinks): the contents go to a temporary
//    file beside the final target (`TARGET.tmp.<pid>`) and are renamed over the target at commit,
//    so a symlink stays a symlink and its target gets the contents; an interrupted or failed run
//    leaves the old file untouched and no temporary;
//  - a character device, FIFO or socket (/dev/null, /dev/full, a terminal, a pipe): written
//    through, never replaced (a FIFO with no reader is refused instead of blocking);
//  - "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written to that open descriptor;
//  - a directory: refused.
// Two outputs naming one file (the same path, a symlink to it, a hard link) are refused, except
// character devices such as /dev/null, which may take several. A failed write (ENOSPC, EPIPE, EIO)
// is an InvalidArgument naming the option and the path (exit 2).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"

namespace tpusim {

class OutputSet {
 public:
  OutputSet();
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  /// Declares the output of `option` (e.g. "--report") at `path`; call it before the work so a bad
  /// path is reported at once. InvalidArgument "OPTION PATH: ..." if `path` is empty, a directory,
  /// in a missing folder, or the same file as an earlier output.
  Status Declare(const std::string& option, const std::string& path);

  /// True if `option` was declared.
  bool Has(const std::string& option) const;

  /// Sets the whole contents of the declared output `option` (replacing earlier contents).
  void Set(const std::string& option, std::string contents);

  /// For an output too large to hold in memory (a trace): a stream whose bytes become the declared
  /// output `option` at Commit(), as Set() contents would. They go at once to an unnamed spool
  /// file (created beside the target, or in the temporary folder for a write-through output, and
  /// unlinked at once, so an interrupted run leaves nothing), which Commit() copies to the
  /// output's temporary or descriptor in chunks: memory stays flat. InvalidArgument "OPTION PATH:
  /// ..." if the spool cannot be created; the stream's errors are reported by Commit().
  StatusOr<std::ostream*> Stream(const std::string& option);

  /// Writes every declared output: first each file to its temporary, then (termination signals
  /// held back) the write-through outputs, then the renames. On any failure nothing is renamed,
  /// every temporary is removed, and the error names the option, the path and the system's reason.
  /// An output declared but never Set() is written empty.
  Status Commit();

 private:
  struct Output;
  std::vector<std::unique_ptr<Output>> outputs_;
  Output* Find(const std::string& option);
};

/// Writes `contents` to `path` as the only output of an OutputSet (see above); InvalidArgument
/// naming the path on failure.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

/// Removes the temporary file of every output being written. Async-signal-safe (only atomics and
/// unlink(2)): the `tpusim` command's signal handler calls it so that an interrupted run leaves
/// neither a partial output nor its temporary file.
void RemovePendingTemporaryFiles();

/// The termination signals tpusim handles (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
/// SIGALRM): held back while OutputSet::Commit renames, so a run is committed whole or not at all.
const std::vector<int>& TerminationSignals();

/// Prints `message` to stderr and ends the process with `exit_code` unless an OutputSet has
/// committed (then returns false and the process goes on to finish normally); waits for a commit
/// in progress, so a commit is never cut in half and a stopped run leaves no output. For watchdogs
/// (--max-seconds): removes the pending temporaries before _exit.
bool ExitUnlessCommitted(int exit_code, const std::string& message);

/// Flushes std::cout and C stdout. InvalidArgument "standard output: write failed: REASON" if any
/// write to it failed (a full disk, a closed pipe with SIGPIPE ignored, /dev/full).
Status FlushStandardOutput();

}  // namespace tpusim
