// The store's hot queries on a fleet-sized database: 1,000 devices x 30 days x one capture an hour (device
// 0 has a whole year, every 10 minutes), 30-60 processes per capture — the one-process trend, the 1-year
// trend, the latest-report-per-device fleet views (`memfleet fleet`) and the device list (the dashboard's
// fleet page, `memfleet devices`), run through the store (storage/sql_store.h) exactly as the server runs
// them, on SQLite (`/postgres:0`) and on the same history in PostgreSQL (`/postgres:1`), in the same run.
//
//   bin/query_benchmark                    # full size; builds the database once (minutes), then reuses it
//   bin/query_benchmark --quick            # CI: 10 devices x 2 days every 10 min (device 0: 7 days), seconds
//   bin/query_benchmark --db_dir=/var/tmp  # where the cached database lives (default $TMPDIR or /tmp)
//   bin/query_benchmark --devices=100 --interval_s=600   # another size: the earlier 100 devices every 10 min
//   bin/query_benchmark --no_postgres      # SQLite only
//
// PostgreSQL: a server this binary starts (tests/support/postgres_server.h: a temporary folder, fsync off,
// stopped at exit), the schema the store creates, the same rows (the captures generated inside it with
// generate_series, the reports with their process blocks copied from the SQLite file), then VACUUM ANALYZE
// (as autovacuum would after a bulk load). It is built anew at every run (about a minute at full size).
//
// The database: dev-000 holds 365 days every 10 minutes (52,560 captures, the 1-year trend's points),
// dev-001..dev-999 the last 30 of them hourly (720 each): 771,840 captures and ~34.7 M process samples
// (1.26 GB). An hour, not the 10 minutes of a lab, keeps the build to a few minutes on two cores; the fleet
// queries read one report per device whatever the cadence. It is generated with bulk INSERT ... SELECT
// inside SQLite (one transaction per device) into the store's own schema, then opened as the server opens it.
// Raw blobs are a shared 4-byte placeholder and report_json is "{}": the queries read neither. The file is
// named by schema version, size and cadence and built under a temporary name, so an interrupted build is
// redone and a schema change builds a new one. No ANALYZE: the plans are the ones a fresh server database gets.
//
// Baselines, in the same run: BM_PointLookup (one capture row by primary key — the cost of one index probe)
// and BM_IndexRangeCount (COUNT(*) over the same index range the trend reads — reading the rows with no
// result building); the trend's ratio to them shows what the store adds on top of SQLite.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "storage/sqlite/migration_functions.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_store.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/postgres_server.h"

namespace memfleet::storage {
namespace {

constexpr int64_t kEpoch20250101 = 1735689600;  // the year device's first capture
constexpr int kMinProcesses = 30;
constexpr int kProcessSpread = 31;  // 30..60 processes per capture

struct Size {
  int devices = 1000;
  int days = 30;
  int year_days = 365;        // dev-000's history
  int64_t interval_s = 3600;  // the other devices' cadence
};

Size g_size;
std::string g_db_dir;

const char* const kNames[] = {"system_server",
                              "surfaceflinger",
                              "com.android.systemui",
                              "com.android.launcher3",
                              "com.google.android.gms",
                              "com.google.android.gms.persistent",
                              "com.android.phone",
                              "android.hardware.graphics.composer@2.4-service",
                              "media.codec",
                              "media.swcodec",
                              "cameraserver",
                              "audioserver",
                              "com.android.bluetooth",
                              "com.android.nfc",
                              "com.android.se",
                              "com.google.android.inputmethod.latin",
                              "com.android.chrome",
                              "com.google.android.youtube",
                              "com.whatsapp",
                              "com.instagram.android",
                              "com.android.vending",
                              "com.google.android.apps.maps",
                              "com.spotify.music",
                              "com.netflix.mediaclient",
                              "com.google.android.apps.photos",
                              "logd",
                              "lmkd",
                              "netd",
                              "zygote64",
                              "zygote",
                              "installd",
                              "vold",
                              "statsd",
                              "keystore2",
                              "gpuservice",
                              "com.android.settings",
                              "com.google.android.apps.messaging",
                              "com.android.providers.media.module",
                              "com.google.android.webview",
                              "com.android.camera",
                              "com.tencent.mm",
                              "com.facebook.katana",
                              "com.zhiliaoapp.musically",
                              "com.google.android.apps.nexuslauncher",
                              "com.android.networkstack.process",
                              "com.android.wifi.resources",
                              "com.qualcomm.qti.services",
                              "vendor.qti.hardware.display.composer-service",
                              "android.hardware.sensors",
                              "com.google.android.tts",
                              "com.google.android.googlequicksearchbox",
                              "com.android.deskclock",
                              "com.android.contacts",
                              "com.android.dialer",
                              "com.android.email",
                              "com.microsoft.teams",
                              "com.slack",
                              "org.telegram.messenger",
                              "com.amazon.mShop.android.shopping",
                              "com.ubercab"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) >= kMinProcesses + kProcessSpread - 1, "enough names");

std::string DeviceId(int d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "dev-%03d", d);
  return buf;
}

// The year device is captured every 10 minutes whatever the others' cadence, so that its trend reads
// 52,560 points as the 1-year target was set for.
constexpr int64_t kYearIntervalSeconds = 600;
int64_t IntervalOf(int d) { return d == 0 ? kYearIntervalSeconds : g_size.interval_s; }
int64_t CapturesOf(int d) { return (d == 0 ? g_size.year_days : g_size.days) * 86400 / IntervalOf(d); }
int64_t LastCapture() { return kEpoch20250101 + (CapturesOf(0) - 1) * kYearIntervalSeconds; }

// The first capture time of device d: every device ends at the same time (the year device's last capture).
int64_t FirstCaptureOf(int d) { return LastCapture() - (CapturesOf(d) - 1) * IntervalOf(d); }

std::string Rfc3339(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm {};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The generated history's shape, in the file's name beside the schema version: a file of another
// generation is built anew. 2: a sweep a day over the whole fleet.
constexpr int kGeneration = 2;

std::string DbPath() {
  std::string dir = g_db_dir;
  if (dir.empty()) {
    const char* tmp = getenv("TMPDIR");
    dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  return absl::StrCat(dir, "/memfleet-query-bench-v", LatestSchemaVersion(), "-g", kGeneration, "-", g_size.devices,
                      "x", g_size.days, "d-", g_size.year_days, "y-", g_size.interval_s, "s.db");
}

// One device's captures, device reports and process rows, generated inside SQLite from a counter.
// ?1 device id, ?2 first capture (unix seconds), ?3 capture count, ?4 device number.
constexpr char kSeq[] = "WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?3) ";
constexpr char kTimeOfI[] = "strftime('%Y-%m-%dT%H:%M:%SZ', ?2 + i * ?5, 'unixepoch')";
constexpr char kIdOfI[] = "printf('%s-%06d', ?1, i)";
// A sweep every day at noon over the whole fleet: each device's first capture of the 12:00 hour answered
// sweep-YYYY-MM-DD; the others are periodic.
constexpr char kSweepOfI[] =
    "CASE WHEN (?2 + i * ?5) % 86400 BETWEEN 43200 AND 43199 + ?5 THEN 'sweep-' || strftime('%Y-%m-%d', ?2 + i * ?5, "
    "'unixepoch') ELSE '' END";

std::vector<std::string> DeviceInserts() {
  return {
      absl::StrCat(kSeq,
                   "INSERT INTO captures (capture_id, device_id, captured_at, received_at, sweep_id, raw_codec, "
                   "raw_bytes, report_json, raw_blob) SELECT ",
                   kIdOfI, ", ?1, ", kTimeOfI, ", ", kTimeOfI, ", ", kSweepOfI,
                   ", 'zstd+proto', 180000, '{}', x'28b52ffd' FROM seq"),
      absl::StrCat(kSeq,
                   "INSERT INTO device_reports (capture_id, device_id, captured_at, platform, ddr_kb, mem_total_kb, "
                   "kernel_kb, processes_kb, total_kb) SELECT ",
                   kIdOfI, ", ?1, ", kTimeOfI,
                   ", 'qcom', 16777216, 11800000, 900000 + i % 977, 7000000 + (i * 7919) % 500000, "
                   "9000000 + (i * 7919) % 500000 FROM seq"),
      // A capture's process figures are one block in its report row (schema version 17): the rows are
      // generated into bench_samples, then each capture's are packed by the migration's aggregate.
      absl::StrCat(
          kSeq,
          "INSERT INTO bench_samples (capture_id, name_no, pid, pss_kb, swap_pss_kb, gfxdev_kb, gl_kb, dma_kb, "
          "native_graphics_kb, non_graphics_kb, graphics_dma_kb, total_kb) SELECT ",
          kIdOfI,
          ", "
          "(SELECT name_no FROM process_names WHERE name = n.name), 1000 + n.slot * 37 + ?4, "
          "20000 + (n.slot * 7919 + i * 31) % 400000, (i * 13 + n.slot) % 9000, NULL, "
          "(n.slot * 104729 + i) % 60000, (n.slot * 31 + i * 7) % 90000, NULL, "
          "15000 + (n.slot * 7919 + i * 31) % 300000, (n.slot * 31 + i * 7) % 40000, "
          "25000 + (n.slot * 7919 + i * 37) % 500000 FROM seq JOIN bench_names AS n ON n.slot < ",
          kMinProcesses, " + (i * 7 + ?4) % ", kProcessSpread),
      "UPDATE device_reports SET process_count = b.n, processes = b.block FROM (SELECT capture_id, COUNT(*) AS n, "
      "memfleet_process_block(name_no, pid, total_kb, pss_kb, swap_pss_kb, gfxdev_kb, gl_kb, dma_kb, "
      "native_graphics_kb, non_graphics_kb, graphics_dma_kb) AS block FROM bench_samples GROUP BY capture_id) AS b "
      "WHERE device_reports.capture_id = b.capture_id AND device_reports.device_id = ?1",
      "DELETE FROM bench_samples WHERE ?1 IS NOT NULL",
  };
}

bool Fail(const absl::Status& s, const char* what) {
  std::fprintf(stderr, "query_benchmark: %s: %s\n", what, s.ToString().c_str());
  return false;
}

bool BuildDatabase(const std::string& path) {
  const std::string tmp = path + ".building";
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  std::filesystem::remove(tmp + "-wal", ec);
  std::filesystem::remove(tmp + "-shm", ec);
  {
    // The schema, as the server creates it.
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(tmp);
    if (!store.ok()) return Fail(store.status(), "create schema");
  }
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(tmp, SQLITE_OPEN_READWRITE);
  if (!db.ok()) return Fail(db.status(), "open");
  // A throwaway file being generated: no fsync per transaction needed; the result is renamed at the end.
  if (absl::Status s =
          db->Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;"
                   "CREATE TEMP TABLE bench_names (slot INTEGER PRIMARY KEY, name TEXT NOT NULL);"
                   "CREATE TEMP TABLE bench_samples (capture_id TEXT, name_no INTEGER, pid INTEGER, "
                   "pss_kb INTEGER, swap_pss_kb INTEGER, gfxdev_kb INTEGER, gl_kb INTEGER, dma_kb INTEGER, "
                   "native_graphics_kb INTEGER, non_graphics_kb INTEGER, graphics_dma_kb INTEGER, "
                   "total_kb INTEGER)");
      !s.ok()) {
    return Fail(s, "pragmas");
  }
  if (absl::Status s = RegisterMigrationFunctions(*db); !s.ok()) return Fail(s, "process blocks");
  {
    absl::StatusOr<Statement> st = db->Prepare("INSERT INTO bench_names (slot, name) VALUES (?1, ?2)");
    if (!st.ok()) return Fail(st.status(), "names");
    for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
      st->Reset();
      if (!st->BindInt64(1, static_cast<int64_t>(i)).ok() || !st->BindText(2, kNames[i]).ok() || !st->StepDone().ok()) {
        return Fail(absl::InternalError("insert"), "names");
      }
    }
  }
  if (absl::Status s = db->Exec("INSERT INTO process_names (name) SELECT name FROM bench_names ORDER BY slot");
      !s.ok()) {
    return Fail(s, "process names");
  }
  std::vector<Statement> inserts;
  for (const std::string& sql : DeviceInserts()) {
    absl::StatusOr<Statement> st = db->Prepare(sql);
    if (!st.ok()) return Fail(st.status(), "prepare");
    inserts.push_back(*std::move(st));
  }
  absl::StatusOr<Statement> device = db->Prepare(
      "INSERT INTO devices (device_id, model, soc, platform, page_size, last_seen_at) "
      "VALUES (?1, 'Xiaomi 12', 'sm8450', 'qcom', 4096, ?2)");
  if (!device.ok()) return Fail(device.status(), "prepare devices");
  std::fprintf(stderr, "query_benchmark: building %s (%d devices) ...\n", path.c_str(), g_size.devices);
  for (int d = 0; d < g_size.devices; ++d) {
    absl::StatusOr<Transaction> txn = Transaction::Begin(*db);
    if (!txn.ok()) return Fail(txn.status(), "begin");
    const std::string id = DeviceId(d);
    const int64_t last = LastCapture();
    device->Reset();
    if (absl::Status s = device->BindText(1, id); !s.ok()) return Fail(s, "bind");
    if (absl::Status s = device->BindText(2, Rfc3339(last)); !s.ok()) return Fail(s, "bind");
    if (absl::Status s = device->StepDone(); !s.ok()) return Fail(s, "insert device");
    for (Statement& st : inserts) {
      st.Reset();
      if (absl::Status s = st.BindText(1, id); !s.ok()) return Fail(s, "bind");
      if (st.sql().find("?2") != std::string::npos) {
        if (absl::Status s = st.BindInt64(2, FirstCaptureOf(d)); !s.ok()) return Fail(s, "bind");
      }
      if (st.sql().find("?3") != std::string::npos) {
        if (absl::Status s = st.BindInt64(3, CapturesOf(d)); !s.ok()) return Fail(s, "bind");
      }
      if (st.sql().find("?4") != std::string::npos) {
        if (absl::Status s = st.BindInt64(4, d); !s.ok()) return Fail(s, "bind");
      }
      if (st.sql().find("?5") != std::string::npos) {
        if (absl::Status s = st.BindInt64(5, IntervalOf(d)); !s.ok()) return Fail(s, "bind");
      }
      if (absl::Status s = st.StepDone(); !s.ok()) return Fail(s, "insert");
    }
    if (absl::Status s = txn->Commit(); !s.ok()) return Fail(s, "commit");
  }
  inserts.clear();
  *device = Statement();
  if (absl::Status s = db->Exec("PRAGMA wal_checkpoint(TRUNCATE)"); !s.ok()) return Fail(s, "checkpoint");
  *db = SqliteDb();
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Fail(absl::InternalError(ec.message()), "rename");
  std::filesystem::remove(tmp + "-wal", ec);
  std::filesystem::remove(tmp + "-shm", ec);
  return true;
}

// The same history in PostgreSQL, the same schema shape (storage/postgres/pg_schema.cc): the capture rows
// generated inside the server with generate_series (the same ids, times and figures as DeviceInserts), the
// report rows with their process blocks copied from the SQLite file (a block is built in C++, not in SQL),
// in one transaction per device, as pipelined inserts.
constexpr char kPgSeries[] = " FROM generate_series(0, ?3::bigint - 1) AS i";
constexpr char kPgTimeOfI[] =
    "to_char(to_timestamp(?2::bigint + i * ?4::bigint) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";
constexpr char kPgIdOfI[] = "?1 || '-' || lpad(i::text, 6, '0')";
constexpr char kPgSweepOfI[] =
    "CASE WHEN (?2::bigint + i * ?4::bigint) % 86400 BETWEEN 43200 AND 43199 + ?4::bigint THEN 'sweep-' || "
    "to_char(to_timestamp(?2::bigint + i * ?4::bigint) AT TIME ZONE 'UTC', 'YYYY-MM-DD') ELSE '' END";

std::string PgCaptureInsert() {
  return absl::StrCat(
      "INSERT INTO captures (capture_id, device_id, captured_at, received_at, sweep_id, raw_codec, raw_bytes, "
      "raw_blob) SELECT ",
      kPgIdOfI, ", ?1, ", kPgTimeOfI, ", ", kPgTimeOfI, ", ", kPgSweepOfI,
      ", 'zstd+proto', 180000, '\\x28b52ffd'::bytea", kPgSeries);
}

constexpr char kReportColumns[] =
    "capture_id, device_id, captured_at, platform, ddr_kb, mem_total_kb, kernel_kb, processes_kb, total_kb, "
    "process_count, processes";

bool CopyReports(SqliteDb& from, SqlConnection& to, const std::string& device) {
  absl::StatusOr<Statement> st =
      from.Prepare(absl::StrCat("SELECT ", kReportColumns, " FROM device_reports WHERE device_id = ?1"));
  if (!st.ok()) return Fail(st.status(), "read reports");
  if (!st->BindText(1, device).ok()) return false;
  const std::string insert = absl::StrCat("INSERT INTO device_reports (", kReportColumns,
                                          ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  while (true) {
    absl::StatusOr<StepResult> r = st->Step();
    if (!r.ok()) return Fail(r.status(), "read reports");
    if (*r == StepResult::kDone) return true;
    SqlParams row;
    for (int c = 0; c < 10; ++c) {
      row.push_back(c < 4 ? SqlValue::Text(st->ColumnText(c)) : SqlValue::OptionalInt(st->ColumnOptionalInt64(c)));
    }
    row.push_back(SqlValue::Blob(st->ColumnBlob(10)));
    if (absl::Status s = to.Send(insert, std::move(row)); !s.ok()) return Fail(s, "copy report");
  }
}

bool BuildPgDatabase(const std::string& uri, const std::string& sqlite_path) {
  {
    // The schema, as the server creates it.
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore(uri);
    if (!store.ok()) return Fail(store.status(), "create PostgreSQL schema");
  }
  absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Connect(uri);
  if (!db.ok()) return Fail(db.status(), "connect");
  absl::StatusOr<SqliteDb> sqlite = SqliteDb::Open(sqlite_path, SQLITE_OPEN_READONLY);
  if (!sqlite.ok()) return Fail(sqlite.status(), "open the SQLite history");
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    // The numbers the SQLite file gave the names (its rowids, in this order), which its blocks hold.
    absl::StatusOr<int64_t> r = RunSql(**db, "INSERT INTO process_names (name_no, name) VALUES (?1, ?2)",
                                       {SqlValue::Int(static_cast<int64_t>(i) + 1), SqlValue::Text(kNames[i])});
    if (!r.ok()) return Fail(r.status(), "names");
  }
  std::fprintf(stderr, "query_benchmark: building the PostgreSQL copy (%d devices) ...\n", g_size.devices);
  const std::string captures = PgCaptureInsert();
  for (int d = 0; d < g_size.devices; ++d) {
    const std::string id = DeviceId(d);
    const int64_t last = LastCapture();
    absl::StatusOr<SqlTransaction> txn = SqlTransaction::Begin(**db);
    if (!txn.ok()) return Fail(txn.status(), "begin");
    if (absl::Status s = static_cast<SqlConnection&>(**db).Send(
            "INSERT INTO devices (device_id, model, soc, platform, page_size, last_seen_at) "
            "VALUES (?1, 'Xiaomi 12', 'sm8450', 'qcom', 4096, ?2)",
            {SqlValue::Text(id), SqlValue::Text(Rfc3339(last))});
        !s.ok()) {
      return Fail(s, "insert device");
    }
    if (absl::Status s = static_cast<SqlConnection&>(**db).Send(
            captures, {SqlValue::Text(id), SqlValue::Int(FirstCaptureOf(d)), SqlValue::Int(CapturesOf(d)),
                       SqlValue::Int(IntervalOf(d))});
        !s.ok()) {
      return Fail(s, "insert captures");
    }
    if (!CopyReports(*sqlite, **db, id)) return false;
    if (absl::Status s = txn->Commit(); !s.ok()) return Fail(s, "commit");
  }
  // Autovacuum's ANALYZE would come on its own after a bulk load; run it now, so the plans do not change
  // halfway through the measurements.
  if (absl::Status s = (*db)->Exec("VACUUM ANALYZE"); !s.ok()) return Fail(s, "vacuum analyze");
  return true;
}

struct Fleet {
  std::unique_ptr<SqlStore> store;
  std::unique_ptr<SqliteDb> raw;  // for the baselines
  bool ok = false;
};

// The PostgreSQL side: a server of its own (tests/support/postgres_server.h), started by this binary and
// stopped when it exits.
struct PgFleet {
  std::unique_ptr<testing::PostgresServer> server;
  std::unique_ptr<SqlStore> store;
  bool ok = false;
};

bool g_postgres = true;

Fleet& TheFleet();

PgFleet MakePgFleet() {
  PgFleet fleet;
  if (!g_postgres) return fleet;
  if (!TheFleet().ok) return fleet;  // its reports are copied from the SQLite file
  absl::StatusOr<std::unique_ptr<testing::PostgresServer>> server = testing::PostgresServer::Start();
  if (!server.ok()) {
    Fail(server.status(), "start PostgreSQL");
    return fleet;
  }
  fleet.server = *std::move(server);
  absl::StatusOr<std::string> uri = fleet.server->NewDatabase();
  if (!uri.ok()) {
    Fail(uri.status(), "create database");
    return fleet;
  }
  if (!BuildPgDatabase(*uri, DbPath())) return fleet;
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenPgStore(*uri);
  if (!store.ok()) {
    Fail(store.status(), "open PostgreSQL store");
    return fleet;
  }
  fleet.store = *std::move(store);
  fleet.ok = true;
  return fleet;
}

// A static object, not a leaked pointer: its destructor stops the PostgreSQL server when the binary exits.
PgFleet& ThePgFleet() {
  static PgFleet fleet = MakePgFleet();
  return fleet;
}

Fleet& TheFleet() {
  static Fleet* const fleet = [] {
    auto* f = new Fleet();
    const std::string path = DbPath();
    if (!std::filesystem::exists(path) && !BuildDatabase(path)) return f;
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
    if (!store.ok()) {
      Fail(store.status(), "open store");
      return f;
    }
    absl::StatusOr<SqliteDb> raw = SqliteDb::Open(path, SQLITE_OPEN_READONLY);
    if (!raw.ok()) {
      Fail(raw.status(), "open");
      return f;
    }
    f->store = std::move(*store);
    f->raw = std::make_unique<SqliteDb>(*std::move(raw));
    f->ok = true;
    return f;
  }();
  return *fleet;
}

#define MEMFLEET_REQUIRE_FLEET(state)                       \
  Fleet& fleet = TheFleet();                                \
  if (!fleet.ok) {                                          \
    (state).SkipWithError("the fleet database is missing"); \
    return;                                                 \
  }

// The store a benchmark reads: range(0) 0 = SQLite, 1 = PostgreSQL (the same history in each).
Store* StoreFor(benchmark::State& state) {
  if (state.range(0) == 1) {
    PgFleet& pg = ThePgFleet();
    if (!pg.ok) state.SkipWithError("the PostgreSQL fleet database is missing");
    return pg.ok ? pg.store.get() : nullptr;
  }
  Fleet& fleet = TheFleet();
  if (!fleet.ok) state.SkipWithError("the fleet database is missing");
  return fleet.ok ? fleet.store.get() : nullptr;
}

#define MEMFLEET_REQUIRE_STORE(state) \
  Store* store = StoreFor(state);     \
  if (store == nullptr) return;

// Times `query` (a store read returning a vector) every iteration; `counter` counts the rows of its answer.
template <typename Query>
void TimeQuery(benchmark::State& state, const char* counter, Query query) {
  size_t rows = 0;
  std::optional<size_t> swept;  // a history's points marked with their sweep: one a day, as generated
  for (auto _ : state) {
    auto r = query();
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    rows = r->size();
    benchmark::DoNotOptimize(r->data());
    if constexpr (std::is_same_v<typename std::decay_t<decltype(*r)>::value_type, HistoryRow>) {
      swept = std::count_if(r->begin(), r->end(), [](const HistoryRow& p) { return !p.sweep_id.empty(); });
    }
  }
  state.counters[counter] = static_cast<double>(rows);
  if (swept.has_value()) state.counters["swept"] = static_cast<double>(*swept);
}

// One process of one device over its 30 days (720 points, hourly).
void BM_ProcessTrend_30Days(benchmark::State& state) {
  MEMFLEET_REQUIRE_STORE(state);
  TimeQuery(state, "points",
            [&] { return store->ProcessHistory(DeviceId(g_size.devices / 2), "surfaceflinger", "total_kb", "", 0); });
}
BENCHMARK(BM_ProcessTrend_30Days)->ArgName("postgres")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The year device's process over 365 days (52,560 points).
void BM_ProcessTrend_1Year(benchmark::State& state) {
  MEMFLEET_REQUIRE_STORE(state);
  TimeQuery(state, "points", [&] { return store->ProcessHistory(DeviceId(0), "surfaceflinger", "total_kb", "", 0); });
}
BENCHMARK(BM_ProcessTrend_1Year)->ArgName("postgres")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The last 30 days of the year device: `since` must cut the index range (4,320 points, every 10 minutes).
void BM_ProcessTrend_1YearDevice_Last30Days(benchmark::State& state) {
  MEMFLEET_REQUIRE_STORE(state);
  const std::string since = Rfc3339(FirstCaptureOf(1));
  TimeQuery(state, "points",
            [&] { return store->ProcessHistory(DeviceId(0), "surfaceflinger", "total_kb", since, 0); });
}
BENCHMARK(BM_ProcessTrend_1YearDevice_Last30Days)->ArgName("postgres")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The fleet view: every device's latest device figure.
void BM_LatestPerDevice(benchmark::State& state) {
  MEMFLEET_REQUIRE_STORE(state);
  TimeQuery(state, "devices", [&] { return store->LatestPerDevice("total_kb", ""); });
}
BENCHMARK(BM_LatestPerDevice)->ArgName("postgres")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The fleet view of one process: every device's latest surfaceflinger total.
void BM_LatestPerDevice_Process(benchmark::State& state) {
  MEMFLEET_REQUIRE_STORE(state);
  TimeQuery(state, "devices", [&] { return store->LatestPerDevice("total_kb", "surfaceflinger"); });
}
BENCHMARK(BM_LatestPerDevice_Process)->ArgName("postgres")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The fleet page of the dashboard and `memfleet devices`: every device with its capture count, its last
// capture time and its latest total (SqlStore::ListDevices).
void BM_ListDevices(benchmark::State& state) {
  MEMFLEET_REQUIRE_STORE(state);
  TimeQuery(state, "devices", [&] { return store->ListDevices(); });
}
BENCHMARK(BM_ListDevices)->ArgName("postgres")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Baseline: one primary-key probe of a capture (SQLite's floor for "find one row").
void BM_PointLookup(benchmark::State& state) {
  MEMFLEET_REQUIRE_FLEET(state);
  absl::StatusOr<Statement> st = fleet.raw->Prepare("SELECT captured_at FROM captures WHERE capture_id = ?1");
  if (!st.ok()) {
    state.SkipWithError(st.status().ToString().c_str());
    return;
  }
  const std::string id = DeviceId(g_size.devices / 2) + "-000100";
  for (auto _ : state) {
    st->Reset();
    if (!st->BindText(1, id).ok()) break;
    absl::StatusOr<StepResult> r = st->Step();
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_PointLookup)->Unit(benchmark::kMicrosecond);

// Baseline: COUNT(*) over the trend's index range — reading the same index entries, building no rows.
// range(0): 0 = the 30-day device, 1 = the year device.
void BM_IndexRangeCount(benchmark::State& state) {
  MEMFLEET_REQUIRE_FLEET(state);
  absl::StatusOr<Statement> st =
      fleet.raw->Prepare("SELECT COUNT(*) FROM device_reports WHERE device_id = ?1 AND ?2 IS NOT NULL");
  if (!st.ok()) {
    state.SkipWithError(st.status().ToString().c_str());
    return;
  }
  const std::string device = DeviceId(state.range(0) == 1 ? 0 : g_size.devices / 2);
  int64_t n = 0;
  for (auto _ : state) {
    st->Reset();
    if (!st->BindText(1, device).ok() || !st->BindText(2, "surfaceflinger").ok()) break;
    absl::StatusOr<StepResult> r = st->Step();
    if (r.ok() && *r == StepResult::kRow) n = st->ColumnInt64(0);
  }
  state.counters["points"] = static_cast<double>(n);
}
BENCHMARK(BM_IndexRangeCount)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Storage cost of the fleet database: file bytes per process row (the file holds captures and device
// reports too; storage_benchmark's BM_ProcessRowBytes splits a row's cost into table and index pages).
void BM_DatabaseSize(benchmark::State& state) {
  MEMFLEET_REQUIRE_FLEET(state);
  double rows = 0;
  for (auto _ : state) {
    absl::StatusOr<Statement> count = fleet.raw->Prepare("SELECT SUM(process_count) FROM device_reports");
    if (!count.ok()) {
      state.SkipWithError(count.status().ToString().c_str());
      return;
    }
    absl::StatusOr<StepResult> r = count->Step();
    if (r.ok() && *r == StepResult::kRow) rows = static_cast<double>(count->ColumnInt64(0));
  }
  std::error_code ec;
  const double bytes = static_cast<double>(std::filesystem::file_size(DbPath(), ec));
  state.counters["file_MB"] = bytes / 1e6;
  state.counters["process_rows"] = rows;
  state.counters["file_B_per_process_row"] = rows > 0 ? bytes / rows : 0;
}
BENCHMARK(BM_DatabaseSize)->Iterations(1)->Unit(benchmark::kMillisecond);

// Strips this binary's own flags before Google Benchmark sees the rest.
void ParseOwnFlags(int& argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      g_size = Size{10, 2, 7, 600};
    } else if (std::strcmp(argv[i], "--no_postgres") == 0) {
      g_postgres = false;
    } else if (std::strncmp(argv[i], "--devices=", 10) == 0) {
      g_size.devices = std::max(1, std::atoi(argv[i] + 10));
    } else if (std::strncmp(argv[i], "--days=", 7) == 0) {
      g_size.days = std::max(1, std::atoi(argv[i] + 7));
      g_size.year_days = std::max(g_size.year_days, g_size.days);
    } else if (std::strncmp(argv[i], "--year_days=", 12) == 0) {
      g_size.year_days = std::max(g_size.days, std::atoi(argv[i] + 12));
    } else if (std::strncmp(argv[i], "--interval_s=", 13) == 0) {
      g_size.interval_s = std::max(60, std::atoi(argv[i] + 13));
    } else if (std::strncmp(argv[i], "--db_dir=", 9) == 0) {
      g_db_dir = argv[i] + 9;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
}

}  // namespace
}  // namespace memfleet::storage

int main(int argc, char** argv) {
  memfleet::storage::ParseOwnFlags(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
