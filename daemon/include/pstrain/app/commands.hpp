#pragma once

#include <string>
#include <vector>

namespace pstrain::app {

// `pstrain run`: the daemon every pod runs.
int runDaemon(const std::vector<std::string>& args);

// `pstrain local`: a whole cluster as child processes on loopback.
int runLocal(const std::string& self, const std::vector<std::string>& args);

// `pstrain single`: the same training in one process without network, the compute-only bound.
int runSingle(const std::vector<std::string>& args);

// `pstrain status HOST:PORT`: a process's /status in human form.
int runStatus(const std::vector<std::string>& args);

// `pstrain serve --model FILE [--http-port N]`: predictions and the page from a model file.
int runServe(const std::vector<std::string>& args);

// `pstrain plot DEPLOY_LOG... -o curve.svg`: the training curve as an SVG chart.
int runPlot(const std::vector<std::string>& args);

// `pstrain export --onnx [--model model.bin] [-o model.onnx]`: a model file as ONNX.
int runExport(const std::vector<std::string>& args);

}  // namespace pstrain::app
