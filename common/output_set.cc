#include "common/output_set.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

namespace tpusim {
namespace {

// The temporary files being written, for RemovePendingTemporaryFiles. This is the one piece of
// mutable global state in tpusim, because a signal handler can reach nothing else: fixed-size
// storage (no allocation), each slot published by an atomic flag after its path is written and
// withdrawn before the path changes.
constexpr int kPendingSlots = 16;
constexpr size_t kPendingPathBytes = 4096;
struct PendingTemporary {
  std::atomic<bool> claimed{false};  // owned by one temporary
  std::atomic<bool> live{false};     // `path` is complete and may exist on disk
  char path[kPendingPathBytes];
};
PendingTemporary g_pending[kPendingSlots];
static_assert(std::atomic<bool>::is_always_lock_free, "needed in a signal handler");

// Registers a temporary while it may exist. Registration must succeed: a temporary the signal
// handler cannot see would be left behind, so a path too long or too many at once is an error.
class PendingTemporaryGuard {
 public:
  bool Register(const std::string& tmp) {
    if (tmp.size() >= kPendingPathBytes) return false;
    for (PendingTemporary& p : g_pending) {
      bool expected = false;
      if (p.claimed.compare_exchange_strong(expected, true)) {
        std::memcpy(p.path, tmp.c_str(), tmp.size() + 1);
        p.live.store(true);
        slot_ = &p;
        return true;
      }
    }
    return false;
  }
  void Release() {
    if (slot_ == nullptr) return;
    slot_->live.store(false);
    slot_->claimed.store(false);
    slot_ = nullptr;
  }
  ~PendingTemporaryGuard() { Release(); }

 private:
  PendingTemporary* slot_ = nullptr;
};

std::string ErrnoText(int err) { return std::strerror(err); }

// Writes all of `data` to `fd`; 0 or the errno of the failure.
int WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// The descriptor a path names when it is one of the process's own: "-", /dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N. -1 otherwise.
int OwnDescriptor(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const size_t n = std::strlen(prefix);
    if (path.compare(0, n, prefix) != 0 || path.size() == n || path.size() > n + 6) continue;
    int fd = 0;
    for (size_t i = n; i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9') return -1;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return -1;
}

// Follows `path` through symlinks to the file it finally names (which may not exist yet: a
// dangling link creates its target, as a shell redirection does). Empty on a loop.
std::string FinalTarget(std::string path) {
  namespace fs = std::filesystem;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      std::error_code ec;
      fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
      return ec ? path : p.string();
    }
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    if (n < 0) return path;
    fs::path link(std::string(buf, static_cast<size_t>(n)));
    path = link.is_absolute() ? link.string() : (fs::path(path).parent_path() / link).string();
  }
  return "";
}

}  // namespace

struct OutputSet::Output {
  enum class Kind { kFile, kWriteThrough, kDescriptor };
  std::string option;
  std::string path;  // as the user gave it
  Kind kind = Kind::kFile;
  std::string target;  // kFile: the final target (symlinks followed) the rename replaces
  int fd = -1;         // kDescriptor
  bool exists = false;
  struct stat st {};  // of the existing file
  std::string contents;
  std::unique_ptr<std::fstream> spool;  // Stream(): the contents, in an unlinked file
  std::string tmp;                      // kFile: the temporary while it exists
  PendingTemporaryGuard guard;

  std::string Where() const { return option + " " + path; }
};

OutputSet::OutputSet() = default;

OutputSet::~OutputSet() {
  for (auto& o : outputs_) {
    if (!o->tmp.empty()) ::unlink(o->tmp.c_str());
  }
}

OutputSet::Output* OutputSet::Find(const std::string& option) {
  for (auto& o : outputs_) {
    if (o->option == option) return o.get();
  }
  return nullptr;
}

bool OutputSet::Has(const std::string& option) const {
  for (const auto& o : outputs_) {
    if (o->option == option) return true;
  }
  return false;
}

Status OutputSet::Declare(const std::string& option, const std::string& path) {
  auto o = std::make_unique<Output>();
  o->option = option;
  o->path = path;
  if (path.empty()) return InvalidArgument(option + ": empty output path");
  o->fd = OwnDescriptor(path);
  if (o->fd >= 0) {
    o->kind = Output::Kind::kDescriptor;
    if (::fcntl(o->fd, F_GETFD) < 0) {
      return InvalidArgument(o->Where() + ": descriptor " + std::to_string(o->fd) + " is not open");
    }
  } else if (::stat(path.c_str(), &o->st) == 0) {
    o->exists = true;
    if (S_ISDIR(o->st.st_mode)) return InvalidArgument(o->Where() + ": is a directory");
    if (S_ISREG(o->st.st_mode)) {
      o->target = FinalTarget(path);
    } else {
      o->kind = Output::Kind::kWriteThrough;  // a device, FIFO or socket: never replaced
    }
  } else {
    if (errno != ENOENT) return InvalidArgument(o->Where() + ": " + ErrnoText(errno));
    o->target = FinalTarget(path);
    if (o->target.empty()) return InvalidArgument(o->Where() + ": too many levels of symlinks");
    const std::string folder = std::filesystem::path(o->target).parent_path().string();
    struct stat dir {};
    if (::stat(folder.empty() ? "." : folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
      return InvalidArgument(o->Where() + ": cannot write: no folder " + folder);
    }
  }
  for (const auto& other : outputs_) {
    bool same = false;
    if (o->kind == Output::Kind::kDescriptor || other->kind == Output::Kind::kDescriptor) {
      same = o->fd == other->fd;
    } else if (o->exists && other->exists) {
      same = o->st.st_dev == other->st.st_dev && o->st.st_ino == other->st.st_ino &&
             !S_ISCHR(o->st.st_mode);
    } else if (!o->exists && !other->exists) {
      same = o->target == other->target;
    }
    if (same) {
      return InvalidArgument(o->Where() + ": the same file as " + other->Where() +
                             "; give each output its own path");
    }
  }
  outputs_.push_back(std::move(o));
  return OkStatus();
}

void OutputSet::Set(const std::string& option, std::string contents) {
  Output* o = Find(option);
  if (o != nullptr) o->contents = std::move(contents);
}

StatusOr<std::ostream*> OutputSet::Stream(const std::string& option) {
  Output* o = Find(option);
  if (o == nullptr) return Internal(option + ": Stream() of an output never declared");
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = o->kind == Output::Kind::kFile ? fs::path(o->target).parent_path()
                                                      : fs::temp_directory_path(ec);
  std::string leaf = ".";
  leaf += fs::path(o->path).filename().string();
  leaf += ".spool.XXXXXX";
  std::string name = (dir / leaf).string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return InvalidArgument(o->Where() + ": cannot write: " + ErrnoText(errno));
  o->spool = std::make_unique<std::fstream>(
      name, std::ios::in | std::ios::out | std::ios::binary | std::ios::trunc);
  ::close(fd);
  ::unlink(name.c_str());  // the open stream keeps the file; nothing is left behind
  if (!*o->spool) return InvalidArgument(o->Where() + ": cannot write: spool file");
  return static_cast<std::ostream*>(o->spool.get());
}

namespace {

// Writes an output's contents to `fd`: its Set() string, or its Stream() spool in chunks.
template <typename OutputT>
int WriteContents(int fd, OutputT& o) {
  if (!o.spool) return WriteAll(fd, o.contents);
  std::fstream& spool = *o.spool;
  spool.flush();
  if (!spool) return EIO;
  spool.seekg(0);
  std::string chunk(1 << 20, '\0');
  while (spool) {
    spool.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const std::streamsize n = spool.gcount();
    if (n <= 0) break;
    const int err = WriteAll(fd, chunk.substr(0, static_cast<size_t>(n)));
    if (err != 0) return err;
  }
  return spool.bad() ? EIO : 0;
}

// Writes `o.contents` to the temporary beside its target, keeping an existing file's mode.
template <typename OutputT>
Status StageTemporary(OutputT& o) {
  const std::string tmp = o.target + ".tmp." + std::to_string(::getpid());
  if (!o.guard.Register(tmp)) {
    return InvalidArgument(o.Where() + ": path too long or too many outputs");
  }
  const mode_t mode = o.exists ? (o.st.st_mode & 07777) : 0666;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    const int err = errno;
    o.guard.Release();
    return InvalidArgument(o.Where() + ": cannot write: " + ErrnoText(err));
  }
  o.tmp = tmp;
  int err = WriteContents(fd, o);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) return InvalidArgument(o.Where() + ": write failed: " + ErrnoText(err));
  return OkStatus();
}

template <typename OutputT>
Status WriteThrough(OutputT& o, bool descriptor) {
  int fd = o.fd;
  if (!descriptor) {
    // O_NONBLOCK: a FIFO with no reader fails with ENXIO instead of blocking forever.
    fd = ::open(o.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
      const int err = errno;
      return InvalidArgument(
          o.Where() + ": cannot write: " +
          (err == ENXIO ? std::string("no process reads this FIFO") : ErrnoText(err)));
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  } else if (fd == 1) {
    TPUSIM_RETURN_IF_ERROR(FlushStandardOutput());
  }
  int err = WriteContents(fd, o);
  if (!descriptor && ::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) return InvalidArgument(o.Where() + ": write failed: " + ErrnoText(err));
  return OkStatus();
}

// Holds the termination signals back for its lifetime.
class SignalHold {
 public:
  SignalHold() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : TerminationSignals()) sigaddset(&set, s);
    ::sigprocmask(SIG_BLOCK, &set, &previous_);
  }
  ~SignalHold() { ::sigprocmask(SIG_SETMASK, &previous_, nullptr); }
  SignalHold(const SignalHold&) = delete;
  SignalHold& operator=(const SignalHold&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace

namespace {
// Commits and ExitUnlessCommitted exclude each other.
std::mutex g_commit_mutex;
bool g_committed = false;  // guarded by g_commit_mutex
}  // namespace

bool ExitUnlessCommitted(int exit_code, const std::string& message) {
  std::lock_guard<std::mutex> lock(g_commit_mutex);
  if (g_committed) return false;
  WriteAll(2, message);
  RemovePendingTemporaryFiles();
  ::_exit(exit_code);
}

Status OutputSet::Commit() {
  std::lock_guard<std::mutex> lock(g_commit_mutex);
  g_committed = true;  // from here on a watchdog lets the run finish
  auto clean = [&](Status s) {
    for (auto& o : outputs_) {
      if (!o->tmp.empty()) ::unlink(o->tmp.c_str());
      o->tmp.clear();
      o->guard.Release();
    }
    return s;
  };
  for (auto& o : outputs_) {
    if (o->kind != Output::Kind::kFile) continue;
    Status s = StageTemporary(*o);
    if (!s.ok()) return clean(s);
  }
  SignalHold hold;
  for (auto& o : outputs_) {
    if (o->kind == Output::Kind::kFile) continue;
    Status s = WriteThrough(*o, o->kind == Output::Kind::kDescriptor);
    if (!s.ok()) return clean(s);
  }
  for (auto& o : outputs_) {
    if (o->kind != Output::Kind::kFile) continue;
    if (::rename(o->tmp.c_str(), o->target.c_str()) != 0) {
      return clean(InvalidArgument(o->Where() + ": cannot write: " + ErrnoText(errno)));
    }
    o->tmp.clear();
    o->guard.Release();
  }
  return OkStatus();
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  OutputSet out;
  TPUSIM_RETURN_IF_ERROR(out.Declare("output", path));
  out.Set("output", contents);
  return out.Commit();
}

void RemovePendingTemporaryFiles() {
  for (PendingTemporary& p : g_pending) {
    if (p.live.load()) ::unlink(p.path);  // ENOENT (not created yet, or renamed) is fine
  }
}

const std::vector<int>& TerminationSignals() {
  static const std::vector<int> kSignals = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT,
                                            SIGUSR1, SIGUSR2, SIGALRM};
  return kSignals;
}

Status FlushStandardOutput() {
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout.good();
  if (!failed) return OkStatus();
  const int err = errno;
  std::clearerr(stdout);
  std::cout.clear();
  return InvalidArgument(std::string("standard output: write failed") +
                         (err != 0 ? ": " + ErrnoText(err) : std::string()));
}

}  // namespace tpusim
