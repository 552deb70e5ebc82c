#pragma once

#include <stdexcept>
#include <string>

namespace pstrain {

// Process exit codes: each class of start-up failure has its own, so scripts and
// Kubernetes events tell a bad flag from a bad data file or an unreachable peer.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitConfig = 2,
  kExitData = 3,
  kExitPeer = 4,
  kExitIo = 5,
  kExitListen = 6,
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual int exitCode() const { return kExitFailure; }
};

// A flag, environment variable or configuration file entry is invalid.
class ConfigError : public Error {
 public:
  using Error::Error;
  int exitCode() const override { return kExitConfig; }
};

// A data file is missing or malformed.
class DataError : public Error {
 public:
  using Error::Error;
  int exitCode() const override { return kExitData; }
};

// A peer could not be reached, or spoke out of turn.
class PeerError : public Error {
 public:
  using Error::Error;
  int exitCode() const override { return kExitPeer; }
};

// Bytes received from the network violate the wire protocol. Trying again will not help.
class ProtocolError : public PeerError {
 public:
  using PeerError::PeerError;
};

// The peer refused us and said why (an error frame): trying again will not help.
class RefusedError : public PeerError {
 public:
  using PeerError::PeerError;
};

// The peer is not there (yet): its name does not resolve or nothing answers on its port. Pods
// start in parallel and DNS records follow, so a later attempt may succeed.
class UnreachableError : public PeerError {
 public:
  using PeerError::PeerError;
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
  int exitCode() const override { return kExitIo; }
};

// A port cannot be listened on: another process holds it, or it may not be used.
class ListenError : public Error {
 public:
  using Error::Error;
  int exitCode() const override { return kExitListen; }
};

// A failure that ends the process with a given exit code (e.g. a child process's own).
class ExitError : public Error {
 public:
  ExitError(const std::string& what, int code) : Error(what), code_(code) {}
  int exitCode() const override { return code_; }

 private:
  int code_;
};

}  // namespace pstrain
