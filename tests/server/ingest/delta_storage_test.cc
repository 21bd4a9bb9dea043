// Delta storage of raw captures (CaptureIngestor + DeltaKeyframes + the store on a real SQLite file, then
// re-accounting): which captures are stored whole and which as deltas, that every delta decodes back to
// its exact capture, and the storage target of docs/performance.md — raw captures stored in at most 5%
// of their size.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/capture_codec.h"
#include "server/ingest/capture_ingestor.h"
#include "server/history/reaccount.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/load_tree.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/temp_dir.h"

namespace memfleet::server {
namespace delta_storage_test {
namespace {

constexpr char kDevice[] = "sim-qcom-101";  // the device id of the qcom-sm8450 sample's capture.json

class DeltaStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    absl::StatusOr<std::unique_ptr<storage::Store>> s = storage::OpenSqliteStore(dir_.path() + "/memfleet.db");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    sample_ = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree").c_str());
    ASSERT_GT(sample_.size(), 100u);
  }

  // Ingests the sample `minutes` later as capture `seq`; true when it was acked.
  bool IngestLater(CaptureIngestor& ingestor, int seq, const std::string& device = kDevice) {
    AssembledCapture a;
    a.device_id = device;
    a.capture_id = testing::CaptureId(device, seq);
    char at[48];  // the store's form, as AgentStream hands the time over
    std::snprintf(at, sizeof(at), "2026-11-30T%02d:%02d:00.000Z", 8 + seq / 60, seq % 60);
    a.captured_at = at;
    a.capture = testing::Later(sample_, seq);
    if (device != kDevice) a.capture.AddFile("capture.json", "{\"format\": 1, \"device_id\": \"" + device + "\"}\n");
    v1::ServerMessage m = ingestor.Ingest(std::move(a));
    EXPECT_TRUE(m.has_ack()) << m.DebugString();
    return m.has_ack();
  }

  // Rounds [first, last) of a two-device farm: bench-a takes seq 2r, bench-b 2r+1.
  void IngestRounds(CaptureIngestor& ingestor, int first, int last) {
    for (int round = first; round < last; ++round) {
      ASSERT_TRUE(IngestLater(ingestor, 2 * round, "bench-a"));
      ASSERT_TRUE(IngestLater(ingestor, 2 * round + 1, "bench-b"));
    }
  }

  storage::Store::RawCapture Raw(const std::string& device, int seq) {
    absl::StatusOr<std::optional<storage::Store::RawCapture>> raw =
        store_->GetRawCapture(testing::CaptureId(device, seq));
    EXPECT_TRUE(raw.ok() && raw->has_value()) << testing::CaptureId(device, seq);
    return raw.ok() && raw->has_value() ? **raw : storage::Store::RawCapture();
  }

  testing::TempDir dir_{"memfleet-delta"};
  std::unique_ptr<storage::Store> store_;
  capture::Capture sample_;
};

TEST_F(DeltaStorageTest, OneCaptureInKeyframeEveryIsWholeAndTheOthersAreDeltasOfIt) {
  DeltaOptions delta;
  delta.keyframe_every = 4;
  CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
  for (int seq = 0; seq < 9; ++seq) ASSERT_TRUE(IngestLater(ingestor, seq));
  for (int seq = 0; seq < 9; ++seq) {
    storage::Store::RawCapture raw = Raw(kDevice, seq);
    const int keyframe = seq - seq % 4;
    if (seq % 4 == 0) {
      EXPECT_EQ(raw.raw_codec, wire::kStoredCodec) << seq;
      EXPECT_EQ(raw.raw_base, "") << seq;
    } else {
      EXPECT_EQ(raw.raw_codec, wire::kDeltaCodec) << seq;
      EXPECT_EQ(raw.raw_base, testing::CaptureId(kDevice, keyframe)) << seq;
      // A delta of a capture that moved a few numbers is a small fraction of its whole blob.
      EXPECT_LT(raw.raw_blob.size() * 10, Raw(kDevice, keyframe).raw_blob.size()) << seq;
    }
  }
}

TEST_F(DeltaStorageTest, EveryDeltaDecodesToItsCaptureSoReaccountingGivesTheSameReports) {
  CaptureIngestor ingestor(*store_, nullptr);
  std::vector<std::string> reports;
  for (int seq = 0; seq < 6; ++seq) {
    ASSERT_TRUE(IngestLater(ingestor, seq));
    absl::StatusOr<std::optional<storage::StoredReport>> r =
        store_->GetReportByCapture(testing::CaptureId(kDevice, seq));
    ASSERT_TRUE(r.ok() && r->has_value());
    reports.push_back((*r)->report_json);
  }
  ASSERT_NE(reports[1], reports[2]) << "the captures must differ, or a wrong decode would go unseen";
  EXPECT_EQ(Raw(kDevice, 5).raw_codec, wire::kDeltaCodec);

  // The decoded capture is the one ingested, byte for byte.
  absl::StatusOr<std::optional<storage::Store::RawCapture>> keyframe = store_->GetRawCapture(Raw(kDevice, 5).raw_base);
  ASSERT_TRUE(keyframe.ok() && keyframe->has_value());
  absl::StatusOr<std::string> keyframe_bytes =
      wire::DecompressStoredCapture((*keyframe)->raw_codec, (*keyframe)->raw_blob);
  ASSERT_TRUE(keyframe_bytes.ok()) << keyframe_bytes.status();
  absl::StatusOr<capture::Capture> decoded =
      wire::DecodeStoredCapture(wire::kDeltaCodec, Raw(kDevice, 5).raw_blob, *keyframe_bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  capture::Capture want = testing::Later(sample_, 5);
  ASSERT_EQ(decoded->size(), want.size());
  for (const auto& [path, node] : want.nodes()) {
    const capture::Node* got = decoded->Find(path);
    ASSERT_NE(got, nullptr) << path;
    EXPECT_TRUE(got->kind == node.kind && got->content == node.content) << path;
  }

  absl::StatusOr<ReaccountResult> result = ReaccountCaptures(*store_, "");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->reaccounted, 6u);
  EXPECT_EQ(result->failed, 0u) << (result->failures.empty() ? "" : result->failures[0]);
  for (int seq = 0; seq < 6; ++seq) {
    absl::StatusOr<std::optional<storage::StoredReport>> r =
        store_->GetReportByCapture(testing::CaptureId(kDevice, seq));
    ASSERT_TRUE(r.ok() && r->has_value());
    EXPECT_EQ((*r)->report_json, reports[static_cast<size_t>(seq)]) << seq;
  }
}

// The storage target: "raw captures compressed to at most 5% of their size".
TEST_F(DeltaStorageTest, StoredRawCapturesTakeAtMostFivePercentOfTheirSize) {
  CaptureIngestor ingestor(*store_, nullptr);  // the server's defaults
  for (int seq = 0; seq < 64; ++seq) ASSERT_TRUE(IngestLater(ingestor, seq));
  absl::StatusOr<storage::Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->captures, 64u);
  EXPECT_LE(static_cast<double>(stats->raw_blob_bytes), 0.05 * static_cast<double>(stats->raw_bytes))
      << stats->raw_blob_bytes << " of " << stats->raw_bytes << " bytes";
  // Whole, the same captures take about 10% (docs/performance.md): the deltas are what meets the target.
  EXPECT_GT(Raw(kDevice, 0).raw_blob.size() * 100, 5 * sample_.ContentBytes());
}

TEST_F(DeltaStorageTest, ACaptureUnlikeItsKeyframeIsStoredWholeAndBecomesTheKeyframe) {
  CaptureIngestor ingestor(*store_, nullptr);
  ASSERT_TRUE(IngestLater(ingestor, 0));
  ASSERT_TRUE(IngestLater(ingestor, 1));
  // The phone was reflashed with another vendor's build: nothing of the keyframe is left to reference.
  capture::Capture other = testing::LoadCapture(testing::TestData("captures/mtk-mt6989/tree").c_str());
  other.AddFile("capture.json", *sample_.FileContent("capture.json"));
  AssembledCapture a;
  a.device_id = kDevice;
  a.capture_id = testing::CaptureId(kDevice, 2);
  a.captured_at = "2026-11-30T09:00:00.000Z";
  a.capture = other;
  ASSERT_TRUE(ingestor.Ingest(std::move(a)).has_ack());
  sample_ = other;
  ASSERT_TRUE(IngestLater(ingestor, 3));
  EXPECT_EQ(Raw(kDevice, 1).raw_codec, wire::kDeltaCodec);
  EXPECT_EQ(Raw(kDevice, 2).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(Raw(kDevice, 3).raw_codec, wire::kDeltaCodec);
  EXPECT_EQ(Raw(kDevice, 3).raw_base, testing::CaptureId(kDevice, 2));
}

TEST_F(DeltaStorageTest, AfterARestartADevicesFirstCaptureIsWhole) {
  {
    CaptureIngestor ingestor(*store_, nullptr);
    ASSERT_TRUE(IngestLater(ingestor, 0));
    ASSERT_TRUE(IngestLater(ingestor, 1));
  }
  CaptureIngestor restarted(*store_, nullptr);
  ASSERT_TRUE(IngestLater(restarted, 2));
  ASSERT_TRUE(IngestLater(restarted, 3));
  EXPECT_EQ(Raw(kDevice, 2).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(Raw(kDevice, 3).raw_base, testing::CaptureId(kDevice, 2));
  absl::StatusOr<ReaccountResult> result = ReaccountCaptures(*store_, kDevice);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->reaccounted, 4u);
  EXPECT_EQ(result->failed, 0u);
}

// A farm captures in rounds: with plain LRU a budget one device short would evict each keyframe just
// before its device's next capture. Devices holding keyframes keep them; a new device without room even for
// its entry (a budget of one byte) stores whole.
TEST_F(DeltaStorageTest, ABudgetFullOfDevicesInUseLeavesANewDeviceWhole) {
  DeltaOptions delta;
  delta.cache_bytes = 1;  // room for the first keyframe only
  CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
  ASSERT_NO_FATAL_FAILURE(IngestRounds(ingestor, 0, 3));
  EXPECT_EQ(ingestor.keyframes().devices(), 1u);
  EXPECT_EQ(Raw("bench-a", 0).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(Raw("bench-a", 2).raw_codec, wire::kDeltaCodec);
  EXPECT_EQ(Raw("bench-a", 4).raw_codec, wire::kDeltaCodec);
  for (int seq : {1, 3, 5}) EXPECT_EQ(Raw("bench-b", seq).raw_codec, wire::kStoredCodec) << seq;

  DeltaOptions roomy;
  CaptureIngestor both(*store_, nullptr, nullptr, roomy);
  ASSERT_NO_FATAL_FAILURE(IngestRounds(both, 3, 5));
  EXPECT_EQ(both.keyframes().devices(), 2u);
  EXPECT_EQ(Raw("bench-a", 8).raw_codec, wire::kDeltaCodec);
  EXPECT_EQ(Raw("bench-b", 9).raw_codec, wire::kDeltaCodec);
  EXPECT_GT(both.keyframes().memory_bytes(), 0u);
}

// A fleet larger than the budget: the devices keep their keyframes' ids, and those whose digest has no
// room read their keyframe back from the store for each capture, so they still store deltas.
TEST_F(DeltaStorageTest, ADeviceWithoutRoomForItsDigestStillStoresDeltasAgainstItsKeyframeReadBack) {
  DeltaOptions delta;
  delta.cache_bytes = 16 << 10;  // both devices' entries (a few hundred bytes each), no digest (~0.3 MB)
  CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
  ASSERT_NO_FATAL_FAILURE(IngestRounds(ingestor, 0, 4));
  EXPECT_EQ(ingestor.keyframes().devices(), 2u);
  EXPECT_EQ(ingestor.keyframes().digested_devices(), 0u);
  EXPECT_LE(ingestor.keyframes().memory_bytes(), size_t{16} << 10);
  EXPECT_EQ(Raw("bench-a", 0).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(Raw("bench-b", 1).raw_codec, wire::kStoredCodec);
  for (int seq : {2, 4, 6}) {
    EXPECT_EQ(Raw("bench-a", seq).raw_codec, wire::kDeltaCodec) << seq;
    EXPECT_EQ(Raw("bench-a", seq).raw_base, testing::CaptureId("bench-a", 0)) << seq;
  }
  for (int seq : {3, 5, 7}) EXPECT_EQ(Raw("bench-b", seq).raw_base, testing::CaptureId("bench-b", 1)) << seq;
  absl::StatusOr<ReaccountResult> result = ReaccountCaptures(*store_, "");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->reaccounted, 8u);
  EXPECT_EQ(result->failed, 0u) << (result->failures.empty() ? "" : result->failures[0]);
}

// A cold device's keyframe that no longer reads back (a rotten blob): its capture is stored whole and
// becomes its keyframe, nothing is refused.
TEST_F(DeltaStorageTest, AKeyframeThatCannotBeReadBackMakesTheNextCaptureWholeAndItsNewKeyframe) {
  DeltaOptions delta;
  delta.cache_bytes = 16 << 10;
  CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
  ASSERT_NO_FATAL_FAILURE(IngestRounds(ingestor, 0, 1));
  {
    absl::StatusOr<storage::SqliteDb> db = storage::SqliteDb::Open(dir_.path() + "/memfleet.db", SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok());
    absl::StatusOr<storage::Statement> st =
        db->Prepare("UPDATE captures SET raw_blob = X'28B52FFD00' WHERE capture_id = ?1");
    ASSERT_TRUE(st.ok());
    ASSERT_TRUE(st->BindText(1, testing::CaptureId("bench-a", 0)).ok());
    ASSERT_TRUE(st->StepDone().ok());
  }
  ASSERT_NO_FATAL_FAILURE(IngestRounds(ingestor, 1, 3));
  EXPECT_EQ(Raw("bench-a", 2).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(Raw("bench-a", 4).raw_base, testing::CaptureId("bench-a", 2));
  EXPECT_EQ(Raw("bench-b", 3).raw_base, testing::CaptureId("bench-b", 1));  // the other device is unaffected
}

TEST_F(DeltaStorageTest, AKeyframeUnusedForStaleAfterMakesRoomForAnotherDevice) {
  auto now = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  DeltaOptions delta;
  delta.cache_bytes = 1;
  delta.stale_after = std::chrono::hours(1);
  delta.clock = [now] { return *now; };
  CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
  ASSERT_TRUE(IngestLater(ingestor, 0, "bench-a"));
  ASSERT_TRUE(IngestLater(ingestor, 1, "bench-b"));  // bench-a's keyframe was used just now: no room
  *now += std::chrono::minutes(59);
  ASSERT_TRUE(IngestLater(ingestor, 2, "bench-b"));
  *now += std::chrono::minutes(2);  // bench-a gone for 61 minutes
  ASSERT_TRUE(IngestLater(ingestor, 3, "bench-b"));
  ASSERT_TRUE(IngestLater(ingestor, 4, "bench-b"));
  ASSERT_TRUE(IngestLater(ingestor, 5, "bench-a"));  // back: its keyframe went to bench-b
  EXPECT_EQ(Raw("bench-b", 1).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(Raw("bench-b", 2).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(Raw("bench-b", 3).raw_codec, wire::kStoredCodec);  // the new keyframe
  EXPECT_EQ(Raw("bench-b", 4).raw_codec, wire::kDeltaCodec);
  EXPECT_EQ(Raw("bench-b", 4).raw_base, testing::CaptureId("bench-b", 3));
  EXPECT_EQ(Raw("bench-a", 5).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(ingestor.keyframes().devices(), 1u);
}

// A device back after half a day (away, or captured by another server on the same database meanwhile)
// starts a new keyframe: the raw window may have dropped the old one's raw text since its last delta here.
TEST_F(DeltaStorageTest, AKeyframeIdleForHalfADayIsNotUsedAgain) {
  auto now = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  DeltaOptions delta;
  delta.clock = [now] { return *now; };
  CaptureIngestor ingestor(*store_, nullptr, nullptr, delta);
  ASSERT_TRUE(IngestLater(ingestor, 0));
  ASSERT_TRUE(IngestLater(ingestor, 1));
  *now += std::chrono::hours(11);
  ASSERT_TRUE(IngestLater(ingestor, 2));  // 11 hours: still a delta of capture 0
  *now += std::chrono::hours(12);
  ASSERT_TRUE(IngestLater(ingestor, 3));  // 12 hours since its keyframe's last use: whole
  ASSERT_TRUE(IngestLater(ingestor, 4));
  EXPECT_EQ(Raw(kDevice, 1).raw_base, testing::CaptureId(kDevice, 0));
  EXPECT_EQ(Raw(kDevice, 2).raw_base, testing::CaptureId(kDevice, 0));
  EXPECT_EQ(Raw(kDevice, 3).raw_codec, wire::kStoredCodec);
  EXPECT_EQ(Raw(kDevice, 3).raw_base, "");
  EXPECT_EQ(Raw(kDevice, 4).raw_base, testing::CaptureId(kDevice, 3));
}

TEST_F(DeltaStorageTest, KeyframeEveryOneStoresEveryCaptureWhole) {
  DeltaOptions off;
  off.enabled = false;
  CaptureIngestor ingestor(*store_, nullptr, nullptr, off);
  for (int seq = 0; seq < 3; ++seq) ASSERT_TRUE(IngestLater(ingestor, seq));
  for (int seq = 0; seq < 3; ++seq) EXPECT_EQ(Raw(kDevice, seq).raw_codec, wire::kStoredCodec);
  DeltaOptions every_one;
  every_one.keyframe_every = 1;
  CaptureIngestor ones(*store_, nullptr, nullptr, every_one);
  for (int seq = 3; seq < 6; ++seq) ASSERT_TRUE(IngestLater(ones, seq));
  for (int seq = 3; seq < 6; ++seq) EXPECT_EQ(Raw(kDevice, seq).raw_codec, wire::kStoredCodec);
}

// A keyframe whose blob rotted on disk fails its deltas with a message naming it; the rest re-accounts.
TEST_F(DeltaStorageTest, ACorruptKeyframeFailsOnlyItselfAndItsDeltas) {
  CaptureIngestor ingestor(*store_, nullptr);
  for (int seq = 0; seq < 3; ++seq) ASSERT_TRUE(IngestLater(ingestor, seq));
  CaptureIngestor other(*store_, nullptr);
  ASSERT_TRUE(IngestLater(other, 0, "bench-a"));
  ASSERT_TRUE(IngestLater(other, 1, "bench-a"));
  {
    absl::StatusOr<storage::SqliteDb> db = storage::SqliteDb::Open(dir_.path() + "/memfleet.db", SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok());
    absl::StatusOr<storage::Statement> st =
        db->Prepare("UPDATE captures SET raw_blob = X'28B52FFD00' WHERE capture_id = ?1");
    ASSERT_TRUE(st.ok());
    ASSERT_TRUE(st->BindText(1, testing::CaptureId(kDevice, 0)).ok());
    ASSERT_TRUE(st->StepDone().ok());
  }
  absl::StatusOr<ReaccountResult> result = ReaccountCaptures(*store_, "");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->reaccounted, 2u);  // bench-a's two
  EXPECT_EQ(result->failed, 3u);
  bool names_keyframe = false;
  for (const std::string& f : result->failures) {
    names_keyframe |= f.find("keyframe " + testing::CaptureId(kDevice, 0)) != std::string::npos;
  }
  EXPECT_TRUE(names_keyframe) << (result->failures.empty() ? "" : result->failures.back());
}

}  // namespace
}  // namespace delta_storage_test
}  // namespace memfleet::server
