// Benchmarks of the SQLite store on a real file in a temp dir: ingest cost (one capture per transaction,
// synchronous=FULL, i.e. one fsync each — what an ack costs) and the two hot queries on a scaled fleet.
//
//   ./bin/storage_benchmark --benchmark_filter=ProcessTrend
//
// The fleet database is built once, on first use: 10 devices x 30 days x one capture every 10 minutes
// = 43,200 captures (4,320 per device) with 5 processes each = 216,000 process rows, 256-byte raw blobs
// and short report JSON. The issue's target is 100 devices x 30 days (432,000 captures) and a one-year
// trend of one device (52,560 points); both queries are index range reads, so their cost scales with the
// rows they return (trend) or the number of devices (latest), not with the size of the table — compare
// per-row/per-device times, not totals. Building it takes a few seconds (10 transactions, one per device).
// bench/query_benchmark.cc runs the queries on the full 100-device database.
//
// Also the stored size of captures (BM_StoredCapture: the five sample trees as the agent collects them,
// and this machine's own "/"), zstd at the server's level beside gzip -6 of the same serialized bytes,
// and the bytes one process-report row costs on disk (BM_ProcessRowBytes, from SQLite's dbstat).
//   ./bin/storage_benchmark --benchmark_filter='StoredCapture|ProcessRowBytes'
//
// And the bytes one more capture stores, all tables, indexes and TOAST, on SQLite and on a PostgreSQL the
// binary starts, in the same run, the devices moving as phones do (BM_CaptureMargin; BM_CaptureFootprint
// is SQLite's whole file).
//   MEMFLEET_BENCH_FULL_MARGIN=1 ./bin/storage_benchmark --benchmark_filter=CaptureMargin
//
// And a device's history with the marks of its captures (sweep id, labels) against the same history
// without them (BM_DeviceHistory_30Days, BM_ProcessHistory_Marked_30Days: 30 days every 5 minutes).
//   ./bin/storage_benchmark --benchmark_filter='History_'
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "agent/reader/device_root_fs.h"
#include "benchmark/benchmark.h"
#include "memfleet/v1/capture.pb.h"
#include "proto/capture_codec.h"
#include "report/report.h"
#include "report/report_json.h"
#include "accounting/account.h"
#include "server/ingest/capture_ingestor.h"
#include "server/ingest/delta_keyframes.h"
#include "server/history/retention.h"
#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_store.h"
#include "storage/report_codec.h"
#include "storage/sqlite/sqlite_connection.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/moving_capture.h"
#include "tests/support/postgres_server.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"

namespace memfleet::storage {
namespace {

constexpr int kFleetDevices = 10;
constexpr int kFleetDays = 30;
constexpr int kCaptureIntervalSeconds = 600;
constexpr int kFleetProcesses = 5;
constexpr int kCapturesPerDevice = kFleetDays * 86400 / kCaptureIntervalSeconds;  // 4320
constexpr int64_t kEpoch20240101 = 1704067200;

const char* const kProcessNames[] = {"system_server", "com.android.systemui", "surfaceflinger", "com.android.launcher3",
                                     "com.google.android.gms"};

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
  report::Report& r = c.report;
  r.platform = report::Platform::kQcom;
  r.device_id = device_id;
  r.captured_at = c.captured_at;
  r.device.mem_total_kb = 11'800'000;
  r.device.total_kb = 9'000'000 + index % 1000;
  r.device.kernel_kb = 900'000;
  for (int p = 0; p < processes; ++p) {
    report::ProcessReport& pr = r.processes[1000 + p];
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
  std::unique_ptr<SqlStore> store;
  bool ok = false;
};

bool BuildFleet(FleetDb& f) {
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(f.dir.path() + "/fleet.db");
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
    absl::StatusOr<std::vector<bool>> inserted = f.store->PutCaptures(batch);
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
  absl::StatusOr<std::unique_ptr<SqlStore>> store =
      OpenSqliteStore(dir.path() + "/put-" + std::to_string(run++) + ".db");
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

// Ingest as the server's workers do it: Threads() callers of PutCapture at once on one store (writes
// serialize on the one writer connection). items_per_second is all threads' captures per real second:
// what more workers buy at the store (docs/performance.md: the group-commit experiment).
void BM_PutCapture_Threads(benchmark::State& state) {
  static TempDir* const dir = new TempDir();  // one folder for every thread count
  static std::unique_ptr<SqlStore> store;
  static std::atomic<int> next{0};
  static int run = 0;
  if (state.thread_index() == 0) {
    absl::StatusOr<std::unique_ptr<SqlStore>> opened =
        OpenSqliteStore(dir->path() + "/threads-" + std::to_string(run++) + ".db");
    store = opened.ok() ? std::move(*opened) : nullptr;
    next = 0;
  }
  CaptureRecord c = MakeCapture("dev-threads", 0, 30);
  for (auto _ : state) {
    if (store == nullptr) {
      state.SkipWithError("cannot open the store");
      break;
    }
    const int index = next++;
    c.capture_id = "cap-" + std::to_string(index);
    c.captured_at = TimeAt(static_cast<int64_t>(index) * kCaptureIntervalSeconds);
    absl::StatusOr<bool> r = store->PutCapture(c);
    if (!r.ok() || !*r) {
      state.SkipWithError(r.ok() ? "duplicate" : r.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PutCapture_Threads)->Threads(1)->Threads(2)->Threads(4)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The same captures in batches of range(0) per transaction (a spooled backlog): one fsync per batch.
void BM_PutCaptures_Batch(benchmark::State& state) {
  static int run = 0;
  TempDir dir;
  absl::StatusOr<std::unique_ptr<SqlStore>> store =
      OpenSqliteStore(dir.path() + "/batch-" + std::to_string(run++) + ".db");
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
    absl::StatusOr<std::vector<bool>> r = (*store)->PutCaptures(batch);
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
void BM_ProcessTrend_30Days(benchmark::State& state) {
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
BENCHMARK(BM_ProcessTrend_30Days)->Unit(benchmark::kMillisecond);

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

// ---- a device's history with its marks ----

// One device over 30 days, a capture every 5 minutes (8,640 captures, 30 processes each, figures moving
// from capture to capture), twice: "dev-marked", whose agent was started with --label rack=7 --label
// pool=camera (its two labels on every capture) and which answered a sweep a day (30 captures with a
// sweep id and its labels run=N suite=camera), and "dev-plain", the same captures without a label or a
// sweep. Reading each one's history is the same index range; the marked one's also reads its captures'
// labels (one more index range, two to four rows a capture) and attaches them: the ratio of the two is
// what the marks cost the trend and the dashboard's device page.
constexpr int kMarkedDays = 30;
constexpr int kMarkedIntervalSeconds = 300;
constexpr int kMarkedCaptures = kMarkedDays * 86400 / kMarkedIntervalSeconds;  // 8,640
constexpr int kMarkedProcesses = 30;

bool BuildMarkedDevice(SqlStore& store, const std::string& device_id, bool marked) {
  constexpr int kPerDay = 86400 / kMarkedIntervalSeconds;
  for (int day = 0; day < kMarkedDays; ++day) {
    std::vector<CaptureRecord> batch;
    batch.reserve(kPerDay);
    for (int i = day * kPerDay; i < (day + 1) * kPerDay; ++i) {
      CaptureRecord c = MakeCapture(device_id, i, kMarkedProcesses);
      c.captured_at = TimeAt(static_cast<int64_t>(i) * kMarkedIntervalSeconds);
      c.received_at = c.captured_at;
      c.report.captured_at = c.captured_at;
      c.report.device.total_kb = 9'000'000 + (i * 7919) % 500'000;
      if (marked) {
        c.labels.agent = {{"pool", "camera"}, {"rack", "7"}};
        // The day's sweep, mid-afternoon (a different capture of each day's).
        if (i == day * kPerDay + 180 + day % 7) {
          c.sweep_id = "sweep-" + std::to_string(day);
          c.labels.sweep = {{"run", std::to_string(1200 + day)}, {"suite", "camera"}};
        }
      }
      batch.push_back(std::move(c));
    }
    absl::StatusOr<std::vector<bool>> inserted = store.PutCaptures(batch);
    if (!inserted.ok()) {
      std::fprintf(stderr, "build %s: %s\n", device_id.c_str(), inserted.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

struct MarkedDb {
  TempDir dir;
  std::unique_ptr<SqlStore> store;
  bool ok = false;
};

// Built on first use and removed at exit (a few seconds: 60 transactions of 288 captures).
MarkedDb& MarkedHistory() {
  static MarkedDb db;
  static const bool built = [] {
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(db.dir.path() + "/marked.db");
    if (!store.ok()) {
      std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
      return true;
    }
    db.store = std::move(*store);
    db.ok = BuildMarkedDevice(*db.store, "dev-plain", false) && BuildMarkedDevice(*db.store, "dev-marked", true);
    return true;
  }();
  (void)built;
  return db;
}

// range(0): 0 = dev-plain (the baseline), 1 = dev-marked. A device figure's 30 days (8,640 points).
void BM_DeviceHistory_30Days(benchmark::State& state) {
  MarkedDb& db = MarkedHistory();
  if (!db.ok) {
    state.SkipWithError("the marked history could not be built");
    return;
  }
  const std::string device = state.range(0) == 1 ? "dev-marked" : "dev-plain";
  size_t points = 0, marked = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<HistoryRow>> r = db.store->DeviceHistory(device, "total_kb", "", 0);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    points = r->size();
    marked =
        static_cast<size_t>(std::count_if(r->begin(), r->end(), [](const HistoryRow& h) { return !h.labels.empty(); }));
    benchmark::DoNotOptimize(r->data());
  }
  state.counters["points"] = static_cast<double>(points);
  state.counters["labelled"] = static_cast<double>(marked);
}
BENCHMARK(BM_DeviceHistory_30Days)->ArgName("marked")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The same for one process of the device (surfaceflinger, one pid: 8,640 points), whose points carry
// their captures' marks too.
void BM_ProcessHistory_Marked_30Days(benchmark::State& state) {
  MarkedDb& db = MarkedHistory();
  if (!db.ok) {
    state.SkipWithError("the marked history could not be built");
    return;
  }
  const std::string device = state.range(0) == 1 ? "dev-marked" : "dev-plain";
  size_t points = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<HistoryRow>> r = db.store->ProcessHistory(device, "surfaceflinger", "total_kb", "", 0);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    points = r->size();
    benchmark::DoNotOptimize(r->data());
  }
  state.counters["points"] = static_cast<double>(points);
}
BENCHMARK(BM_ProcessHistory_Marked_30Days)->ArgName("marked")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// ---- stored size of raw captures ----

const char* const kSampleTrees[] = {"generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1"};
constexpr int kLiveRoot = 5;  // the index after the sample trees: this machine's "/"

// The captures as the agent collects them, once: the sample trees, then a live capture of "/" (commands
// off: no dumpsys on a Linux host). An empty Capture when collecting failed.
const std::vector<capture::Capture>& SampleCaptures() {
  static const std::vector<capture::Capture>* const kCaptures = [] {
    auto* out = new std::vector<capture::Capture>();
    for (const char* name : kSampleTrees) {
      agent::CaptureTreeFs fs(testing::TestData(std::string("captures/") + name + "/tree"));
      absl::StatusOr<capture::Capture> c = agent::CollectCapture(fs, agent::CollectOptions{});
      out->push_back(c.ok() ? *std::move(c) : capture::Capture());
    }
    agent::DeviceRootFs fs("/");
    agent::CollectOptions options;
    options.captured_at = "2026-12-01T00:00:00Z";
    options.page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    options.run_commands = false;
    absl::StatusOr<capture::Capture> live = agent::CollectCapture(fs, options);
    out->push_back(live.ok() ? *std::move(live) : capture::Capture());
    return out;
  }();
  return *kCaptures;
}

// The StoredCapture protobuf EncodeStoredCapture compresses, for the gzip baseline.
std::string SerializedStoredCapture(const capture::Capture& capture) {
  v1::StoredCapture stored;
  stored.set_capture_id("c");
  stored.set_device_id("d");
  stored.set_captured_at("2026-12-01T00:00:00Z");
  for (const auto& [path, node] : capture.nodes()) {
    v1::NodeEntry* e = stored.add_nodes();
    e->set_path(path);
    if (node.is_file())
      e->set_content(node.content);
    else if (node.is_error())
      e->set_errno_name(node.content);
    else
      e->set_directory(true);
  }
  return stored.SerializeAsString();
}

size_t GzipBytes(const std::string& data, int level) {
  uLongf n = compressBound(static_cast<uLong>(data.size()));
  std::string out(n, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(data.data()),
                static_cast<uLong>(data.size()), level) != Z_OK) {
    return 0;
  }
  return n;
}

// range(0): sample tree index (5 = "/"); range(1): zstd level. Time is one EncodeStoredCapture; counters:
// raw (content bytes), stored_pct (zstd blob / raw), gzip6_pct (gzip -6 of the serialized capture / raw).
void BM_StoredCapture(benchmark::State& state) {
  const capture::Capture& capture = SampleCaptures()[static_cast<size_t>(state.range(0))];
  const int level = static_cast<int>(state.range(1));
  if (capture.size() == 0) {
    state.SkipWithError("capture could not be collected");
    return;
  }
  state.SetLabel(state.range(0) == kLiveRoot ? "live /" : kSampleTrees[state.range(0)]);
  size_t stored = 0;
  for (auto _ : state) {
    std::string blob = wire::EncodeStoredCapture(capture, "c", "d", "2026-12-01T00:00:00Z", level);
    stored = blob.size();
    benchmark::DoNotOptimize(blob.data());
  }
  const double raw = static_cast<double>(capture.ContentBytes());
  state.counters["raw"] = raw;
  state.counters["stored_pct"] = 100.0 * static_cast<double>(stored) / raw;
  state.counters["gzip6_pct"] = 100.0 * static_cast<double>(GzipBytes(SerializedStoredCapture(capture), 6)) / raw;
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(capture.ContentBytes()));
}
BENCHMARK(BM_StoredCapture)
    ->ArgsProduct({{0, 1, 2, 3, 4, kLiveRoot}, {1, 3, wire::kStorageCompressionLevel, 19}})
    ->Unit(benchmark::kMillisecond);

// Delta storage as the server does it (CaptureIngestor: one whole capture per device, the next ones
// EncodeStoredCaptureDelta against it). range(0) live captures of "/", range(1) seconds apart; the first
// is the keyframe. Time: one delta encode of the last capture. Counters, of raw content bytes: whole_pct
// (the last alone, zstd-3: the baseline), delta_pct (mean of the deltas), per32_pct (a keyframe period of
// 32 as the server's default: (whole + 31 x mean delta) / 32), and whole_encode_ms / delta_encode_ms
// (the same capture both ways, this run) for the ack path's cost.
void BM_StoredCapture_Delta(benchmark::State& state) {
  agent::DeviceRootFs fs("/");
  agent::CollectOptions options;
  options.captured_at = "2026-12-01T00:00:00Z";
  options.page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  options.run_commands = false;
  std::vector<capture::Capture> live;
  for (int64_t i = 0; i < state.range(0); ++i) {
    if (i > 0) sleep(static_cast<unsigned>(state.range(1)));
    absl::StatusOr<capture::Capture> c = agent::CollectCapture(fs, options);
    if (!c.ok()) {
      state.SkipWithError("live capture failed");
      return;
    }
    live.push_back(*std::move(c));
  }
  const std::string keyframe_blob = wire::EncodeStoredCapture(live[0], "c0", "d", "2026-12-01T00:00:00Z", 3);
  absl::StatusOr<std::string> keyframe_bytes = wire::DecompressStoredCapture(wire::kStoredCodec, keyframe_blob);
  absl::StatusOr<std::unique_ptr<const wire::DeltaKeyframe>> keyframe =
      keyframe_bytes.ok() ? wire::DeltaKeyframe::Create(*keyframe_bytes, 3)
                          : absl::StatusOr<std::unique_ptr<const wire::DeltaKeyframe>>(keyframe_bytes.status());
  if (!keyframe.ok()) {
    state.SkipWithError("keyframe failed");
    return;
  }
  double delta_sum = 0, raw_sum = 0;
  for (size_t i = 1; i < live.size(); ++i) {
    delta_sum += static_cast<double>(
        wire::EncodeStoredCaptureDelta(live[i], "c" + std::to_string(i), "d", "2026-12-01T00:00:00Z", **keyframe)
            .size());
    raw_sum += static_cast<double>(live[i].ContentBytes());
  }
  const capture::Capture& last = live.back();
  auto ms = [](auto&& fn) {
    constexpr int kRounds = 5;
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < kRounds; ++r) fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / kRounds;
  };
  const double whole_ms = ms([&] { benchmark::DoNotOptimize(wire::EncodeStoredCapture(last, "c", "d", "t", 3)); });
  const double delta_ms =
      ms([&] { benchmark::DoNotOptimize(wire::EncodeStoredCaptureDelta(last, "c", "d", "t", **keyframe)); });
  for (auto _ : state) {
    std::string blob = wire::EncodeStoredCaptureDelta(last, "c", "d", "2026-12-01T00:00:00Z", **keyframe);
    benchmark::DoNotOptimize(blob.data());
  }
  const double raw = static_cast<double>(last.ContentBytes());
  const double whole = static_cast<double>(wire::EncodeStoredCapture(last, "c", "d", "2026-12-01T00:00:00Z", 3).size());
  const double mean_delta_pct = raw_sum > 0 ? 100.0 * delta_sum / raw_sum : 0;
  state.counters["raw"] = raw;
  state.counters["whole_pct"] = 100.0 * whole / raw;
  state.counters["delta_pct"] = mean_delta_pct;
  state.counters["per32_pct"] = (100.0 * whole / raw + 31 * mean_delta_pct) / 32;
  state.counters["whole_encode_ms"] = whole_ms;
  state.counters["delta_encode_ms"] = delta_ms;
  state.counters["keyframe_MB"] = static_cast<double>((*keyframe)->memory_bytes()) / 1e6;
}
BENCHMARK(BM_StoredCapture_Delta)->Args({4, 1})->Iterations(5)->Unit(benchmark::kMillisecond);

// ---- bytes per stored process-report row ----

// 100 captures of one device, each with range(0) processes with realistic names, values and pids; then
// the bytes of their process blocks (schema version 17: a capture's process figures are one block in its
// report row, storage/process_block.h) divided by the rows. Counter: block_B_per_row.
void BM_ProcessRowBytes(benchmark::State& state) {
  const int processes = static_cast<int>(state.range(0));
  constexpr int kCaptures = 100;
  double block_bytes = 0, rows = 0;
  for (auto _ : state) {
    state.PauseTiming();
    TempDir dir;
    const std::string path = dir.path() + "/rows.db";
    {
      absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
      if (!store.ok()) {
        state.SkipWithError(store.status().ToString().c_str());
        return;
      }
      std::vector<CaptureRecord> batch;
      for (int i = 0; i < kCaptures; ++i) {
        CaptureRecord c = MakeCapture("lab-phone-0042", i, processes);
        int p = 0;
        for (auto& [pid, pr] : c.report.processes) {
          // App names as they appear on a phone, pids in the usual range, values with real spread.
          if (p >= kFleetProcesses) pr.name = "com.vendor.app.module" + std::to_string(p);
          pr.oom_score_adj = p < 8 ? -800 + p * 100 : 900;
          pr.dma_kb = 1'000 + (p * 7919 + i * 31) % 90'000;
          pr.non_graphics_kb = *pr.pss_kb - 3'000;
          pr.native_graphics_source = p % 3 == 0 ? "heap_dump" : "none";
          ++p;
        }
        batch.push_back(std::move(c));
      }
      absl::StatusOr<std::vector<bool>> inserted = (*store)->PutCaptures(batch);
      if (!inserted.ok()) {
        state.SkipWithError(inserted.status().ToString().c_str());
        return;
      }
    }
    state.ResumeTiming();
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READONLY);
    if (!db.ok()) {
      state.SkipWithError(db.status().ToString().c_str());
      return;
    }
    absl::StatusOr<Statement> st = db->Prepare("SELECT SUM(length(processes)) FROM device_reports");
    if (!st.ok()) {
      state.SkipWithError(st.status().ToString().c_str());
      return;
    }
    absl::StatusOr<StepResult> r = st->Step();
    block_bytes = r.ok() && *r == StepResult::kRow ? static_cast<double>(st->ColumnInt64(0)) : 0;
    rows = static_cast<double>(kCaptures) * processes;
  }
  state.counters["block_B_per_row"] = block_bytes / rows;
}
BENCHMARK(BM_ProcessRowBytes)->Arg(45)->Iterations(1)->Unit(benchmark::kMillisecond);

// The stored form of a report (storage/report_codec.h) against the alternatives, one sample device
// (range(0)) with its engine report: counters json_B (ReportToJson as the server stores it), zstd3_B
// (plain zstd-3 of it), dict_B (the stored frame, built-in dictionary), decompress_us (reading it back)
// and rebuild_us (not storing it: the engine's Account + ReportToJson of the decoded capture, what
// every read would cost instead). Time: one CompressReportJson.
void BM_ReportCodec(benchmark::State& state) {
  const capture::Capture& capture = SampleCaptures()[static_cast<size_t>(state.range(0))];
  if (capture.size() == 0) {
    state.SkipWithError("capture could not be collected");
    return;
  }
  state.SetLabel(kSampleTrees[state.range(0)]);
  const std::string json = report::ReportToJson(accounting::Account(capture), -1);
  std::string blob;
  for (auto _ : state) {
    blob = CompressReportJson(json);
    benchmark::DoNotOptimize(blob.data());
  }
  std::string plain(ZSTD_compressBound(json.size()), '\0');
  const size_t plain_bytes = ZSTD_compress(plain.data(), plain.size(), json.data(), json.size(), 3);
  auto us = [](auto&& fn) {
    constexpr int kRounds = 20;
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < kRounds; ++r) fn();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kRounds;
  };
  state.counters["json_B"] = static_cast<double>(json.size());
  state.counters["zstd3_B"] = ZSTD_isError(plain_bytes) ? 0 : static_cast<double>(plain_bytes);
  state.counters["dict_B"] = static_cast<double>(blob.size());
  state.counters["decompress_us"] = us([&] { benchmark::DoNotOptimize(DecompressReportJson(blob)); });
  state.counters["rebuild_us"] =
      us([&] { benchmark::DoNotOptimize(report::ReportToJson(accounting::Account(capture), -1)); });
}
BENCHMARK(BM_ReportCodec)->DenseRange(0, kLiveRoot - 1)->Unit(benchmark::kMicrosecond);

// The ingest's report compression, against its keyframe's report (CompressReportJsonAgainst), on one
// sample device's (qcom-sm8450) reports over a day (one every 10 minutes), each against the report 8 captures
// before it. range(1): 0, free memory and each smaps' first Rss moving (testing::Later); 1, every figure
// moving (testing::Churned), as the stored-bytes benchmarks below. range(0): 1, the codec (its level, its
// thread's context kept); and two baselines in the same run, level 3 (the codec's level until it chose 7)
// with the base as prefix and the checksum: 0, a new context per report (as the codec did before it kept
// one); 2, a context kept. blob_B: the frames' mean size, what the level buys.
void BM_ReportAgainstBase(benchmark::State& state) {
  const int how = static_cast<int>(state.range(0));  // 0 a new context, 1 the codec, 2 level 3 kept
  const bool every_figure = state.range(1) == 1;
  const capture::Capture& sample = SampleCaptures()[3];
  if (sample.size() == 0) {
    state.SkipWithError("capture could not be collected");
    return;
  }
  std::vector<std::string> jsons;
  for (int minute = 0; minute < 24 * 60; minute += 10) {
    const capture::Capture moved =
        every_figure ? testing::Churned(sample, minute, testing::Churn::kEverything) : testing::Later(sample, minute);
    jsons.push_back(report::ReportToJson(accounting::Account(moved), -1));
  }
  ZSTD_CCtx* const kept = ZSTD_createCCtx();
  const auto level_3 = [kept](std::string_view json, std::string_view base, bool fresh) {
    std::string out(ZSTD_compressBound(json.size()), '\0');
    ZSTD_CCtx* cctx = fresh ? ZSTD_createCCtx() : kept;
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_refPrefix(cctx, base.data(), base.size());
    const size_t n = ZSTD_compress2(cctx, out.data(), out.size(), json.data(), json.size());
    if (fresh) ZSTD_freeCCtx(cctx);
    out.resize(ZSTD_isError(n) ? 0 : n);
    return out;
  };
  size_t i = 8;
  size_t blob_bytes = 0;
  for (auto _ : state) {
    const std::string& json = jsons[i];
    const std::string& base = jsons[i - 8];
    std::string blob = how == 1 ? CompressReportJsonAgainst(json, base) : level_3(json, base, how == 0);
    blob_bytes += blob.size();
    benchmark::DoNotOptimize(blob.data());
    i = i + 1 < jsons.size() ? i + 1 : 8;
  }
  ZSTD_freeCCtx(kept);
  const char* const labels[] = {"baseline: level 3, a new context per report", "codec (context kept per thread)",
                                "baseline: level 3, a context kept"};
  state.SetLabel(std::string(labels[how]) + (every_figure ? ", every figure moving" : ", free memory and Rss moving"));
  state.counters["json_B"] = static_cast<double>(jsons[8].size());
  state.counters["blob_B"] = static_cast<double>(blob_bytes) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReportAgainstBase)
    ->ArgNames({"how", "every_figure"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// ---- bytes per stored capture, by table and index ----

// Page bytes of every table and index (dbstat), by name, of the database at `path`; empty on error.
// PageBytesByName's sum of the tables and indexes that fit one page.
constexpr char kOnePageTables[] = "one_page_tables";

std::map<std::string, double> PageBytesByName(const std::string& path) {
  std::map<std::string, double> bytes;
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READONLY);
  if (!db.ok()) return bytes;
  absl::StatusOr<Statement> st = db->Prepare("SELECT name, SUM(pgsize), COUNT(*) FROM dbstat GROUP BY name");
  if (!st.ok()) return bytes;
  while (true) {
    absl::StatusOr<StepResult> r = st->Step();
    if (!r.ok() || *r == StepResult::kDone) break;
    bytes[st->ColumnText(0)] = static_cast<double>(st->ColumnInt64(1));
    // A table or index of one page costs a page whatever the file holds: a farm's file amortises it away.
    if (st->ColumnInt64(2) == 1) bytes[kOnePageTables] += static_cast<double>(st->ColumnInt64(1));
  }
  return bytes;
}

// How a sample device moves from one capture to the next (the `churn` argument of the footprint benchmarks):
// 0, as the first measurements had it, free memory, Cached and each smaps' first Rss (testing::Later, the
// capture `seq` 10-minute intervals on); 1, every heap and meminfo counter; 2, every figure, as on a phone in
// use (testing::Churned says what moves on each and why).
const char* const kChurnNames[] = {"free memory and first Rss moving", "heaps moving", "every figure moving"};

// `copy` (0-15): another device of the same tree, whose figures move differently (for churn 1 and 2).
capture::Capture Moved(const capture::Capture& sample, int seq, int churn, int copy = 0) {
  if (churn == 0) return testing::Later(sample, seq * kCaptureIntervalSeconds / 60);
  return testing::Churned(sample, seq * 16 + copy, churn == 1 ? testing::Churn::kHeaps : testing::Churn::kEverything);
}

// The five sample devices, range(0) captures each, one every 10 minutes with moving numbers
// (tests/support/moving_capture.h), ingested as the server does (CaptureIngestor: engine, report JSON,
// delta storage with its default keyframe period) into a real file; then every table's and index's page
// bytes (dbstat) per capture. Counters: B_per_capture (the whole file's pages, free pages included),
// B_per_capture_beyond_one_page (the same without the tables and indexes of one page, `one_page_tables`,
// which a farm's file amortises to nothing) and one `<table or index>` counter each; the time is the whole
// ingest. range(0) captures a device: 64 is the file of the first measurements; 640 (3,200 captures) is
// closer to what a farm's file holds. range(1): the keyframe period (the server's default is 64). range(2): how
// the devices move (kChurnNames; BM_CaptureMargin measures each at the margin, on both backends).
// MEMFLEET_BENCH_KEEP_DB=path keeps a copy of the database.
void BM_CaptureFootprint(benchmark::State& state) {
  const int per_device = static_cast<int>(state.range(0));
  server::DeltaOptions delta;
  delta.keyframe_every = static_cast<uint32_t>(state.range(1));
  const int churn = static_cast<int>(state.range(2));
  state.SetLabel(kChurnNames[churn]);
  const std::vector<capture::Capture> samples(SampleCaptures().begin(), SampleCaptures().begin() + kLiveRoot);
  std::map<std::string, double> bytes;
  double file_bytes = 0;
  for (auto _ : state) {
    TempDir dir;
    const std::string path = dir.path() + "/footprint.db";
    {
      absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
      if (!store.ok()) {
        state.SkipWithError(store.status().ToString().c_str());
        return;
      }
      server::CaptureIngestor ingestor(**store, nullptr, nullptr, delta);
      for (int seq = 0; seq < per_device; ++seq) {
        for (size_t d = 0; d < samples.size(); ++d) {
          const std::string device = std::string("sample-") + kSampleTrees[d];
          server::AssembledCapture a;
          a.device_id = device;
          a.capture_id = testing::CaptureId(device, seq);
          a.captured_at = TimeAt(static_cast<int64_t>(seq) * kCaptureIntervalSeconds);
          a.capture = Moved(samples[d], seq, churn);
          a.capture.AddFile("capture.json", "{\"format\": 1, \"device_id\": \"" + device + "\"}\n");
          if (!ingestor.Ingest(std::move(a)).has_ack()) {
            state.SkipWithError("a capture was not acked");
            return;
          }
        }
      }
    }
    bytes = PageBytesByName(path);
    // scripts/train-report-dictionary trains the report dictionary on this database's reports.
    if (const char* keep = getenv("MEMFLEET_BENCH_KEEP_DB")) {
      std::error_code ec;
      std::filesystem::copy_file(path, keep, std::filesystem::copy_options::overwrite_existing, ec);
    }
    file_bytes = static_cast<double>(std::filesystem::file_size(path));
  }
  const double captures = static_cast<double>(per_device) * static_cast<double>(samples.size());
  state.counters["B_per_capture"] = file_bytes / captures;
  state.counters["B_per_capture_beyond_one_page"] = (file_bytes - bytes[kOnePageTables]) / captures;
  for (const auto& [name, b] : bytes) {
    if (b > 0) state.counters[name] = b / captures;
  }
}
BENCHMARK(BM_CaptureFootprint)
    ->Args({64, 32, 0})
    ->Args({640, 32, 0})
    ->Args({640, 64, 0})
    ->Args({64, 64, 2})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// ---- bytes per capture at the margin, SQLite beside PostgreSQL ----

// The PostgreSQL server of this binary (tests/support/postgres_server.h: a temporary folder, fsync off, which
// changes no stored byte), started at first use and stopped at exit; null, with the reason printed, when it
// cannot start.
testing::PostgresServer* ThePostgresServer() {
  static const std::unique_ptr<testing::PostgresServer> server = [] {
    absl::StatusOr<std::unique_ptr<testing::PostgresServer>> started = testing::PostgresServer::Start();
    if (!started.ok()) {
      std::fprintf(stderr, "PostgreSQL: %s\n", started.status().ToString().c_str());
      return std::unique_ptr<testing::PostgresServer>();
    }
    return *std::move(started);
  }();
  return server.get();
}

// PostgreSQL's bytes of each of the store's tables (main fork, free space map and visibility map), each
// table's TOAST (its table and index, as `<table>_toast`) and each index, by name, after a VACUUM (which
// writes the maps and ends the dead versions of the rows an ingest updates, devices' last_seen_at), and
// kTotal: pg_total_relation_size summed over the tables, i.e. all of them. Empty on error.
constexpr char kTotal[] = "total";
constexpr char kPgBytesSql[] = R"sql(
SELECT t.relname, pg_relation_size(t.oid, 'main') + pg_relation_size(t.oid, 'fsm') + pg_relation_size(t.oid, 'vm')
  FROM pg_class AS t JOIN pg_namespace AS n ON n.oid = t.relnamespace
  WHERE n.nspname = current_schema() AND t.relkind = 'r'
UNION ALL
SELECT t.relname || '_toast', pg_total_relation_size(t.reltoastrelid)
  FROM pg_class AS t JOIN pg_namespace AS n ON n.oid = t.relnamespace
  WHERE n.nspname = current_schema() AND t.relkind = 'r' AND t.reltoastrelid != 0
UNION ALL
SELECT i.relname, pg_relation_size(i.oid)
  FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_class AS t ON t.oid = x.indrelid
  JOIN pg_namespace AS n ON n.oid = t.relnamespace WHERE n.nspname = current_schema() AND t.relkind = 'r'
UNION ALL
SELECT 'total', COALESCE(SUM(pg_total_relation_size(t.oid)), 0)::BIGINT
  FROM pg_class AS t JOIN pg_namespace AS n ON n.oid = t.relnamespace
  WHERE n.nspname = current_schema() AND t.relkind = 'r'
)sql";

// What the stored frames and blocks hold, whatever the backend wraps them in: payload_raw_blob (the raw
// captures: keyframes and deltas), payload_report_zstd (the report frames), payload_processes (the process
// blocks). A table's bytes against its payload's say what the backend adds (row headers, page fill).
constexpr char kPayloadSql[] =
    "SELECT (SELECT COALESCE(SUM(length(raw_blob)), 0) FROM captures), "
    "(SELECT COALESCE(SUM(length(report_zstd)), 0) FROM report_blobs), "
    "(SELECT COALESCE(SUM(length(processes)), 0) FROM device_reports)";

bool AddPayloadBytes(SqlConnection& db, std::map<std::string, double>& bytes) {
  absl::StatusOr<int64_t> rows = db.Query(kPayloadSql, {}, [&bytes](const SqlRow& row) {
    bytes["payload_raw_blob"] = static_cast<double>(row.ColumnInt64(0));
    bytes["payload_report_zstd"] = static_cast<double>(row.ColumnInt64(1));
    bytes["payload_processes"] = static_cast<double>(row.ColumnInt64(2));
  });
  if (!rows.ok()) std::fprintf(stderr, "payload: %s\n", rows.status().ToString().c_str());
  return rows.ok();
}

std::map<std::string, double> PgBytesByName(const std::string& uri) {
  std::map<std::string, double> bytes;
  absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Connect(uri);
  if (!db.ok() || !(*db)->Exec("VACUUM").ok()) return bytes;
  absl::StatusOr<int64_t> rows = (*db)->Query(kPgBytesSql, {}, [&bytes](const SqlRow& row) {
    bytes[row.ColumnText(0)] += static_cast<double>(row.ColumnInt64(1));
  });
  if (!rows.ok() || !AddPayloadBytes(**db, bytes)) {
    if (!rows.ok()) std::fprintf(stderr, "sizes: %s\n", rows.status().ToString().c_str());
    bytes.clear();
  }
  return bytes;
}

// SQLite's: PageBytesByName (dbstat: every table's and index's pages) and kTotal, their sum (the file's pages
// in use; free pages, which a growing file has none of, and the WAL left out).
std::map<std::string, double> SqliteBytesByName(const std::string& path) {
  std::map<std::string, double> bytes = PageBytesByName(path);
  bytes.erase(kOnePageTables);
  double total = 0;
  for (const auto& [name, b] : bytes) total += b;
  bytes[kTotal] = total;
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READONLY);
  if (!db.ok()) return {};
  SqliteConnection connection(*std::move(db));
  if (!AddPayloadBytes(connection, bytes)) return {};
  return bytes;
}

// What one more capture stores, all tables, indexes and TOAST, on range(0) — 0 SQLite (a real file), 1
// PostgreSQL (a real server this binary starts) — in a farm of range(2) x 5 devices (each sample tree
// range(2) times, as lab-TREE-K) ingested as the server does (CaptureIngestor, keyframe every 64, the
// default), one capture each in turn, each device moving as range(1) says (kChurnNames: 0 the footprint's
// first measurements, 1 heaps, 2 every figure). The stored bytes are measured at 64 captures a device and
// again at range(3); the counters are the difference over the captures between: B_per_capture (kTotal),
// one counter per table, TOAST and index (PgBytesByName, SqliteBytesByName) and the payload_ counters
// (AddPayloadBytes). The difference leaves out what does not grow with the history (a table's first pages,
// the device rows) and spans whole keyframe periods; devices in turn are what a farm's indexes see (each
// device's entries appended inside an index, not at its end). range(4), when not 0, is a raw window of that
// many captures (`--retain-raw-days`, RetentionPolicy::raw): every 8 rounds ApplyRetention drops the raw text
// of the captures older than it, as the server's worker does (its VACUUM on PostgreSQL, incremental vacuum on
// SQLite), so the margin is what a capture beyond the window keeps (its row, report, process block and
// indexes) — a capture's cost once past the window does not depend on the window's length, which 16
// captures stand in for (days of them would not pass a keyframe period in the run). Time: the whole run.
//   MEMFLEET_BENCH_FULL_MARGIN=1 build/bin/storage_benchmark --benchmark_filter=CaptureMargin   # 20 devices, 64 -> 192
// Without it (CI), 5 devices from 64 to 128, every figure moving only: seconds.
constexpr int kMarginFrom = 64;

void BM_CaptureMargin(benchmark::State& state) {
  const bool postgres = state.range(0) == 1;
  const int churn = static_cast<int>(state.range(1));
  const int copies = static_cast<int>(state.range(2));
  const int margin_to = static_cast<int>(state.range(3));
  const int raw_window = static_cast<int>(state.range(4));  // captures; 0: raw text kept
  state.SetLabel(std::string(postgres ? "PostgreSQL, " : "SQLite, ") + kChurnNames[churn] +
                 (raw_window > 0 ? ", beyond the raw window" : ""));
  const std::vector<capture::Capture> samples(SampleCaptures().begin(), SampleCaptures().begin() + kLiveRoot);
  std::map<std::string, double> at_from, at_to;
  for (auto _ : state) {
    TempDir dir;
    const std::string path = dir.path() + "/margin.db";
    std::string uri;
    if (postgres) {
      testing::PostgresServer* server = ThePostgresServer();
      absl::StatusOr<std::string> created =
          server != nullptr ? server->NewDatabase() : absl::UnavailableError("no PostgreSQL server");
      if (!created.ok()) {
        state.SkipWithError(created.status().ToString().c_str());
        return;
      }
      uri = *created;
    }
    absl::StatusOr<std::unique_ptr<SqlStore>> store = postgres ? OpenPgStore(uri) : OpenSqliteStore(path);
    if (!store.ok()) {
      state.SkipWithError(store.status().ToString().c_str());
      return;
    }
    const auto measure = [&] { return postgres ? PgBytesByName(uri) : SqliteBytesByName(path); };
    server::CaptureIngestor ingestor(**store, nullptr, nullptr, server::DeltaOptions{});
    for (int seq = 0; seq < margin_to; ++seq) {
      if (seq == kMarginFrom) at_from = measure();
      for (size_t i = 0; i < samples.size() * static_cast<size_t>(copies); ++i) {
        const size_t d = i % samples.size();
        const int copy = static_cast<int>(i / samples.size());
        const std::string device = std::string("lab-") + kSampleTrees[d] + "-" + std::to_string(copy);
        server::AssembledCapture a;
        a.device_id = device;
        a.capture_id = testing::CaptureId(device, seq);
        a.captured_at = TimeAt(static_cast<int64_t>(seq) * kCaptureIntervalSeconds);
        a.capture = Moved(samples[d], seq, churn, copy);
        a.capture.AddFile("capture.json", "{\"format\": 1, \"device_id\": \"" + device + "\"}\n");
        if (!ingestor.Ingest(std::move(a)).has_ack()) {
          state.SkipWithError("a capture was not acked");
          return;
        }
      }
      if (raw_window > 0 && seq % 8 == 7) {
        // A day's window whose "now" puts its edge raw_window captures back.
        server::RetentionPolicy policy;
        policy.raw = std::chrono::hours(24);
        const int64_t now_ms =
            (kEpoch20240101 + static_cast<int64_t>(seq - raw_window) * kCaptureIntervalSeconds + 24 * 3600) * 1000;
        server::RetentionOptions options;
        options.allow_vacuum = false;
        absl::StatusOr<server::RetentionRun> run = server::ApplyRetention(**store, policy, now_ms, options);
        if (!run.ok() || !run->failures.empty()) {
          state.SkipWithError("the raw window could not be applied");
          return;
        }
      }
    }
    at_to = measure();
  }
  if (at_from.count(kTotal) == 0 || at_to.count(kTotal) == 0) {
    state.SkipWithError("the stored bytes could not be measured");
    return;
  }
  const double captures =
      static_cast<double>(margin_to - kMarginFrom) * static_cast<double>(samples.size()) * static_cast<double>(copies);
  state.counters["B_per_capture"] = (at_to[kTotal] - at_from[kTotal]) / captures;
  for (const auto& [name, b] : at_to) {
    const double margin = (b - at_from[name]) / captures;
    if (name != kTotal && margin != 0) state.counters[name] = margin;
  }
}
const bool kCaptureMarginRegistered = [] {
  const bool full = getenv("MEMFLEET_BENCH_FULL_MARGIN") != nullptr;
  benchmark::RegisterBenchmark("BM_CaptureMargin", BM_CaptureMargin)
      ->ArgNames({"postgres", "churn", "copies", "to", "raw_window"})
      ->ArgsProduct({{0, 1},
                     full ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{2},
                     {full ? 4 : 1},
                     {full ? 192 : 128},
                     {0, 16}})
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  return true;
}();

// ---- a year of one device through retention ----

// One device, a capture every 5 minutes for 365 days (105,120 captures), stored as the server stores them
// but without running the engine on each: the qcom-sm8450 sample's real report (compressed as stored) with
// its total moving, 13 processes, a 700-byte delta blob and every range(1)-th capture a 20 kB keyframe (32,
// and 64: what a longer keyframe period costs or saves once hours are thinned). Then
// ApplyRetention at the year's end with --retain-full-days 30 --retain-hourly-days 365 (the simulated
// clock is the year's end). Counters: file_MB before and after, kept captures, trend_before_ms and
// trend_after_ms (the 1-year trend of one process, before and after, this run), retention_s.
// range(0) days: 365 with MEMFLEET_BENCH_FULL_YEAR=1 (~3.5 min, 750 MB in $TMPDIR), else 32 (CI: seconds,
// the last 2 days thinned).
void BM_RetentionYear(benchmark::State& state) {
  const int kDays = static_cast<int>(state.range(0));
  const int keyframe_every = static_cast<int>(state.range(1));
  constexpr int kPerDay = 288;
  const capture::Capture& sample = SampleCaptures()[3];  // qcom-sm8450
  if (sample.size() == 0) {
    state.SkipWithError("capture could not be collected");
    return;
  }
  const report::Report sample_report = accounting::Account(sample);
  const std::string sample_json = report::ReportToJson(sample_report, -1);
  double before_mb = 0, after_mb = 0, trend_before_ms = 0, trend_after_ms = 0, retention_s = 0, kept = 0;
  for (auto _ : state) {
    TempDir dir;
    const std::string path = dir.path() + "/year.db";
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
    if (!store.ok()) {
      state.SkipWithError(store.status().ToString().c_str());
      return;
    }
    std::string keyframe;
    for (int day = 0; day < kDays; ++day) {
      std::vector<CaptureRecord> batch;
      for (int i = 0; i < kPerDay; ++i) {
        const int seq = day * kPerDay + i;
        CaptureRecord c;
        c.device_id = "year-phone";
        c.capture_id = "year-phone-" + std::to_string(seq);
        c.captured_at = TimeAt(static_cast<int64_t>(seq) * 300);
        const bool is_keyframe = seq % keyframe_every == 0;
        c.raw_codec = is_keyframe ? "zstd+proto" : "zstd-delta+proto";
        c.raw_blob = std::string(is_keyframe ? 20'000 : 700, static_cast<char>(seq & 0x7f));
        if (is_keyframe) keyframe = c.capture_id;
        c.raw_base = is_keyframe ? "" : keyframe;
        c.report = sample_report;
        c.report.device.total_kb = *sample_report.device.total_kb + (seq * 7919) % 50'000;
        c.report_json = sample_json;
        batch.push_back(std::move(c));
      }
      if (absl::StatusOr<std::vector<bool>> r = (*store)->PutCaptures(batch); !r.ok()) {
        state.SkipWithError(r.status().ToString().c_str());
        return;
      }
    }
    auto trend_ms = [&] {
      auto start = std::chrono::steady_clock::now();
      absl::StatusOr<std::vector<HistoryRow>> r =
          (*store)->ProcessHistory("year-phone", "system_server", "total_kb", "", 0);
      benchmark::DoNotOptimize(r);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    trend_ms();  // warm the page cache, as for the second
    trend_before_ms = trend_ms();
    before_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    const int64_t end_ms = (kEpoch20240101 + int64_t{kDays} * 86400) * 1000;
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<server::RetentionRun> run = server::ApplyRetention(
        **store, {std::chrono::hours(24 * 30), std::chrono::hours(24 * 365)}, end_ms, server::RetentionOptions{});
    retention_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!run.ok()) {
      state.SkipWithError(run.status().ToString().c_str());
      return;
    }
    kept = static_cast<double>(run->captures_before - run->deleted);
    trend_ms();
    trend_after_ms = trend_ms();
    after_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  }
  state.counters["file_MB_before"] = before_mb;
  state.counters["file_MB_after"] = after_mb;
  state.counters["kept"] = kept;
  state.counters["trend_before_ms"] = trend_before_ms;
  state.counters["trend_after_ms"] = trend_after_ms;
  state.counters["retention_s"] = retention_s;
}
const bool kRetentionYearRegistered = [] {
  benchmark::RegisterBenchmark("BM_RetentionYear", BM_RetentionYear)
      ->Args({getenv("MEMFLEET_BENCH_FULL_YEAR") != nullptr ? 365 : 32, 32})
      ->Args({getenv("MEMFLEET_BENCH_FULL_YEAR") != nullptr ? 365 : 32, 64})
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
  return true;
}();

}  // namespace
}  // namespace memfleet::storage

BENCHMARK_MAIN();
