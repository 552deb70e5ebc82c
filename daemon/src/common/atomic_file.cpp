#include "pstrain/common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "pstrain/common/error.hpp"
#include "pstrain/common/failpoint.hpp"

namespace pstrain {

void writeFileAtomically(const std::string& path, const std::string& contents,
                         const char* failpoint) {
  const std::string temporary = path + ".tmp";
  auto fail = [&](const char* step) {
    throw IoError("cannot write " + path + " (" + step + "): " + std::strerror(errno));
  };
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open");
  const char* at = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t written = ::write(fd, at, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      ::close(fd);
      fail("write");
    }
    at += written;
    left -= size_t(written);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  if (::close(fd) != 0) fail("close");
  if (failpoint) PSTRAIN_FAILPOINT(failpoint);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("rename");
}

}  // namespace pstrain
