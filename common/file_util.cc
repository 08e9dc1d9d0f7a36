#include "common/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tpusim {
namespace {

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the file kind is checked on the
  // descriptor itself (fstat), so nothing can swap it in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound(path + ": no such file");
    return InvalidArgument(path + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode)) return InvalidArgument(path + ": is a directory");
    return InvalidArgument(path + ": is " + FileKind(st.st_mode) +
                           ", not a regular file; tpusim reads inputs only from regular files");
  }
  if (st.st_size > max_bytes) {
    ::close(fd);
    return InvalidArgument(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                           std::to_string(max_bytes) + " an input may have");
  }
  // Read st_size bytes into a buffer of exactly that size, then probe for more with a small one:
  // growing the full buffer to look past its end would copy the whole file (a 4 GiB input
  // peaked at 8.4 GB of memory). Only a file that grows while it is read is read further, never
  // past max_bytes.
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  char probe[65536];
  while (true) {
    const bool in_buffer = done < out.size();
    const size_t want = in_buffer ? out.size() - done : sizeof probe;
    const ssize_t n = ::read(fd, in_buffer ? out.data() + done : probe, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return InvalidArgument(path + ": read error: " + std::strerror(err));
    }
    if (n == 0) break;
    if (!in_buffer) {
      if (static_cast<int64_t>(done) + n > max_bytes) {
        ::close(fd);
        return InvalidArgument(path + ": more than the " + std::to_string(max_bytes) +
                               " bytes an input may have");
      }
      out.append(probe, static_cast<size_t>(n));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

}  // namespace tpusim
