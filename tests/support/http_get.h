// Test support: one HTTP(S) request to a server on this machine with Boost.Beast, as Prometheus or curl
// would send it — for memfleet-server's /metrics and Prometheus' own API. Compiled once in
// memfleet_test_http (http_get.cc), so a test that uses it does not parse Boost.Beast.
//
//   HttpReply r = HttpGet("127.0.0.1", port, "/metrics", {.bearer = token, .ca_file = ca});
//   EXPECT_EQ(r.status, 200) << r.error;
//   HttpReply login = HttpGet(host, port, "/login", {.method = "POST", .body = "token=..."});   // a form
#ifndef MEMFLEET_TESTS_SUPPORT_HTTP_GET_H_
#define MEMFLEET_TESTS_SUPPORT_HTTP_GET_H_

#include <string>
#include <utility>
#include <vector>

namespace memfleet::testing {

struct HttpOptions {
  std::string bearer;   // "": no Authorization header
  std::string ca_file;  // "": plain HTTP; else HTTPS, the server's certificate checked against this CA
  std::string method = "GET";
  std::string cookie;          // "": no Cookie header
  std::string body;            // sent as application/x-www-form-urlencoded when not ""
  std::string source_address;  // "": the system's choice; else the local address to connect from ("127.0.0.2")
  std::vector<std::pair<std::string, std::string>> headers;  // more fields; a "Host" here replaces the default
};

struct HttpReply {
  int status = 0;  // 0: no answer (error says why)
  std::string content_type;
  std::string www_authenticate;
  std::string location;
  std::string set_cookie;
  std::string content_security_policy;
  bool keep_alive = false;  // the server said it keeps the connection open
  std::string body;
  std::string error;
};

// One request; a reply with status 0 and `error` set when there was no answer.
HttpReply HttpGet(const std::string& host, int port, const std::string& target, const HttpOptions& o = {});

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_HTTP_GET_H_
