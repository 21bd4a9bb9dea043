// Benchmarks of the SQLite store on a real file in a temp dir: ingest cost (one capture per transaction,
// synchronous=FULL, i.e. one fsync each — what an ack costs) and the two hot queries on a scaled fleet.
//
//   ./bin/storage_benchmark --benchmark_filter=ProcessTrend
//
// The fleet database is built once, on first use: 10 devices x 30 days x one capture every 10 minutes
// = 43,200 captures (4,320 per device) with 5 processes each = 216,000 process rows, 256-byte raw blobs
// and short report JSON. The target is 100 devices x 30 days (432,000 captures) and a one-year
// trend of one device (52,560 points); both queries are index range reads, so their cost scales with the
// rows they return (trend) or the number of devices (latest), not with the size of the table — compare
// per-row/per-device times, not totals. Building it takes a few seconds (10 transactions, one per device).
#include <stdlib.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "server/accounting/report.h"
#include "storage/sqlite_store.h"

namespace memfleet::storage {
namespace {

constexpr int kFleetDevices = 10;
constexpr int kFleetDays = 30;
constexpr int kCaptureIntervalSeconds = 600;
constexpr int kFleetProcesses = 5;
constexpr int kCapturesPerDevice = kFleetDays * 86400 / kCaptureIntervalSeconds;  // 4320
constexpr int64_t kEpoch20240101 = 1704067200;

const char* const kProcessNames[] = {"system_server", "com.android.systemui", "surfaceflinger",
                                     "com.android.launcher3", "com.google.android.gms"};

class TempDir {
 public:
  TempDir() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/memfleet_storage_bench_XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string TimeAt(int64_t seconds_after_2024) {
  time_t t = static_cast<time_t>(kEpoch20240101 + seconds_after_2024);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

CaptureRecord MakeCapture(const std::string& device_id, int index, int processes) {
  CaptureRecord c;
  c.device_id = device_id;
  c.capture_id = device_id + "-" + std::to_string(index);
  c.captured_at = TimeAt(static_cast<int64_t>(index) * kCaptureIntervalSeconds);
  c.received_at = c.captured_at;
  c.raw_codec = "zstd+proto";
  c.raw_blob = std::string(256, static_cast<char>(index & 0x7f));
  c.raw_bytes = 64 * 1024;
  accounting::Report& r = c.report;
  r.platform = accounting::Platform::kQcom;
  r.device_id = device_id;
  r.captured_at = c.captured_at;
  r.device.mem_total_kb = 11'800'000;
  r.device.total_kb = 9'000'000 + index % 1000;
  r.device.kernel_kb = 900'000;
  for (int p = 0; p < processes; ++p) {
    accounting::ProcessReport& pr = r.processes[1000 + p];
    pr.pid = 1000 + p;
    pr.name = p < kFleetProcesses ? kProcessNames[p] : "app_" + std::to_string(p);
    pr.pss_kb = 50'000 + p * 100 + index % 50;
    pr.swap_pss_kb = 1'000;
    pr.gl_kb = 20'000;
    pr.total_kb = *pr.pss_kb + 21'000;
  }
  c.report_json = "{\"platform\":\"qcom\",\"device_id\":\"" + device_id + "\"}";
  return c;
}

struct FleetDb {
  TempDir dir;
  std::unique_ptr<SqliteStore> store;
  bool ok = false;
};

bool BuildFleet(FleetDb& f) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(f.dir.path() + "/fleet.db", SqliteStoreOptions());
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return false;
  }
  f.store = std::move(*store);
  for (int d = 0; d < kFleetDevices; ++d) {
    std::vector<CaptureRecord> batch;
    batch.reserve(kCapturesPerDevice);
    const std::string device_id = "dev-" + std::to_string(d);
    for (int i = 0; i < kCapturesPerDevice; ++i) batch.push_back(MakeCapture(device_id, i, kFleetProcesses));
    absl::StatusOr<size_t> inserted = f.store->PutCaptures(batch);
    if (!inserted.ok()) {
      std::fprintf(stderr, "build: %s\n", inserted.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

// Built on first use and removed at exit (a function-local static, so its temp dir is deleted).
FleetDb& Fleet() {
  static FleetDb fleet;
  static const bool built = [] {
    fleet.ok = BuildFleet(fleet);
    return true;
  }();
  (void)built;
  return fleet;
}

// Ingest: one capture with 30 processes per PutCapture, each its own durable transaction.
void BM_PutCapture(benchmark::State& state) {
  static int run = 0;
  TempDir dir;
  absl::StatusOr<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(dir.path() + "/put-" + std::to_string(run++) + ".db", SqliteStoreOptions());
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  CaptureRecord c = MakeCapture("dev-put", 0, 30);
  int index = 0;
  for (auto _ : state) {
    c.capture_id = "cap-" + std::to_string(index);
    c.captured_at = TimeAt(static_cast<int64_t>(index) * kCaptureIntervalSeconds);
    ++index;
    absl::StatusOr<bool> r = (*store)->PutCapture(c);
    if (!r.ok() || !*r) {
      state.SkipWithError(r.ok() ? "duplicate" : r.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PutCapture)->Unit(benchmark::kMicrosecond);

// The same captures in batches of range(0) per transaction (a spooled backlog): one fsync per batch.
void BM_PutCaptures_Batch(benchmark::State& state) {
  static int run = 0;
  TempDir dir;
  absl::StatusOr<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(dir.path() + "/batch-" + std::to_string(run++) + ".db", SqliteStoreOptions());
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  const int batch_size = static_cast<int>(state.range(0));
  std::vector<CaptureRecord> batch(static_cast<size_t>(batch_size), MakeCapture("dev-batch", 0, 30));
  int index = 0;
  for (auto _ : state) {
    for (CaptureRecord& c : batch) {
      c.capture_id = "cap-" + std::to_string(index);
      c.captured_at = TimeAt(static_cast<int64_t>(index) * kCaptureIntervalSeconds);
      ++index;
    }
    absl::StatusOr<size_t> r = (*store)->PutCaptures(batch);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
}
BENCHMARK(BM_PutCaptures_Batch)->Arg(100)->Unit(benchmark::kMillisecond);

// One device's one process over the whole stored period (30 days, 4,320 points; see the file comment for
// how this scales to a year).
void BM_ProcessTrend_OneYear(benchmark::State& state) {
  FleetDb& fleet = Fleet();
  if (!fleet.ok) {
    state.SkipWithError("fleet database could not be built");
    return;
  }
  size_t rows = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<HistoryRow>> r =
        fleet.store->ProcessHistory("dev-3", "com.android.systemui", "total_kb", "", 0);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    rows = r->size();
    benchmark::DoNotOptimize(r->data());
  }
  state.counters["points"] = static_cast<double>(rows);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(rows));
}
BENCHMARK(BM_ProcessTrend_OneYear)->Unit(benchmark::kMillisecond);

// The last 7 days only: the `since` bound must cut the index range, not filter a full read.
void BM_ProcessTrend_LastWeek(benchmark::State& state) {
  FleetDb& fleet = Fleet();
  if (!fleet.ok) {
    state.SkipWithError("fleet database could not be built");
    return;
  }
  const std::string since = TimeAt(static_cast<int64_t>(kFleetDays - 7) * 86400);
  size_t rows = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<HistoryRow>> r =
        fleet.store->ProcessHistory("dev-3", "com.android.systemui", "total_kb", since, 0);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    rows = r->size();
    benchmark::DoNotOptimize(r->data());
  }
  state.counters["points"] = static_cast<double>(rows);
}
BENCHMARK(BM_ProcessTrend_LastWeek)->Unit(benchmark::kMicrosecond);

// The fleet view: the latest report's total of each of the 10 devices (4,320 reports each).
void BM_LatestPerDevice(benchmark::State& state) {
  FleetDb& fleet = Fleet();
  if (!fleet.ok) {
    state.SkipWithError("fleet database could not be built");
    return;
  }
  size_t rows = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<FleetValueRow>> r = fleet.store->LatestPerDevice("total_kb", "");
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    rows = r->size();
    benchmark::DoNotOptimize(r->data());
  }
  state.counters["devices"] = static_cast<double>(rows);
}
BENCHMARK(BM_LatestPerDevice)->Unit(benchmark::kMicrosecond);

// The same with a process figure (one more index probe per device).
void BM_LatestPerDevice_Process(benchmark::State& state) {
  FleetDb& fleet = Fleet();
  if (!fleet.ok) {
    state.SkipWithError("fleet database could not be built");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<std::vector<FleetValueRow>> r = fleet.store->LatestPerDevice("pss_kb", "surfaceflinger");
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(r->data());
  }
}
BENCHMARK(BM_LatestPerDevice_Process)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace memfleet::storage

BENCHMARK_MAIN();
