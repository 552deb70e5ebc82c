#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pstrain/config/config.hpp"

namespace pstrain::config {

// A bool key's flag may stand alone (`--sync` for `--sync true`); every other flag takes a value.
enum class Kind { kValue, kBool };

struct Key {
  using Assign = std::function<void(Config&, const std::string&)>;
  using Part = std::function<std::string(const Config&)>;
  Key(const char* keyName, Assign assignValue, const char* keyHelp, Kind keyKind = Kind::kValue,
      Part fingerprintPart = nullptr)
      : name(keyName),
        assign(std::move(assignValue)),
        help(keyHelp),
        kind(keyKind),
        shapesRun(std::move(fingerprintPart)) {}

  const char* name;
  Assign assign;
  const char* help;
  Kind kind;
  // For a key that shapes the run: its part of the run fingerprint ("batch=100"; "" when it
  // adds nothing). The parts, labels and formats are those fingerprints have always had, so
  // runs started by earlier versions still resume; but for the worker count, which left the
  // fingerprint when workers became free to join and leave a run.
  Part shapesRun;
};

// Every key of the configuration, its parser and its help: the one table flags, the config file,
// the environment and --help are read from.
const std::vector<Key>& keys();
// The key of that name; null where there is none.
const Key* findKey(const std::string& name);

}  // namespace pstrain::config
