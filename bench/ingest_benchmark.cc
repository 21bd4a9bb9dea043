// Server ingest against its physical limit, in one process and one run: N raw agents stream the sample
// capture trees (tests/data/captures/*/tree, as the agent collects them: 256 KiB chunks, gzip, at most
// 4 captures unacked) over loopback to (1) a bare AgentService that reads the same messages and acks each
// End at once — no assembly, engine or storage — and (2) the real LabServer on a temp SQLite file, which
// acks after the capture is committed. Prints captures/s of both and their ratio, then a single-threaded
// breakdown of the server's per-capture work (assemble, engine, JSON, zstd, store commit) with the commit
// measured one capture a transaction and in groups, as the server's writer commits them.
//
//   bin/ingest_benchmark                        # 4 agents x 10 captures, 3 rounds, breakdown
//   bin/ingest_benchmark --quick                # CI: 2 agents x 2 captures, 1 round
//   bin/ingest_benchmark --only=real --rounds=1 # for `perf record -g` of the real server alone
//   bin/ingest_benchmark --only=postgres --rounds=1  # the same on PostgreSQL alone
//   bin/ingest_benchmark --agents=16 --one-per-commit  # also the real server committing one capture a
//                                                      # transaction, each round, for group commit's gain
//
// Agents and servers share the machine's cores, so both figures include the agents' own cost (gzip on
// send); the ratio is the meaningful number. Exit status 1 when a capture is not acked.
#include <stdlib.h>
#include <unistd.h>
#include <time.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "agent/header_rewrite.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "proto/capture_codec.h"
#include "proto/capture_digest.h"
#include "proto/capture_id.h"
#include "accounting/account.h"
#include "report/report_json.h"
#include "server/ingest/capture_ingestor.h"
#include "server/ingest/delta_keyframes.h"
#include "server/lab_server.h"
#include "storage/postgres/pg_connection.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/postgres_server.h"
#include "tests/support/test_paths.h"

namespace memfleet::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kChunkBytes = 256 * 1024;  // the agent's default (transport.h)
constexpr size_t kWindow = 4;               // the agent's max_in_flight
const char* const kTrees[] = {"generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1"};

struct Flags {
  int agents = 4;
  int captures_per_agent = 10;
  int rounds = 3;
  size_t workers = 2;
  std::string only;  // "", "bare" or "real"
  bool breakdown = true;
  uint32_t keyframe_every = server::DeltaOptions().keyframe_every;  // 1: every capture stored whole
  // false: each device sends its own sample tree every time, as a phone does; true: each capture is the
  // next sample tree, so no capture resembles its device's previous one (delta storage's worst case).
  bool cycle_trees = false;
  // Also the real server on PostgreSQL (a server this binary starts, fsync on like SQLite's FULL).
  bool postgres = false;
  bool postgres_fsync = true;  // off: what the disk flush costs (not a setting to run a server with)
  // Also the real server with its writer committing one capture a transaction (max_batch 1), as before
  // group commit.
  bool one_per_commit = false;
};

bool ParseFlags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&a](const char* name) -> const char* {
      size_t n = std::strlen(name);
      return a.compare(0, n, name) == 0 ? a.c_str() + n : nullptr;
    };
    if (a == "--quick") {
      f.agents = 2;
      f.captures_per_agent = 2;
      f.rounds = 1;
    } else if (const char* v = value("--agents=")) {
      f.agents = std::max(1, atoi(v));
    } else if (const char* v = value("--captures=")) {
      f.captures_per_agent = std::max(1, atoi(v));
    } else if (const char* v = value("--rounds=")) {
      f.rounds = std::max(1, atoi(v));
    } else if (const char* v = value("--workers=")) {
      f.workers = static_cast<size_t>(std::max(1, atoi(v)));
    } else if (const char* v = value("--only=")) {
      f.only = v;
      f.breakdown = false;
      if (f.only == "postgres") f.postgres = true;
    } else if (const char* v = value("--keyframe-every=")) {
      f.keyframe_every = static_cast<uint32_t>(std::max(1, atoi(v)));
    } else if (a == "--cycle-trees") {
      f.cycle_trees = true;
    } else if (a == "--postgres") {
      f.postgres = true;
    } else if (a == "--postgres-no-fsync") {
      f.postgres = true;
      f.postgres_fsync = false;
    } else if (a == "--no-breakdown") {
      f.breakdown = false;
    } else if (a == "--one-per-commit") {
      f.one_per_commit = true;
    } else {
      std::fprintf(stderr,
                   "usage: ingest_benchmark [--quick] [--agents=N] [--captures=K] [--rounds=R] [--workers=W] "
                   "[--only=bare|real|postgres] [--keyframe-every=N] [--cycle-trees] [--postgres] "
                   "[--postgres-no-fsync] [--no-breakdown] "
                   "[--one-per-commit]\n");
      return false;
    }
  }
  return true;
}

double CpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// This thread's CPU time: the commit's own work, without its waits for the disk.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// User and system CPU of a process (/proc/PID/stat), with its reaped children's when `with_reaped`; -1
// when it is gone. Its parent's pid in `parent`.
double ProcessCpuSeconds(const std::string& pid, bool with_reaped, std::string* parent) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t name_end = stat.rfind(')');  // the command name may hold spaces
  if (name_end == std::string::npos) return -1;
  std::istringstream fields(stat.substr(name_end + 2));
  std::vector<std::string> f;  // from field 3 (state) on
  for (std::string v; fields >> v && f.size() < 15;) f.push_back(v);
  if (f.size() < 15) return -1;
  if (parent != nullptr) *parent = f[1];
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  double cpu = std::stod(f[11]) + std::stod(f[12]);             // utime, stime
  if (with_reaped) cpu += std::stod(f[13]) + std::stod(f[14]);  // cutime, cstime
  return cpu / ticks;
}

// The CPU PostgreSQL's processes have used so far: the postmaster's, its backends' and workers' while
// they run, and theirs once it reaped them. `data_dir`'s postmaster.pid names the postmaster.
double PostgresCpuSeconds(const std::string& data_dir) {
  std::ifstream pid_file(data_dir + "/postmaster.pid");
  std::string postmaster;
  if (!std::getline(pid_file, postmaster)) return 0;
  double cpu = std::max(0.0, ProcessCpuSeconds(postmaster, /*with_reaped=*/true, nullptr));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0]))) continue;
    std::string parent;
    const double child = ProcessCpuSeconds(pid, /*with_reaped=*/false, &parent);
    if (child > 0 && parent == postmaster) cpu += child;
  }
  return cpu;
}

std::string TimeAt(int index) {
  // 2026-11-30T00:00:00Z plus `index` minutes (index < 1440).
  char buf[32];
  std::snprintf(buf, sizeof buf, "2026-11-30T%02d:%02d:00Z", (index / 60) % 24, index % 60);
  return buf;
}

// One capture as the agent sends it: its messages (Begin, chunks, End), its id and content size.
struct WireCapture {
  std::string capture_id;
  uint64_t content_bytes = 0;
  std::vector<v1::AgentMessage> messages;
};

struct AgentLoad {
  std::string device_id;
  std::vector<WireCapture> captures;
};

std::vector<v1::AgentMessage> CaptureMessages(const capture::Capture& c, const std::string& id, const std::string& at) {
  return wire::CaptureStreamMessages(c, {id, at, ""}, kChunkBytes);
}

// The five trees collected once, as the agent would (CaptureTreeFs + CollectCapture).
bool LoadTemplates(std::vector<capture::Capture>& out) {
  for (const char* name : kTrees) {
    agent::CaptureTreeFs fs(testing::TestData(std::string("captures/") + name + "/tree"));
    absl::StatusOr<capture::Capture> c = agent::CollectCapture(fs, agent::CollectOptions{});
    if (!c.ok()) {
      std::fprintf(stderr, "collect %s: %s\n", name, c.status().ToString().c_str());
      return false;
    }
    out.push_back(*std::move(c));
  }
  return true;
}

// Each agent replays the trees in turn as its own device (capture.json rewritten, as the agent does).
bool BuildLoads(const Flags& f, const std::vector<capture::Capture>& templates, std::vector<AgentLoad>& loads) {
  for (int a = 0; a < f.agents; ++a) {
    AgentLoad load;
    load.device_id = "bench-" + std::to_string(a);
    for (int k = 0; k < f.captures_per_agent; ++k) {
      capture::Capture c = templates[static_cast<size_t>(a + (f.cycle_trees ? k : 0)) % templates.size()];
      const std::string at = TimeAt(k);
      if (const std::string* header = c.FileContent("capture.json")) {
        absl::StatusOr<std::string> h = agent::RewriteCaptureHeader(*header, load.device_id, at);
        if (!h.ok()) {
          std::fprintf(stderr, "rewrite capture.json: %s\n", h.status().ToString().c_str());
          return false;
        }
        c.AddFile("capture.json", *std::move(h));
      }
      WireCapture w;
      absl::StatusOr<std::string> id = wire::MakeCaptureId(load.device_id, at, "0123abcd", k + 1);
      if (!id.ok()) {
        std::fprintf(stderr, "capture id: %s\n", id.status().ToString().c_str());
        return false;
      }
      w.capture_id = *std::move(id);
      w.content_bytes = c.ContentBytes();
      w.messages = CaptureMessages(c, w.capture_id, at);
      load.captures.push_back(std::move(w));
    }
    loads.push_back(std::move(load));
  }
  return true;
}

// ---- the bare service: the transport alone ----

class BareAgentService final : public v1::AgentService::Service {
 public:
  grpc::Status Connect(grpc::ServerContext* /*context*/,
                       grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream) override {
    v1::AgentMessage msg;
    if (!stream->Read(&msg) || !msg.has_hello()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Hello first");
    }
    v1::ServerMessage welcome;
    welcome.mutable_welcome()->set_server_version("bare");
    if (!stream->Write(welcome)) return grpc::Status::OK;
    while (stream->Read(&msg)) {
      if (!msg.has_end()) continue;
      v1::ServerMessage ack;
      ack.mutable_ack()->set_capture_id(msg.end().capture_id());
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }
};

// Built like LabServer's (message size, gzip answers) so that only the work behind the stream differs.
std::unique_ptr<grpc::Server> StartBare(BareAgentService& service, int& port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(8 << 20);
  builder.SetDefaultCompressionAlgorithm(GRPC_COMPRESS_GZIP);
  return builder.BuildAndStart();
}

// ---- the agents ----

struct AgentResult {
  size_t acked = 0;
  size_t rejected = 0;
  std::string error;
};

// One stream: Hello, then the captures with at most kWindow unacked, then waits for every answer.
AgentResult RunAgent(const std::string& target, const AgentLoad& load) {
  AgentResult result;
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // one TCP connection per agent, as separate devices
  args.SetMaxReceiveMessageSize(8 << 20);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  std::unique_ptr<v1::AgentService::Stub> stub = v1::AgentService::NewStub(channel);
  grpc::ClientContext context;
  context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>> stream = stub->Connect(&context);

  v1::AgentMessage hello;
  v1::DeviceInfo* d = hello.mutable_hello()->mutable_device();
  d->set_device_id(load.device_id);
  d->set_model("bench");
  d->set_page_size(4096);
  d->set_agent_version("ingest-benchmark");
  v1::ServerMessage m;
  if (!stream->Write(hello) || !stream->Read(&m) || !m.has_welcome()) {
    result.error = "no Welcome";
    stream->Finish();
    return result;
  }

  std::mutex mu;
  std::condition_variable cv;
  size_t answered = 0;
  std::thread reader([&] {
    v1::ServerMessage in;
    while (stream->Read(&in)) {
      if (!in.has_ack() && !in.has_rejected()) continue;
      std::lock_guard<std::mutex> lock(mu);
      ++answered;
      if (in.has_ack()) {
        ++result.acked;
      } else {
        ++result.rejected;
        if (result.error.empty()) result.error = in.rejected().message();
      }
      cv.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu);
    answered = load.captures.size() + 1;  // stream over: release the writer
    cv.notify_all();
  });

  bool broken = false;
  for (size_t k = 0; k < load.captures.size() && !broken; ++k) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return k - std::min(k, answered) < kWindow; });
      if (answered > load.captures.size()) break;
    }
    for (const v1::AgentMessage& msg : load.captures[k].messages) {
      if (!stream->Write(msg)) {
        broken = true;
        break;
      }
    }
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return answered >= load.captures.size(); });
  }
  stream->WritesDone();
  reader.join();
  grpc::Status s = stream->Finish();
  if (result.acked < load.captures.size() && result.error.empty()) {
    result.error = broken ? "stream broken" : s.error_message();
  }
  return result;
}

struct Run {
  double seconds = 0;
  double cpu_seconds = 0;
  size_t acked = 0;
  size_t expected = 0;
  uint64_t content_bytes = 0;
  uint64_t stored_blob_bytes = 0;  // real runs: raw blobs as stored
  uint64_t stored_raw_bytes = 0;
  std::string error;
  // A run on PostgreSQL, while the agents sent: its server processes' CPU, and this process's round trips
  // and statements to it.
  double postgres_cpu_seconds = 0;
  uint64_t postgres_round_trips = 0;
  uint64_t postgres_statements = 0;
  double captures_per_s() const { return seconds > 0 ? static_cast<double>(acked) / seconds : 0; }
};

// `postgres_data_dir`: the PostgreSQL server the real server stores in, whose cost is measured too.
Run RunAgents(const std::string& target, const std::vector<AgentLoad>& loads,
              const std::string& postgres_data_dir = "") {
  Run run;
  for (const AgentLoad& l : loads) {
    run.expected += l.captures.size();
    for (const WireCapture& w : l.captures) run.content_bytes += w.content_bytes;
  }
  std::vector<AgentResult> results(loads.size());
  std::vector<std::thread> threads;
  const double postgres_cpu0 = postgres_data_dir.empty() ? 0 : PostgresCpuSeconds(postgres_data_dir);
  const uint64_t round_trips0 = storage::PgConnection::ProcessRoundTrips();
  const uint64_t statements0 = storage::PgConnection::ProcessStatements();
  const double cpu0 = CpuSeconds();
  const Clock::time_point t0 = Clock::now();
  for (size_t i = 0; i < loads.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = RunAgent(target, loads[i]); });
  }
  for (std::thread& t : threads) t.join();
  run.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  run.cpu_seconds = CpuSeconds() - cpu0;
  if (!postgres_data_dir.empty()) {
    run.postgres_cpu_seconds = PostgresCpuSeconds(postgres_data_dir) - postgres_cpu0;
    run.postgres_round_trips = storage::PgConnection::ProcessRoundTrips() - round_trips0;
    run.postgres_statements = storage::PgConnection::ProcessStatements() - statements0;
  }
  for (const AgentResult& r : results) {
    run.acked += r.acked;
    if (!r.error.empty() && run.error.empty()) run.error = r.error;
  }
  return run;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/memfleet_ingest_bench_XXXXXX";
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

Run RunBare(const std::vector<AgentLoad>& loads) {
  BareAgentService service;
  int port = 0;
  std::unique_ptr<grpc::Server> server = StartBare(service, port);
  if (server == nullptr || port == 0) {
    Run r;
    r.error = "bare server did not start";
    return r;
  }
  Run r = RunAgents("127.0.0.1:" + std::to_string(port), loads);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  return r;
}

// `db`: a PostgreSQL URI (of the server whose data is in `postgres_data_dir`); empty: a new SQLite file.
Run RunReal(const std::vector<AgentLoad>& loads, size_t workers, uint32_t keyframe_every, const std::string& db = "",
            size_t max_batch = server::CaptureWriter::Options().max_batch, const std::string& postgres_data_dir = "") {
  TempDir dir;
  server::LabServerOptions options;
  options.db_path = db.empty() ? dir.path() + "/memfleet.db" : db;
  options.workers = workers;
  options.writer.max_batch = max_batch;
  options.delta.keyframe_every = keyframe_every;
  options.delta.enabled = keyframe_every > 1;
  absl::StatusOr<std::unique_ptr<server::LabServer>> s = server::LabServer::Start(options);
  if (!s.ok()) {
    Run r;
    r.error = s.status().ToString();
    return r;
  }
  Run r = RunAgents((*s)->address(), loads, postgres_data_dir);
  absl::StatusOr<storage::Store::Stats> stats = (*s)->store().GetStats();
  if (!stats.ok() || stats->captures != r.expected) {
    if (r.error.empty()) r.error = "the store does not hold every acked capture";
  } else {
    r.stored_blob_bytes = stats->raw_blob_bytes;
    r.stored_raw_bytes = stats->raw_bytes;
  }
  (*s)->Stop();
  return r;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ---- where the time goes: the real server's per-capture steps, one at a time on one thread ----

struct Step {
  const char* name;
  double total_s = 0;
};

bool Breakdown(const std::vector<AgentLoad>& loads, uint32_t keyframe_every) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenSqliteStore(dir.path() + "/breakdown.db");
  if (!store.ok()) {
    std::fprintf(stderr, "breakdown store: %s\n", store.status().ToString().c_str());
    return false;
  }
  enum { kSerialize, kAssemble, kAccount, kJson, kZstdServer, kZstd9, kStore, kCount };
  Step steps[kCount] = {{"proto serialize (agent side, for scale)"},
                        {"assemble chunks (CaptureAssembler)"},
                        {"engine (Account)"},
                        {"report JSON (ReportToJson)"},
                        {"zstd stored form (delta of the keyframe, or whole)"},
                        {"zstd-3 whole (for comparison; every capture before)"},
                        {"store commit (PutCapture, synchronous=FULL)"}};
  server::DeltaOptions delta;
  delta.keyframe_every = keyframe_every;
  delta.enabled = keyframe_every > 1;
  server::DeltaKeyframes keyframes(delta, store->get());  // as CaptureIngestor keeps them
  size_t n = 0, deltas = 0;
  uint64_t raw = 0, z_server = 0, z9 = 0;
  auto timed = [](Step& s, auto&& fn) {
    Clock::time_point t0 = Clock::now();
    fn();
    s.total_s += std::chrono::duration<double>(Clock::now() - t0).count();
  };
  std::vector<storage::CaptureRecord> records;  // committed again below, in groups
  double commit_cpu_s = 0;
  for (const AgentLoad& load : loads) {
    for (const WireCapture& w : load.captures) {
      size_t bytes = 0;
      timed(steps[kSerialize], [&] {
        for (const v1::AgentMessage& m : w.messages) bytes += m.SerializeAsString().size();
      });
      capture::Capture capture;
      bool ok = true;
      timed(steps[kAssemble], [&] {
        wire::CaptureAssembler a;
        ok = a.Begin(w.messages.front().begin()).ok();
        for (size_t i = 1; ok && i + 1 < w.messages.size(); ++i) ok = a.AddChunk(w.messages[i].chunk()).ok();
        absl::StatusOr<capture::Capture> c = a.Finish(w.messages.back().end());
        ok = ok && c.ok();
        if (c.ok()) capture = *std::move(c);
      });
      if (!ok) {
        std::fprintf(stderr, "breakdown: capture %s did not assemble\n", w.capture_id.c_str());
        return false;
      }
      storage::CaptureRecord record;
      timed(steps[kAccount], [&] { record.report = accounting::Account(capture); });
      record.report.device_id = load.device_id;
      record.report.captured_at = w.messages.front().begin().captured_at();
      timed(steps[kJson], [&] { record.report_json = report::ReportToJson(record.report, -1); });
      // As CaptureIngestor::Prepare (a new keyframe's digest is built at its device's next capture, read
      // back from the store: timed here too).
      timed(steps[kZstdServer], [&] {
        server::DeltaKeyframes::StoredForm form = keyframes.Encode(
            capture, w.capture_id, load.device_id, record.report.captured_at, server::kIngestCompressionLevel);
        record.raw_codec = form.codec;
        record.raw_blob = std::move(form.blob);
        record.raw_base = form.base;
      });
      deltas += record.raw_codec == wire::kDeltaCodec;
      std::string blob9;
      timed(steps[kZstd9], [&] {
        blob9 = wire::EncodeStoredCapture(capture, w.capture_id, load.device_id, record.report.captured_at,
                                          server::kIngestCompressionLevel);
      });
      record.raw_bytes = capture.ContentBytes();
      record.capture_id = w.capture_id;
      record.device_id = load.device_id;
      record.captured_at = record.report.captured_at;
      record.received_at = record.captured_at;
      bool stored = false;
      const double cpu0 = ThreadCpuSeconds();
      timed(steps[kStore], [&] {
        absl::StatusOr<bool> r = (*store)->PutCapture(record);
        stored = r.ok() && *r;
      });
      commit_cpu_s += ThreadCpuSeconds() - cpu0;
      if (!stored) {
        std::fprintf(stderr, "breakdown: capture %s not stored\n", w.capture_id.c_str());
        return false;
      }
      keyframes.Stored(load.device_id, w.capture_id, record.raw_base, record.raw_blob.size());
      raw += record.raw_bytes;
      z_server += record.raw_blob.size();
      z9 += blob9.size();
      ++n;
      records.push_back(std::move(record));
    }
  }
  double server_total = 0;
  for (int i = kAssemble; i < kCount; ++i) {
    if (i != kZstd9) server_total += steps[i].total_s;
  }
  std::printf("\nbreakdown, one thread, %zu captures (%.2f MB raw each on average):\n", n,
              static_cast<double>(raw) / static_cast<double>(n) / 1e6);
  std::printf("  %-52s %9s %7s\n", "step", "ms/capt", "share");
  for (int i = 0; i < kCount; ++i) {
    const double ms = steps[i].total_s * 1e3 / static_cast<double>(n);
    const bool in_server = i != kSerialize && i != kZstd9;
    if (in_server) {
      std::printf("  %-52s %9.2f %6.1f%%\n", steps[i].name, ms, 100.0 * steps[i].total_s / server_total);
    } else {
      std::printf("  %-52s %9.2f %7s\n", steps[i].name, ms, "-");
    }
  }
  std::printf("  %-52s %9.2f  => %.1f captures/s per core\n", "server total (assemble..commit)",
              server_total * 1e3 / static_cast<double>(n), static_cast<double>(n) / server_total);
  std::printf("  stored size: %.2f%% of raw (%zu of %zu captures as deltas); whole at zstd-%d %.2f%%\n",
              100.0 * static_cast<double>(z_server) / static_cast<double>(raw), deltas, n,
              server::kIngestCompressionLevel, 100.0 * static_cast<double>(z9) / static_cast<double>(raw));
  // The writer's side: the same records committed one a transaction (above) and in groups, each into a
  // new file, wall and CPU time per capture.
  std::printf("\ncommit (the writer's thread), same %zu records:\n", n);
  std::printf("  %-52s %9.2f ms wall, %.2f ms CPU\n", "one capture a transaction (PutCapture)",
              steps[kStore].total_s * 1e3 / static_cast<double>(n), commit_cpu_s * 1e3 / static_cast<double>(n));
  for (size_t group : {size_t{8}, size_t{32}}) {
    TempDir group_dir;
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> g =
        storage::OpenSqliteStore(group_dir.path() + "/group.db", storage::SqliteStoreOptions());
    if (!g.ok()) return false;
    const double cpu0 = ThreadCpuSeconds();
    const Clock::time_point t0 = Clock::now();
    for (size_t i = 0; i < records.size(); i += group) {
      std::vector<storage::CaptureRecord> batch(
          records.begin() + static_cast<std::ptrdiff_t>(i),
          records.begin() + static_cast<std::ptrdiff_t>(std::min(records.size(), i + group)));
      if (!(*g)->PutCaptures(batch).ok()) {
        std::fprintf(stderr, "breakdown: a group of %zu was not stored\n", group);
        return false;
      }
    }
    const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    const double cpu_s = ThreadCpuSeconds() - cpu0;
    char name[64];
    std::snprintf(name, sizeof name, "in groups of %zu (PutCaptures)", group);
    std::printf("  %-52s %9.2f ms wall, %.2f ms CPU\n", name, wall_s * 1e3 / static_cast<double>(n),
                cpu_s * 1e3 / static_cast<double>(n));
  }
  return true;
}

int Main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, f)) return 2;
  std::vector<capture::Capture> templates;
  if (!LoadTemplates(templates)) return 1;
  std::vector<AgentLoad> loads;
  if (!BuildLoads(f, templates, loads)) return 1;
  size_t total = 0;
  uint64_t bytes = 0;
  for (const AgentLoad& l : loads) {
    total += l.captures.size();
    for (const WireCapture& w : l.captures) bytes += w.content_bytes;
  }
  std::printf("ingest: %d agents x %d captures = %zu captures, %.1f MB raw, %zu server workers, %u cores\n", f.agents,
              f.captures_per_agent, total, static_cast<double>(bytes) / 1e6, f.workers,
              std::thread::hardware_concurrency());

  std::vector<double> bare_rates, real_rates, pg_rates, one_rates, bare_cpu, real_cpu, pg_cpu, one_cpu;
  // PostgreSQL rounds, a capture: its server processes' CPU, and this process's round trips and statements.
  std::vector<double> pg_server_cpu, pg_round_trips, pg_statements;
  bool failed = false;
  std::unique_ptr<testing::PostgresServer> pg;
  if (f.postgres) {
    absl::StatusOr<std::unique_ptr<testing::PostgresServer>> started = testing::PostgresServer::Start(f.postgres_fsync);
    if (!started.ok()) {
      std::fprintf(stderr, "PostgreSQL: %s\n", started.status().ToString().c_str());
      return 1;
    }
    pg = *std::move(started);
  }
  for (int round = 0; round < f.rounds; ++round) {
    if (f.only != "real" && f.only != "postgres") {
      Run b = RunBare(loads);
      if (b.acked != b.expected) {
        std::fprintf(stderr, "bare: %zu of %zu acked: %s\n", b.acked, b.expected, b.error.c_str());
        failed = true;
      }
      bare_rates.push_back(b.captures_per_s());
      bare_cpu.push_back(b.cpu_seconds * 1e3 / static_cast<double>(std::max<size_t>(b.acked, 1)));
      std::printf("round %d bare: %7.1f captures/s  (%.2f s wall, %.1f ms CPU/capture incl. agents)\n", round,
                  b.captures_per_s(), b.seconds, bare_cpu.back());
    }
    if (f.only != "bare" && f.only != "postgres") {
      Run r = RunReal(loads, f.workers, f.keyframe_every);
      if (r.acked != r.expected || !r.error.empty()) {
        std::fprintf(stderr, "real: %zu of %zu acked: %s\n", r.acked, r.expected, r.error.c_str());
        failed = true;
      }
      real_rates.push_back(r.captures_per_s());
      real_cpu.push_back(r.cpu_seconds * 1e3 / static_cast<double>(std::max<size_t>(r.acked, 1)));
      std::printf(
          "round %d real: %7.1f captures/s  (%.2f s wall, %.1f ms CPU/capture incl. agents; stored %.2f%% of raw)\n",
          round, r.captures_per_s(), r.seconds, real_cpu.back(),
          r.stored_raw_bytes > 0
              ? 100.0 * static_cast<double>(r.stored_blob_bytes) / static_cast<double>(r.stored_raw_bytes)
              : 0.0);
    }
    if (f.one_per_commit && f.only != "bare") {
      Run r = RunReal(loads, f.workers, f.keyframe_every, "", /*max_batch=*/1);
      if (r.acked != r.expected || !r.error.empty()) {
        std::fprintf(stderr, "one per commit: %zu of %zu acked: %s\n", r.acked, r.expected, r.error.c_str());
        failed = true;
      }
      one_rates.push_back(r.captures_per_s());
      one_cpu.push_back(r.cpu_seconds * 1e3 / static_cast<double>(std::max<size_t>(r.acked, 1)));
      std::printf(
          "round %d one capture a transaction: %7.1f captures/s  (%.2f s wall, %.1f ms CPU/capture incl. agents)\n",
          round, r.captures_per_s(), r.seconds, one_cpu.back());
    }
    if (pg != nullptr && f.only != "bare") {
      absl::StatusOr<std::string> uri = pg->NewDatabase();  // a fresh database each round, as SQLite's file
      const double server_cpu0 = PostgresCpuSeconds(pg->data_dir());
      const uint64_t round_trips0 = storage::PgConnection::ProcessRoundTrips();
      const uint64_t statements0 = storage::PgConnection::ProcessStatements();
      Run r = uri.ok() ? RunReal(loads, f.workers, f.keyframe_every, *uri) : Run{};
      const double per_capture = 1.0 / static_cast<double>(std::max<size_t>(r.acked, 1));
      pg_server_cpu.push_back((PostgresCpuSeconds(pg->data_dir()) - server_cpu0) * 1e3 * per_capture);
      pg_round_trips.push_back(static_cast<double>(storage::PgConnection::ProcessRoundTrips() - round_trips0) *
                               per_capture);
      pg_statements.push_back(static_cast<double>(storage::PgConnection::ProcessStatements() - statements0) *
                              per_capture);
      if (!uri.ok()) r.error = uri.status().ToString();
      if (r.acked != r.expected || !r.error.empty()) {
        std::fprintf(stderr, "postgres: %zu of %zu acked: %s\n", r.acked, r.expected, r.error.c_str());
        failed = true;
      }
      pg_rates.push_back(r.captures_per_s());
      pg_cpu.push_back(r.cpu_seconds * 1e3 / static_cast<double>(std::max<size_t>(r.acked, 1)));
      std::printf(
          "round %d postgres: %7.1f captures/s  (%.2f s wall, %.1f ms CPU/capture incl. agents and PostgreSQL's client "
          "side; PostgreSQL's server %.2f ms; %.2f round trips, %.1f statements)\n",
          round, r.captures_per_s(), r.seconds, pg_cpu.back(), pg_server_cpu.back(), pg_round_trips.back(),
          pg_statements.back());
    }
  }
  if (!bare_rates.empty() && !real_rates.empty()) {
    const double bare = Median(bare_rates), real = Median(real_rates);
    std::printf("\nmedian of %d rounds: bare %.1f captures/s, stored %.1f captures/s, ratio %.1f%% (target >= 50%%)\n",
                f.rounds, bare, real, bare > 0 ? 100.0 * real / bare : 0.0);
    std::printf("CPU/capture (whole process, agents included): bare %.1f ms, real %.1f ms\n", Median(bare_cpu),
                Median(real_cpu));
  }
  if (!bare_rates.empty() && !one_rates.empty()) {
    const double bare = Median(bare_rates), one = Median(one_rates);
    std::printf(
        "median of %d rounds: one capture a transaction %.1f captures/s, ratio to bare %.1f%%; group commit "
        "gains %.2fx\n",
        f.rounds, one, bare > 0 ? 100.0 * one / bare : 0.0, one > 0 ? Median(real_rates) / one : 0.0);
    std::printf("CPU/capture (whole process, agents included): one capture a transaction %.1f ms\n", Median(one_cpu));
  }
  if (!bare_rates.empty() && !pg_rates.empty()) {
    const double bare = Median(bare_rates), stored = Median(pg_rates);
    std::printf(
        "median of %d rounds: bare %.1f captures/s, stored in PostgreSQL %.1f captures/s, ratio %.1f%% "
        "(target >= 50%%)\n",
        f.rounds, bare, stored, bare > 0 ? 100.0 * stored / bare : 0.0);
    std::printf("CPU/capture (this process; PostgreSQL's own server processes not counted): %.1f ms\n", Median(pg_cpu));
    std::printf("a capture on PostgreSQL: its server processes' CPU %.2f ms, %.2f round trips, %.1f statements\n",
                Median(pg_server_cpu), Median(pg_round_trips), Median(pg_statements));
  }
  if (f.breakdown && !Breakdown(loads, f.keyframe_every)) failed = true;
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace memfleet::bench

int main(int argc, char** argv) { return memfleet::bench::Main(argc, argv); }
