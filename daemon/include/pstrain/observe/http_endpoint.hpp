#pragma once

#include <Poco/Net/HTTPServer.h>

#include <memory>

#include "pstrain/observe/metrics.hpp"

namespace pstrain::observe {

// The HTTP face of a process, for probes, Prometheus and people:
//   /healthz  200 while the process serves at all
//   /readyz   200 once it is connected to its peers (training) and when completed, else 503
//   /metrics  Prometheus text exposition
//   /status   JSON: role, ordinal, state, global step, peers
class HttpEndpoint {
 public:
  HttpEndpoint(int port, const Metrics& metrics);
  ~HttpEndpoint();

  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const;

 private:
  std::unique_ptr<Poco::Net::HTTPServer> server_;
};

}  // namespace pstrain::observe
