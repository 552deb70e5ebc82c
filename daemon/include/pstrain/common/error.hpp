#pragma once

#include <cerrno>
#include <stdexcept>
#include <string>

namespace pstrain {

// Process exit codes: each class of start-up failure has its own, so scripts and
// Kubernetes events tell a bad flag from a bad data file or an unreachable peer. main.cpp is the
// one place that maps an error class to its code.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitConfig = 2,
  kExitData = 3,
  kExitPeer = 4,
  kExitIo = 5,
  kExitListen = 6,
  kExitDiskFull = 7,
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A flag, environment variable or configuration file entry is invalid.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A data file is missing or malformed.
class DataError : public Error {
 public:
  using Error::Error;
};

// A peer failed us. Never thrown as such: each of the three kinds below says whether another
// attempt can help, so a retry loop catches UnreachableError alone and lets the others pass.
class PeerError : public Error {
 protected:
  explicit PeerError(const std::string& what) : Error(what) {}
};

// The peer is not there, or no longer: its name does not resolve, nothing answers on its port,
// or its channel closed or fell silent. Pods start in parallel and DNS records follow, and a ps
// that restarts comes back: the one kind of peer failure a later attempt may cure.
class UnreachableError final : public PeerError {
 public:
  explicit UnreachableError(const std::string& what) : PeerError(what) {}
};

// Bytes received from the network violate the wire protocol. Trying again will not help.
class ProtocolError final : public PeerError {
 public:
  explicit ProtocolError(const std::string& what) : PeerError(what) {}
};

// The peer answered and refused us, saying why (an error frame, an HTTP error status): trying
// again will not help.
class RefusedError final : public PeerError {
 public:
  explicit RefusedError(const std::string& what) : PeerError(what) {}
};

// Bytes that do not hold the fields their format says: too few, or some left over. Neutral
// about whose bytes they were: the reader of a frame makes it a ProtocolError, the reader of a
// file an error naming the file.
class DecodeError : public Error {
 public:
  using Error::Error;
};

// A local file could not be read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

// A write found no room (ENOSPC, EDQUOT): the disk may have room again later.
class DiskFullError : public IoError {
 public:
  using IoError::IoError;
};

// The error for a write that failed with `error` (an errno): DiskFullError where the disk had no
// room, IoError otherwise.
[[noreturn]] inline void throwWriteError(const std::string& message, int error) {
  if (error == ENOSPC || error == EDQUOT) throw DiskFullError(message);
  throw IoError(message);
}

// A port cannot be listened on: another process holds it, or it may not be used.
class ListenError : public Error {
 public:
  using Error::Error;
};

// A failure that ends the process with a given exit code (e.g. a child process's own).
class ExitError : public Error {
 public:
  ExitError(const std::string& what, int code) : Error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace pstrain
