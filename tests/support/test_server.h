// Test support: a real LabServer (server/lab_server.h — the wiring memfleet-server runs) on
// 127.0.0.1:0 over a fresh SQLite file in its own temporary folder, removed at the end. Header-only.
//
//   absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
//   auto channel = grpc::CreateChannel((*s)->target(), grpc::InsecureChannelCredentials());
//   ... (*s)->store().ListDevices() ...
//
// Needs memfleet_server_lib (and memfleet::storage) on the test's link line.
#ifndef MEMFLEET_TESTS_SUPPORT_TEST_SERVER_H_
#define MEMFLEET_TESTS_SUPPORT_TEST_SERVER_H_

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "server/lab_server.h"

namespace memfleet::testing {

class TestServer {
 public:
  // `options.db_path` and `options.listen` are set here; the rest is the caller's.
  static absl::StatusOr<std::unique_ptr<TestServer>> Start(server::LabServerOptions options = {}) {
    std::string pattern = (std::filesystem::temp_directory_path() / "memfleet-test-server-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return absl::InternalError("mkdtemp failed");
    std::unique_ptr<TestServer> t(new TestServer(pattern));
    options.db_path = t->dir_ + "/memfleet.db";
    options.listen = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<server::LabServer>> s = server::LabServer::Start(options);
    if (!s.ok()) return s.status();
    t->server_ = std::move(*s);
    return t;
  }
  // Same, with a store the test made (e.g. one that fails on demand).
  static absl::StatusOr<std::unique_ptr<TestServer>> StartWithStore(std::unique_ptr<storage::Store> store,
                                                                    server::LabServerOptions options = {}) {
    std::string pattern = (std::filesystem::temp_directory_path() / "memfleet-test-server-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return absl::InternalError("mkdtemp failed");
    std::unique_ptr<TestServer> t(new TestServer(pattern));
    options.listen = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<server::LabServer>> s = server::LabServer::StartWithStore(std::move(store), options);
    if (!s.ok()) return s.status();
    t->server_ = std::move(*s);
    return t;
  }

  ~TestServer() {
    if (server_ != nullptr) server_->Stop();
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  server::LabServer& server() { return *server_; }
  storage::Store& store() { return server_->store(); }
  int port() const { return server_->port(); }
  std::string target() const { return absl::StrCat("127.0.0.1:", server_->port()); }
  // The temporary folder (holds memfleet.db); gone after the destructor.
  const std::string& dir() const { return dir_; }
  std::string db_path() const { return dir_ + "/memfleet.db"; }
  void Stop() { server_->Stop(); }

 private:
  explicit TestServer(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  std::unique_ptr<server::LabServer> server_;
};

// The one device `server` knows, as `memfleet devices` gets it; an empty summary (and a test failure)
// when it knows none or several.
inline v1::DeviceSummary OnlyDevice(const TestServer& server) {
  auto stub = v1::QueryService::NewStub(grpc::CreateChannel(server.target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  v1::ListDevicesRequest req;
  v1::ListDevicesResponse resp;
  grpc::Status s = stub->ListDevices(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.devices_size(), 1);
  return resp.devices_size() == 1 ? resp.devices(0) : v1::DeviceSummary();
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_TEST_SERVER_H_
