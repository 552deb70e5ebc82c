#include <Poco/Exception.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "pstrain/app/commands.hpp"
#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/failpoint.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/config/config.hpp"

namespace {

void printUsage() {
  std::printf(
      "pstrain %s: parameter-server MNIST training\n\n"
      "Usage:\n"
      "  pstrain run [FLAGS]      the daemon every pod runs (role from the pod name)\n"
      "  pstrain local [FLAGS] [--summary-json FILE] [--keep-serving] [--ps-fronts PORT,...]\n"
      "                           a whole cluster (--ps N --workers M) as local processes;\n"
      "                           --ps-fronts: workers reach ps i at 127.0.0.1:PORT_i (a proxy)\n"
      "  pstrain single [FLAGS] [--summary-json FILE]\n"
      "                           the same training in one process on one core, no network\n"
      "  pstrain status [--wait SECONDS] [--predict] HOST:PORT...\n"
      "                           progress of processes, from their HTTP ports; --wait: until\n"
      "                           each has made progress (exit 4 if one has not in time);\n"
      "                           --predict: worker 0 must also answer /predict\n"
      "  pstrain plot LOG_DIR|EVENTS_FILE... [-o curve.svg]\n"
      "                           loss and test accuracy against the global step, as SVG\n"
      "  pstrain serve --model FILE [--http-port N]\n"
      "                           POST /predict and the page at / for a model.bin (port 8080)\n"
      "  pstrain export --onnx [--model model.bin] [-o model.onnx]\n"
      "                           a model file as ONNX (input pixels [N, 784] 0-255; outputs\n"
      "                           probabilities [N, 10], predictions [N]), by default beside it\n\n"
      "Configuration: flags > PSTRAIN_* environment > YAML file (--config FILE) > defaults.\n"
      "Keys:\n%s",
      PSTRAIN_VERSION, pstrain::config::describeKeys().c_str());
}

// One line, in deploy.log (when the command writes one) and on stderr.
int fail(const std::string& message, int exitCode) {
  pstrain::log::logger("app")->error("{}", message);
  pstrain::log::flush();
  std::fprintf(stderr, "pstrain: %s\n", message.c_str());
  return exitCode;
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that vanishes mid-send is an error to handle, not a reason to die.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  bool help = std::any_of(args.begin(), args.end(),
                          [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (args.empty() || help || args[0] == "help") {
    printUsage();
    return args.empty() ? pstrain::kExitConfig : pstrain::kExitOk;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    pstrain::failpoint::configureFromEnvironment();
    // The commands that compute: before any BLAS call, as it may start this program again.
    if (command == "run" || command == "local" || command == "single" || command == "serve") {
      pstrain::useBestBlasCore(argv);
    }
    if (command == "run") return pstrain::app::runDaemon(args);
    if (command == "local") {
      return pstrain::app::runLocal(std::filesystem::read_symlink("/proc/self/exe"), args);
    }
    if (command == "single") return pstrain::app::runSingle(args);
    if (command == "status") return pstrain::app::runStatus(args);
    if (command == "plot") return pstrain::app::runPlot(args);
    if (command == "serve") return pstrain::app::runServe(args);
    if (command == "export") return pstrain::app::runExport(args);
    std::fprintf(stderr, "pstrain: unknown command '%s' (pstrain --help lists the commands)\n",
                 command.c_str());
    return pstrain::kExitConfig;
  } catch (const pstrain::ConfigError& e) {
    return fail(e.what(), pstrain::kExitConfig);
  } catch (const pstrain::DataError& e) {
    return fail(e.what(), pstrain::kExitData);
  } catch (const pstrain::PeerError& e) {
    return fail(e.what(), pstrain::kExitPeer);
  } catch (const pstrain::DiskFullError& e) {
    return fail(e.what(), pstrain::kExitDiskFull);
  } catch (const pstrain::IoError& e) {
    return fail(e.what(), pstrain::kExitIo);
  } catch (const pstrain::ListenError& e) {
    return fail(e.what(), pstrain::kExitListen);
  } catch (const pstrain::ExitError& e) {
    return fail(e.what(), e.code());
  } catch (const pstrain::Error& e) {
    return fail(e.what(), pstrain::kExitFailure);
  } catch (const Poco::Exception& e) {
    return fail("unexpected failure: " + e.displayText(), pstrain::kExitFailure);
  } catch (const std::exception& e) {
    return fail(std::string("unexpected failure: ") + e.what(), pstrain::kExitFailure);
  }
}
