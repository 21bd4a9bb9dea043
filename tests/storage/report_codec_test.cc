// Reports stored compressed (storage/report_codec.h, schema version 14): a real report of each sample
// device survives the round trip byte for byte and is stored smaller than plain zstd would; corrupt or
// foreign frames are DataLoss, never a wrong report; and a database written before version 14 migrates
// with every stored report rewritten and every report query answering the JSON it stored.
#include "storage/report_codec.h"

#include <sqlite3.h>
#include <zstd.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/report_json.h"
#include "accounting/account.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/load_tree.h"
#include "tests/support/moving_capture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::storage {
namespace {

// The engine's report of a sample tree as the server stores it (ReportToJson, no indent).
std::string SampleReportJson(const std::string& tree) {
  report::Report r = accounting::Account(testing::LoadTree(testing::TestData("captures/" + tree + "/tree")));
  return report::ReportToJson(r, -1);
}

std::string PlainZstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

class SampleReportTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SampleReportTest, RoundTripsAndBeatsPlainZstd) {
  const std::string json = SampleReportJson(GetParam());
  ASSERT_GT(json.size(), 4000u) << "the sample must give a whole report";
  const std::string blob = CompressReportJson(json);
  absl::StatusOr<std::string> back = DecompressReportJson(blob);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, json);
  EXPECT_EQ(ZSTD_getDictID_fromFrame(blob.data(), blob.size()), kReportDictionaryId);
  // The dictionary holds what every report repeats (keys, warnings, process names): even for a device
  // it was not trained on, the frame is smaller than plain zstd's.
  EXPECT_LT(blob.size(), PlainZstd(json).size());
}

TEST_P(SampleReportTest, ATrainedDeviceIsStoredInHalfOfPlainZstd) {
  // The built-in dictionary predates the per-process heaps, App Summary and DMA-BUF by exporter and the
  // figures added beside them: trained on that shape it stored these devices' reports in a third of plain
  // zstd. Held to the shape of a periodic capture (no heaps), it still stores them in under half; a report
  // with heaps only beats plain zstd (RoundTripsAndBeatsPlainZstd) until a dictionary trained on today's
  // reports is added under a new id (scripts/train-report-dictionary).
  report::Report r =
      accounting::Account(testing::LoadTree(testing::TestData("captures/" + std::string(GetParam()) + "/tree")));
  for (auto& [pid, p] : r.processes) {
    p.heaps.reset();
    p.app_summary.reset();
    p.dma_by_exporter_kb.reset();
  }
  const std::string json = report::ReportToJson(r, -1);
  const bool trained = std::string(GetParam()) != "legacy-419" && std::string(GetParam()) != "mali-rockchip";
  if (!trained) GTEST_SKIP() << "not among the dictionary's training devices";
  const size_t blob = CompressReportJson(json).size();
  EXPECT_LT(blob * 2, PlainZstd(json).size()) << blob << " vs " << PlainZstd(json).size();
}

// Schema version 16: a delta capture's report is stored against its keyframe's report. Ten minutes
// later, with the numbers moved (moving_capture.h), the frame is a fraction of the dictionary's.
TEST_P(SampleReportTest, AReportTenMinutesLaterIsStoredAgainstTheFirstInASixthOfItsDictionaryFrame) {
  const capture::Capture first = testing::LoadTree(testing::TestData(std::string("captures/") + GetParam() + "/tree"));
  const std::string base_json = report::ReportToJson(accounting::Account(first), -1);
  const std::string json = report::ReportToJson(accounting::Account(testing::Later(first, 10)), -1);
  ASSERT_NE(json, base_json);
  const std::string blob = CompressReportJsonAgainst(json, base_json);
  absl::StatusOr<std::string> back = DecompressReportJsonAgainst(blob, base_json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, json);
  EXPECT_EQ(ZSTD_getDictID_fromFrame(blob.data(), blob.size()), 0u);
  EXPECT_LT(blob.size() * 6, CompressReportJson(json).size())
      << blob.size() << " vs " << CompressReportJson(json).size();
  // Read as a frame of its own, or a dictionary frame read as one against a base: DataLoss, no report.
  EXPECT_EQ(DecompressReportJson(blob).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecompressReportJsonAgainst(CompressReportJson(json), base_json).status().code(),
            absl::StatusCode::kDataLoss);
  // Against another base (say the keyframe's report replaced and its dependants not re-encoded): DataLoss.
  EXPECT_EQ(DecompressReportJsonAgainst(blob, base_json.substr(100)).status().code(), absl::StatusCode::kDataLoss);
  std::string truncated = blob.substr(0, blob.size() - 1);
  EXPECT_EQ(DecompressReportJsonAgainst(truncated, base_json).status().code(), absl::StatusCode::kDataLoss);
}

// What level 3 (the codec's level for these frames until it chose level 1) stores for `json` against
// `base_json`, with the same checksum and the base as the same prefix.
std::string Level3AgainstBase(const std::string& json, const std::string& base_json) {
  std::string out(ZSTD_compressBound(json.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_refPrefix(cctx, base_json.data(), base_json.size());
  const size_t n = ZSTD_compress2(cctx, out.data(), out.size(), json.data(), json.size());
  ZSTD_freeCCtx(cctx);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

// On a phone in use every figure moves between two captures; the frames of such reports are most of what
// a capture keeps past the raw window, so the codec's level is chosen for them: at least a tenth smaller
// than level 3's on every sample device (about a fifth on qcom-sm8450).
TEST_P(SampleReportTest, AReportWhoseEveryFigureMovedIsStoredAgainstItsBaseInUnderNineTenthsOfLevel3sFrame) {
  const capture::Capture first = testing::LoadTree(testing::TestData(std::string("captures/") + GetParam() + "/tree"));
  const std::string base_json = report::ReportToJson(accounting::Account(first), -1);
  const std::string json =
      report::ReportToJson(accounting::Account(testing::Churned(first, 1, testing::Churn::kEverything)), -1);
  ASSERT_NE(json, base_json);
  const std::string blob = CompressReportJsonAgainst(json, base_json);
  absl::StatusOr<std::string> back = DecompressReportJsonAgainst(blob, base_json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, json);
  const size_t level_3 = Level3AgainstBase(json, base_json).size();
  EXPECT_LT(blob.size() * 10, level_3 * 9) << blob.size() << " vs level 3's " << level_3;
}

// The five devices the dictionary was trained on (scripts/train-report-dictionary), and two it never saw.
INSTANTIATE_TEST_SUITE_P(Samples, SampleReportTest,
                         ::testing::Values("generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1",
                                           "legacy-419", "mali-rockchip"));

TEST(ReportCodecTest, APlainZstdFrameAndAnEmptyReportDecode) {
  absl::StatusOr<std::string> plain = DecompressReportJson(PlainZstd("{\"a\":1}"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*plain, "{\"a\":1}");
  absl::StatusOr<std::string> empty = DecompressReportJson(CompressReportJson(""));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(*empty, "");
}

TEST(ReportCodecTest, CorruptTruncatedAndForeignFramesAreDataLoss) {
  const std::string blob = CompressReportJson(SampleReportJson("qcom-sm8450"));
  std::string flipped = blob;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x5a);
  std::string foreign = blob;
  // The dictionary id sits after the 4-byte magic and the frame header descriptor (and no window byte
  // when single-segment); rather than parse it, compress with a dictionary of another id.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  const std::string other_dict = "{\"device\":{\"total_kb\":" + std::string(200, 'x');
  ZSTD_CDict* cdict = ZSTD_createCDict(other_dict.data(), other_dict.size(), 3);
  foreign.assign(ZSTD_compressBound(100), '\0');
  size_t n = ZSTD_compress_usingCDict(cctx, foreign.data(), foreign.size(), "{\"device\":1}", 12, cdict);
  ZSTD_freeCDict(cdict);
  ZSTD_freeCCtx(cctx);
  ASSERT_FALSE(ZSTD_isError(n));
  foreign.resize(n);
  for (const std::string& bad : {std::string(), std::string("{\"not\":\"zstd\"}"), blob.substr(0, blob.size() / 2)}) {
    EXPECT_EQ(DecompressReportJson(bad).status().code(), absl::StatusCode::kDataLoss) << bad.size();
  }
  // A flipped byte inside the literals can decode to other text of the same length (the frame has no
  // checksum): what is certain is that it never crashes or reads out of bounds (ASan), and fails as DataLoss.
  absl::StatusOr<std::string> r_flipped = DecompressReportJson(flipped);
  if (!r_flipped.ok()) {
    EXPECT_EQ(r_flipped.status().code(), absl::StatusCode::kDataLoss);
  }
  absl::StatusOr<std::string> r = DecompressReportJson(foreign);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
}

// ---- migration of a database written before version 14 ----

void ExecOrDie(SqliteDb& db, const std::string& sql) {
  absl::Status s = db.Exec(sql);
  ASSERT_TRUE(s.ok()) << s << " in " << sql.substr(0, 200);
}

std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text) {
    out += ch;
    if (ch == '\'') out += '\'';
  }
  return out + "'";
}

// Rows as the store wrote them at version 12: the report JSON in captures.report_json.
void InsertVersion12Capture(SqliteDb& db, const std::string& device, const std::string& id, const std::string& at,
                            const std::string& sweep, const std::string& build, const std::string& json) {
  ExecOrDie(db, "INSERT INTO devices (device_id, last_seen_at) VALUES (" + Quoted(device) + ", " + Quoted(at) +
                    ") ON CONFLICT (device_id) DO NOTHING");
  ExecOrDie(db,
            "INSERT INTO captures (capture_id, device_id, captured_at, sweep_id, raw_codec, report_json, raw_blob, "
            "build_fingerprint) VALUES (" +
                Quoted(id) + ", " + Quoted(device) + ", " + Quoted(at) + ", " + Quoted(sweep) + ", 'zstd+proto', " +
                Quoted(json) + ", x'00', " + Quoted(build) + ")");
  ExecOrDie(db, "INSERT INTO device_reports (capture_id, device_id, captured_at, platform, total_kb) VALUES (" +
                    Quoted(id) + ", " + Quoted(device) + ", " + Quoted(at) + ", 'qcom', 1000)");
  ExecOrDie(db, "INSERT INTO process_reports (capture_id, device_id, captured_at, pid, name, total_kb) VALUES (" +
                    Quoted(id) + ", " + Quoted(device) + ", " + Quoted(at) + ", 42, 'surfaceflinger', 777)");
}

TEST(ReportMigrationTest, AVersion12DatabaseMigratesAndEveryReportQueryAnswersTheSame) {
  testing::TempDir dir("memfleet-report-migration");
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.path() + "/memfleet.db";
  const std::string qcom = SampleReportJson("qcom-sm8450");
  const std::string mtk = SampleReportJson("mtk-mt6989");
  {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok()) << db.status();
    ExecOrDie(*db,
              "CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT; INSERT INTO schema_version VALUES (12)");
    for (int v = 0; v < 12; ++v) ExecOrDie(*db, Migrations()[static_cast<size_t>(v)]);
    InsertVersion12Capture(*db, "dev-a", "dev-a-1", "2026-11-30T08:00:00.000Z", "", "build-1", mtk);
    InsertVersion12Capture(*db, "dev-a", "dev-a-2", "2026-11-30T08:10:00.000Z", "sweep-1", "build-2", qcom);
    InsertVersion12Capture(*db, "dev-b", "dev-b-1", "2026-11-30T08:05:00.000Z", "sweep-1", "build-1", "{}");
  }
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status();

  auto json_of = [](const absl::StatusOr<std::optional<StoredReport>>& r) {
    EXPECT_TRUE(r.ok() && r->has_value()) << (r.ok() ? "none" : r.status().ToString());
    return r.ok() && r->has_value() ? (*r)->report_json : std::string("<missing>");
  };
  EXPECT_EQ(json_of((*store)->GetReport("dev-a", "")), qcom);
  EXPECT_EQ(json_of((*store)->GetReport("dev-a", "2026-11-30T08:05:00Z")), mtk);
  EXPECT_EQ(json_of((*store)->GetReportByCapture("dev-a-1")), mtk);
  EXPECT_EQ(json_of((*store)->GetReportByCapture("dev-b-1")), "{}");

  absl::StatusOr<std::vector<StoredReport>> sweep = (*store)->LatestReportsOfSweep("sweep-1");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  ASSERT_EQ(sweep->size(), 2u);
  EXPECT_EQ((*sweep)[0].report_json, qcom);
  EXPECT_EQ((*sweep)[1].report_json, "{}");
  absl::StatusOr<std::vector<StoredReport>> since = (*store)->LatestReportsSince("");
  ASSERT_TRUE(since.ok()) << since.status();
  ASSERT_EQ(since->size(), 2u);
  EXPECT_EQ((*since)[0].report_json, qcom);
  absl::StatusOr<std::vector<StoredReport>> per_build = (*store)->LatestReportsPerBuild("");
  ASSERT_TRUE(per_build.ok()) << per_build.status();
  ASSERT_EQ(per_build->size(), 3u);
  EXPECT_EQ((*per_build)[0].build_fingerprint, "build-1");
  EXPECT_EQ((*per_build)[0].report_json, mtk);
  EXPECT_EQ((*per_build)[1].report_json, qcom);
  // The figures the migration did not touch answer as before.
  absl::StatusOr<std::vector<HistoryRow>> trend =
      (*store)->ProcessHistory("dev-a", "surfaceflinger", "total_kb", "", 0);
  ASSERT_TRUE(trend.ok()) << trend.status();
  ASSERT_EQ(trend->size(), 2u);
  EXPECT_EQ((*trend)[1].value_kb, 777);
  store->reset();

  // The JSON left captures: what remains there is the empty default.
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<Statement> st = db->Prepare("SELECT COUNT(*) FROM captures WHERE report_json != ''");
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_EQ(*st->Step(), StepResult::kRow);
  EXPECT_EQ(st->ColumnInt64(0), 0);
}

TEST(ReportMigrationTest, ACorruptStoredReportIsDataLossNamingItsCapture) {
  testing::TempDir dir("memfleet-report-corrupt");
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.path() + "/memfleet.db";
  {
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
    ASSERT_TRUE(store.ok()) << store.status();
    CaptureRecord c;
    c.capture_id = "dev-a-1";
    c.device_id = "dev-a";
    c.captured_at = "2026-11-30T08:00:00Z";
    c.raw_codec = "zstd+proto";
    c.raw_blob = "x";
    c.report_json = SampleReportJson("qcom-sm8450");
    ASSERT_TRUE((*store)->PutCapture(c).ok());
  }
  {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok()) << db.status();
    ExecOrDie(*db, "UPDATE report_blobs SET report_zstd = substr(report_zstd, 1, 20)");
  }
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::optional<StoredReport>> r = (*store)->GetReport("dev-a", "");
  ASSERT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_NE(r.status().message().find("dev-a-1"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace memfleet::storage
