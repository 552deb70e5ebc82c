#include "pstrain/common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/common/failpoint.hpp"

namespace pstrain {

void writeFileAtomically(const std::string& path, const std::string& contents,
                         const char* failpoint) {
  const std::string temporary = path + ".tmp";
  auto fail = [&](const char* step, int error) {
    ::unlink(temporary.c_str());  // a part written would hold room
    throwWriteError("cannot write " + path + " (" + step + "): " + std::strerror(error), error);
  };
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open", errno);
  const char* at = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t written = ::write(fd, at, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      const int error = written < 0 ? errno : ENOSPC;  // 0 bytes: no room for them
      ::close(fd);
      fail("write", error);
    }
    at += written;
    left -= size_t(written);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    fail("fsync", error);
  }
  if (::close(fd) != 0) fail("close", errno);
  if (failpoint) PSTRAIN_FAILPOINT(failpoint);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("rename", errno);
}

void writeFileWhenRoom(const std::string& path, const std::string& contents,
                       std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    try {
      writeFileAtomically(path, contents);
      return;
    } catch (const DiskFullError&) {
      if (std::chrono::steady_clock::now() >= deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
}

}  // namespace pstrain
