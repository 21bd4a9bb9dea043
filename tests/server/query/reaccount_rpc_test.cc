// The Reaccount RPC (QueryService::Reaccount) on a history the raw window has thinned, on both backends (a
// real SQLite file, a database on a real PostgreSQL — where the RPC walks a shared run's claims): a real
// LabServer on 127.0.0.1:0 answers how many captures it re-accounted and how many it skipped because their
// raw text is gone (ReaccountResponse::skipped_raw_dropped), and the counts are the ones the history was
// built with.
//
// The history: captures stored whole (no deltas), one every 12 hours per device. farm-0 and farm-1 have 10
// (s = 0..9), farm-2 stopped after 3 (s = 0..2); "now" is 119.5 hours after the first. A raw window of 2
// days (48 h) drops the raw text of a capture at least 48 h old — s <= 5, as 119.5 - 12 * 6 = 47.5 h (the
// minutes between devices aside) — except its device's latest keyframe (the server may still store deltas
// against it): farm-2's s = 2 keeps its raw text. So 6 + 6 + 2 = 14 dropped and 4 + 4 + 1 = 9 kept.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/utc_time.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "server/history/retention.h"
#include "server/ingest/capture_ingestor.h"
#include "server/lab_server.h"
#include "storage/backends/open_store.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/store_backends.h"
#include "tests/support/test_paths.h"

namespace memfleet::server::reaccount_rpc_test {
namespace {

constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
// 2026-11-09T00:00:00Z: the first capture.
constexpr int64_t kStartMs = int64_t{1'794'182'400'000};
constexpr int64_t kNowMs = kStartMs + 119 * kHourMs + 30 * kMinuteMs;
const char* const kDevices[] = {"farm-0", "farm-1", "farm-2"};
constexpr int kCapturesOf[] = {10, 10, 3};
// From the file comment: per device, the captures whose raw text the 2-day window drops.
constexpr uint64_t kDroppedOf[] = {6, 6, 2};
constexpr uint64_t kDropped = 14;
constexpr uint64_t kKept = 9;

class ReaccountRpcTest : public testing::SqlStoreOnBackendTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SqlStoreOnBackendTest::SetUp());
    const capture::Capture sample = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    ASSERT_NE(sample.FileContent("capture.json"), nullptr);
    DeltaOptions whole;
    whole.enabled = false;  // every capture its own keyframe: the window's rule is the file comment's
    CaptureIngestor ingestor(*store_, nullptr, nullptr, whole);
    for (int d = 0; d < 3; ++d) {
      for (int seq = 0; seq < kCapturesOf[d]; ++seq) {
        AssembledCapture a;
        a.device_id = kDevices[d];
        a.capture_id = testing::CaptureId(kDevices[d], seq);
        const int64_t at_ms = kStartMs + seq * 12 * kHourMs + d * 7 * kMinuteMs;
        a.captured_at = FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(at_ms)));
        a.capture = testing::Churned(sample, seq * 3 + d, testing::Churn::kEverything);
        nlohmann::json header = nlohmann::json::parse(*sample.FileContent("capture.json"));
        header["device_id"] = a.device_id;
        header["captured_at"] = a.captured_at;
        a.capture.AddFile("capture.json", header.dump());
        ASSERT_TRUE(ingestor.Ingest(std::move(a)).has_ack()) << kDevices[d] << " " << seq;
      }
    }
    RetentionPolicy policy;
    policy.raw = std::chrono::hours(48);
    absl::StatusOr<RetentionRun> run = ApplyRetention(*store_, policy, kNowMs, RetentionOptions{});
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_TRUE(run->failures.empty()) << run->failures.front();
    ASSERT_EQ(run->raw_dropped, kDropped) << "the history is not the one the file comment describes";
    reports_ = Reports();
    ASSERT_EQ(reports_.size(), kDropped + kKept);

    LabServerOptions options;
    options.db_path = location_;
    options.listen = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<LabServer>> server = LabServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = v1::QueryService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Stop();
  }

  // Every stored report, by capture id.
  std::map<std::string, std::string> Reports() {
    std::map<std::string, std::string> reports;
    for (int d = 0; d < 3; ++d) {
      for (int seq = 0; seq < kCapturesOf[d]; ++seq) {
        const std::string id = testing::CaptureId(kDevices[d], seq);
        absl::StatusOr<std::optional<storage::StoredReport>> r = store_->GetReportByCapture(id);
        EXPECT_TRUE(r.ok() && r->has_value()) << id;
        if (r.ok() && r->has_value()) reports[id] = (*r)->report_json;
      }
    }
    return reports;
  }

  grpc::Status Reaccount(const std::string& device_id, v1::ReaccountResponse* response) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    v1::ReaccountRequest request;
    request.set_device_id(device_id);
    return stub_->Reaccount(&ctx, request, response);
  }

  std::map<std::string, std::string> reports_;  // after retention, before any re-accounting
  std::unique_ptr<LabServer> server_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

TEST_P(ReaccountRpcTest, TheResponseCountsTheCapturesReaccountedAndThoseBeyondTheRawWindow) {
  v1::ReaccountResponse all;
  grpc::Status s = Reaccount("", &all);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(all.failed(), 0u);
  EXPECT_EQ(all.reaccounted(), kKept);
  EXPECT_EQ(all.skipped_raw_dropped(), kDropped);
  // The engine has not changed: every report reads as before, re-accounted or skipped.
  EXPECT_EQ(Reports(), reports_);

  // One device: farm-2's latest capture, beyond the window but kept as its keyframe, is re-accounted.
  v1::ReaccountResponse one;
  s = Reaccount("farm-2", &one);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(one.failed(), 0u);
  EXPECT_EQ(one.reaccounted(), static_cast<uint64_t>(kCapturesOf[2]) - kDroppedOf[2]);
  EXPECT_EQ(one.skipped_raw_dropped(), kDroppedOf[2]);
  v1::ReaccountResponse other;
  s = Reaccount("farm-0", &other);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(other.reaccounted(), static_cast<uint64_t>(kCapturesOf[0]) - kDroppedOf[0]);
  EXPECT_EQ(other.skipped_raw_dropped(), kDroppedOf[0]);
  EXPECT_EQ(Reports(), reports_);
}

INSTANTIATE_TEST_SUITE_P(Backends, ReaccountRpcTest, testing::kBothBackends, testing::StoreBackendName);

}  // namespace
}  // namespace memfleet::server::reaccount_rpc_test
