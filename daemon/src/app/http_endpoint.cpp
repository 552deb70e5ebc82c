#include "pstrain/app/http_endpoint.hpp"

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/NumberParser.h>
#include <Poco/URI.h>

#include <algorithm>
#include <future>
#include <optional>
#include <sstream>
#include <vector>

#include "pstrain/common/error.hpp"
#include "pstrain/observe/page.hpp"
#include "pstrain/observe/status_client.hpp"
#include "pstrain/serve/request_error.hpp"

namespace pstrain::app {
namespace {

using Poco::Net::HTTPResponse;
using serve::RequestError;

// The `after` of /events?after=N: 0 when absent; nullopt when it is not a number.
std::optional<std::uint64_t> eventsAfter(const std::string& uri) {
  Poco::URI::QueryParameters parameters;
  try {
    parameters = Poco::URI(uri).getQueryParameters();
  } catch (const Poco::SyntaxException&) {
    return std::nullopt;
  }
  for (const auto& [key, value] : parameters) {
    if (key != "after") continue;
    Poco::UInt64 after = 0;
    if (!Poco::NumberParser::tryParseUnsigned64(value, after)) return std::nullopt;
    return after;
  }
  return 0;
}

// How long worker 0's /cluster waits for each ps's /status: a ps that is gone shows as such.
constexpr double kPsStatusSeconds = 1;

// A ps's entry in /cluster: its /status, or why it could not be had.
Poco::JSON::Object psEntry(const observe::Progress::PsHttp& ps) {
  Poco::JSON::Object entry(Poco::JSON_PRESERVE_KEY_ORDER);
  entry.set("ps", ps.ps);
  if (ps.port == 0) {
    entry.set("error", "it has no HTTP endpoint");
    return entry;
  }
  try {
    auto reply = observe::httpRequest(ps.host, ps.port, "GET", "/status", "", "", kPsStatusSeconds);
    if (reply.status == HTTPResponse::HTTP_OK) {
      entry.set("status", Poco::JSON::Parser().parse(reply.body));
    } else {
      entry.set("error", "its /status answered " + std::to_string(reply.status));
    }
  } catch (const PeerError& e) {
    entry.set("error", std::string(e.what()));
  } catch (const Poco::Exception& e) {
    entry.set("error", "its /status is not JSON: " + e.displayText());
  }
  return entry;
}

using Answer = serve::HttpReply;

Answer json(HTTPResponse::HTTPStatus status, const std::string& body) {
  return serve::jsonReply(status, body);
}

std::string pathOf(const Poco::Net::HTTPRequest& request) {
  return request.getURI().substr(0, request.getURI().find('?'));
}

std::string queryOf(const Poco::Net::HTTPRequest& request) {
  const auto mark = request.getURI().find('?');
  return mark == std::string::npos ? "" : request.getURI().substr(mark + 1);
}

// Answers a request to any of the endpoint's paths: one for every connection, so what it keeps
// of a request lives in the call.
class Responder {
 public:
  Responder(const HttpEndpoint::Pages* pages, const serve::ModelSlot* model,
            serve::InferenceRoutes* routes, std::string corsOrigin)
      : pages_(pages), model_(model), routes_(routes), corsOrigin_(std::move(corsOrigin)) {}

  HttpAnswer operator()(const Poco::Net::HTTPRequest& request, const ReadBody& readBody) const {
    std::optional<std::uint64_t> eventsSent;  // the /events answered: its `next`
    HttpAnswer answer;
    try {
      answer.reply = route(request, readBody, &eventsSent);
    } catch (const RequestError& e) {
      answer.reply = serve::errorReply(e.status(), e.what());
    } catch (const std::exception& e) {
      answer.reply = serve::errorReply(500, std::string("internal error: ") + e.what());
    }
    answer.headers = headers(request);
    // Counted once sent: a process that exits waits for this (Events::awaitReader).
    if (eventsSent) {
      answer.sent = [events = pages_->events, next = *eventsSent] { events->delivered(next); };
    }
    return answer;
  }

 private:
  std::vector<std::pair<std::string, std::string>> headers(
      const Poco::Net::HTTPRequest& request) const {
    std::vector<std::pair<std::string, std::string>> out{{"Cache-Control", "no-store"}};
    if (pathOf(request) == "/history") {
      // Another run's page overlays this curve (its ?compare=): read-only numbers, no
      // credentials, so any origin may read them.
      out.emplace_back("Access-Control-Allow-Origin", "*");
    } else if (!corsOrigin_.empty()) {
      out.emplace_back("Access-Control-Allow-Origin", corsOrigin_);
      out.emplace_back("Vary", "Origin");
      if (request.getMethod() == "OPTIONS") {  // a preflight, before a browser's POST
        out.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        out.emplace_back("Access-Control-Allow-Headers", "Content-Type");
        out.emplace_back("Access-Control-Max-Age", "600");
      }
    }
    return out;
  }

  Answer route(const Poco::Net::HTTPRequest& request, const ReadBody& readBody,
               std::optional<std::uint64_t>* eventsSent) const {
    const std::string path = pathOf(request);
    if (request.getMethod() == "OPTIONS" && !corsOrigin_.empty()) {
      return {HTTPResponse::HTTP_NO_CONTENT, "text/plain", ""};
    }
    if (auto answer =
            routes_->answer(request.getMethod(), path, queryOf(request), request.getContentType(),
                            readBody)) {
      return *answer;
    }
    if (request.getMethod() != "GET" && request.getMethod() != "HEAD") {
      const auto paths = pagePaths();
      if (std::find(paths.begin(), paths.end(), path) == paths.end()) {
        throw RequestError(404, notFound());
      }
      return serve::methodNotAllowed("GET, HEAD",
                                     "only GET here (POST is for the model server's routes)");
    }
    if (path == "/") {
      return {HTTPResponse::HTTP_OK, "text/html; charset=utf-8", std::string(observe::kPageHtml)};
    }
    if (path == "/healthz") return {HTTPResponse::HTTP_OK, "text/plain", "ok\n"};
    if (path == "/readyz") return readiness();
    if (path == "/metrics") {
      return {HTTPResponse::HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
              (pages_ ? pages_->metrics() : "") +
                  (model_ ? routes_->metrics().prometheusText() : "")};
    }
    if (path == "/status") {
      if (pages_) return json(HTTPResponse::HTTP_OK, pages_->status());
      std::string reason;
      const char* state = model_->get(&reason) ? "completed" : "waiting";
      return json(HTTPResponse::HTTP_OK,
                  std::string(R"({"role":"serve","ordinal":0,"state":")") + state + "\"}");
    }
    if (path == "/events" && pages_) {
      auto after = eventsAfter(request.getURI());
      if (!after) throw RequestError(400, "after must be a sequence number, e.g. /events?after=0");
      std::uint64_t next = 0;
      auto body = pages_->events->since(*after, &next);
      *eventsSent = next;
      return json(HTTPResponse::HTTP_OK, body);
    }
    if (path == "/history" && pages_) {
      if (request.getURI().find('?') != std::string::npos) {
        throw RequestError(400, "/history takes no query parameters");
      }
      return json(HTTPResponse::HTTP_OK, pages_->events->history());
    }
    if (path == "/cluster" && pages_ && pages_->psHttp) return cluster();
    throw RequestError(404, notFound());
  }

  // The paths answered below, GET only: the training routes where this process trains.
  std::vector<std::string> pagePaths() const {
    std::vector<std::string> paths{"/", "/healthz", "/readyz", "/metrics", "/status"};
    if (pages_) paths.insert(paths.end(), {"/events", "/history"});
    if (pages_ && pages_->psHttp) paths.push_back("/cluster");
    return paths;
  }

  // What this process answers: its page paths, and the model server's where it holds a model
  // slot.
  std::string notFound() const {
    std::string routes;
    for (const auto& path : pagePaths()) routes += (routes.empty() ? "" : ", ") + path;
    if (model_) {
      const std::string& name = routes_->modelName();
      routes += ", /model, POST /predict, /v2/health/ready, /v2/models/" + name +
                "[/versions/1][/ready|/infer], /v1/models/" + name +
                "[/versions/1][:predict|/metadata]";
    }
    return "not found: try " + routes;
  }

  // A training process is ready once connected; pstrain serve once it holds its model.
  Answer readiness() const {
    if (!pages_) {
      std::string reason;
      if (!model_->get(&reason)) return {HTTPResponse::HTTP_SERVICE_UNAVAILABLE, "text/plain", reason + "\n"};
      return {HTTPResponse::HTTP_OK, "text/plain", "serving\n"};
    }
    const observe::State state = pages_->state();
    const bool ready = state != observe::State::kWaiting;
    return {ready ? HTTPResponse::HTTP_OK : HTTPResponse::HTTP_SERVICE_UNAVAILABLE, "text/plain",
            observe::stateName(state) + "\n"};
  }

  // Every ps's /status, fetched together, in ps order: each ps's state and the workers it
  // serves, for the page.
  Answer cluster() const {
    std::vector<std::future<Poco::JSON::Object>> fetches;
    for (const auto& ps : pages_->psHttp()) {
      fetches.push_back(std::async(std::launch::async, psEntry, ps));
    }
    Poco::JSON::Array entries;
    for (auto& fetch : fetches) entries.add(fetch.get());
    Poco::JSON::Object out;
    out.set("ps", entries);
    std::ostringstream text;
    out.stringify(text);
    return json(HTTPResponse::HTTP_OK, text.str());
  }

  const HttpEndpoint::Pages* pages_;  // null: pstrain serve
  const serve::ModelSlot* model_;
  serve::InferenceRoutes* routes_;
  const std::string corsOrigin_;
};

}  // namespace

HttpEndpoint::HttpEndpoint(int port, std::optional<Pages> pages, const serve::ModelSlot* model,
                           const Options& options)
    : pages_(std::move(pages)), routes_(model, options.modelName, options.metricLabels) {
  server_ = std::make_unique<HttpServer>(
      port, Responder(pages_ ? &*pages_ : nullptr, model, &routes_, options.corsOrigin));
}

HttpEndpoint::~HttpEndpoint() = default;

int HttpEndpoint::port() const { return server_->port(); }

}  // namespace pstrain::app
