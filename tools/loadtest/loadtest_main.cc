// memfleet-loadtest: many simulated agents in one process against a real memfleet-server child process on
// loopback, for a bounded time, with sweeps across all of them; then checks that every acked capture is
// stored exactly once in the SQLite file and prints ack latency, throughput and the server's peak RSS
// and thread count. Exit status 0 only when nothing was lost or duplicated and every bound asked for held
// (docs/reliability.md, "Load"). Agents share channels (--streams-per-channel streams multiplexed on each
// connection), so thousands of streams fit in one process's descriptors.
//
//   memfleet-loadtest --agents 500 --seconds 60 --sweeps 2     # full size, each agent sending again 1 s after its ack
//   memfleet-loadtest --agents 5000 --seconds 60 --sweeps 1 --expect-sweeps-stored --max-server-rss-mb 512
//   memfleet-loadtest --agents 5000 --seconds 1260 --interval-s 300 --sweep-every-s 600    # a lab's cadence,
//       --sweep-deadline-s 60 --expect-sweeps-stored --max-ack-p99-ms 5000                  # held to its bounds
//   memfleet-loadtest --agents 300 --seconds 15 --sweeps 1 --expect-sweeps-stored --max-server-rss-mb 96
//       --server-arg=--max-inflight-mb=4 --server-arg=--delta-cache-mb=8        # CI (ctest loadtest_ci)
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "agent/header_rewrite.h"
#include "common/utc_time.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "proto/capture_codec.h"
#include "proto/capture_id.h"
#include "storage/sqlite/sqlite_db.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace {

using namespace memfleet;
using Clock = std::chrono::steady_clock;

const char* const kTrees[] = {"generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1"};

// One fixture capture; each simulated agent sends copies with its own ids and header, encoded as the agent
// encodes them (wire::CaptureStreamMessages, digest included).
struct Template {
  capture::Capture capture;
  std::string header;  // capture.json text
};

struct Totals {
  absl::Mutex mu;
  std::vector<double> ack_ms ABSL_GUARDED_BY(mu);        // every capture
  std::vector<double> sweep_ack_ms ABSL_GUARDED_BY(mu);  // sweeps' captures: from the CaptureNow
  std::set<std::string> acked ABSL_GUARDED_BY(mu);
  std::set<std::string> sent ABSL_GUARDED_BY(mu);
  uint64_t duplicates ABSL_GUARDED_BY(mu) = 0;
  uint64_t rejected ABSL_GUARDED_BY(mu) = 0;
  uint64_t stream_errors ABSL_GUARDED_BY(mu) = 0;
  uint64_t sweep_captures ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::string> errors ABSL_GUARDED_BY(mu);
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What /proc/<pid>/status says of a process's memory (kB) and threads.
struct ProcessStatus {
  uint64_t hwm_kb = 0;
  uint64_t rss_kb = 0;
  uint64_t threads = 0;
};

ProcessStatus StatusOf(pid_t pid) {
  std::istringstream in(ReadAll("/proc/" + std::to_string(pid) + "/status"));
  ProcessStatus s;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) s.hwm_kb = std::strtoull(line.c_str() + 6, nullptr, 10);
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kb = std::strtoull(line.c_str() + 6, nullptr, 10);
    if (line.rfind("Threads:", 0) == 0) s.threads = std::strtoull(line.c_str() + 8, nullptr, 10);
  }
  return s;
}

// The CPU time (user + system) a process has used so far, from /proc/<pid>/stat: how much of the shared
// cores the server got, so that runs on a busy machine compare captures per CPU-second.
double CpuSecondsOf(pid_t pid) {
  const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  const size_t after_name = stat.rfind(')');  // the name may hold spaces
  if (after_name == std::string::npos) return 0;
  std::istringstream in(stat.substr(after_name + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {  // fields 14 and 15 (utime, stime), in clock ticks
    if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// At most `limit` holders at once: the agents say Hello a batch at a time, as the server bounds the
// streams that wait for their Hello per host (HelloWatchdogOptions, 256) and all agents here are one host.
class Gate {
 public:
  explicit Gate(int limit) : free_(limit) {}
  void Enter() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* free) { return *free > 0; }, &free_));
    --free_;
  }
  void Leave() {
    absl::MutexLock lock(&mu_);
    ++free_;
  }

 private:
  absl::Mutex mu_;
  int free_ ABSL_GUARDED_BY(mu_);
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// Where the agents wait, once connected, until all are (or gave up): the run then holds every stream.
class StartLine {
 public:
  // The agent's stream is open (or failed); blocks until Go().
  void Arrive() {
    absl::MutexLock lock(&mu_);
    ++arrived_;
    mu_.Await(absl::Condition(&go_));
  }
  // Waits until `n` agents arrived or `timeout` passed; returns how many arrived.
  int AwaitArrivals(int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    struct Args {
      int* arrived;
      int n;
    } args{&arrived_, n};
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](Args* a) { return *a->arrived >= a->n; }, &args),
                         timeout);
    return arrived_;
  }
  void Go() {
    absl::MutexLock lock(&mu_);
    go_ = true;
  }

 private:
  absl::Mutex mu_;
  int arrived_ ABSL_GUARDED_BY(mu_) = 0;
  bool go_ ABSL_GUARDED_BY(mu_) = false;
};

// When a simulated agent sends its periodic captures: `pause` after the last ack (a stress load: the
// offered rate grows with the agents), or every `interval` from `phase` on (a lab's cadence: the agent
// captures on its clock, whatever the server's answers).
struct Cadence {
  std::chrono::milliseconds pause{1000};
  std::chrono::milliseconds interval{0};  // 0: pause mode
  std::chrono::milliseconds phase{0};
};

// The real agent keeps this many captures unacked (agent/transport.h, max_in_flight).
constexpr size_t kMaxInFlight = 4;

class SimAgent {
 public:
  SimAgent(std::shared_ptr<grpc::Channel> channel, std::string device_id, const Template& t, Totals& totals,
           Cadence cadence)
      : channel_(std::move(channel)),
        device_id_(std::move(device_id)),
        template_(t),
        totals_(totals),
        cadence_(cadence) {}

  // Runs until `stop`; then waits (bounded) for the last ack and closes the stream.
  void Run(const std::atomic<bool>& stop, Gate& hello_gate, StartLine& start_line) {
    auto stub = v1::AgentService::NewStub(channel_);
    grpc::ClientContext ctx;
    hello_gate.Enter();
    auto stream = stub->Connect(&ctx);
    v1::AgentMessage hello;
    v1::DeviceInfo* d = hello.mutable_hello()->mutable_device();
    d->set_device_id(device_id_);
    d->set_model("load-sim");
    d->set_soc("sim");
    d->set_page_size(4096);
    d->set_agent_version("memfleet-loadtest");
    v1::ServerMessage welcome;
    const bool welcomed = stream->Write(hello) && stream->Read(&welcome) && welcome.has_welcome();
    hello_gate.Leave();
    start_line.Arrive();
    if (!welcomed) {
      Error("no Welcome: " + stream->Finish().error_message());
      return;
    }
    std::thread reader([&] { ReadLoop(*stream); });
    next_periodic_ = Clock::now() + cadence_.phase;
    uint64_t seq = 0;
    for (Next next; NextCapture(stop, next);) {
      if (!SendOne(*stream, ++seq, next)) break;
    }
    {
      absl::MutexLock lock(&mu_);
      const absl::Time deadline = absl::Now() + absl::Seconds(120);
      while (!in_flight_.empty() && !closed_ && !cv_.WaitWithDeadline(&mu_, deadline)) {
      }
      if (!in_flight_.empty()) Error("no answer for " + std::to_string(in_flight_.size()) + " capture(s)");
    }
    stream->WritesDone();
    reader.join();
    grpc::Status s = stream->Finish();
    if (!s.ok()) Error("stream ended: " + s.error_message());
  }

  // The run is over: an agent waiting for its next periodic capture (up to an interval away) stops now.
  void Wake() {
    absl::MutexLock lock(&mu_);
    cv_.SignalAll();
  }

 private:
  struct Next {
    std::string sweep_id;        // "" for a periodic capture
    Clock::time_point asked_at;  // the CaptureNow's arrival; for a periodic capture, when it was due
  };
  struct InFlight {
    Clock::time_point asked_at;
    bool sweep = false;
  };

  // Waits for the next capture to send; false when the run is over or the stream closed. A sweep's
  // capture goes at once, even while periodic ones wait for their acks (the real agent keeps up to
  // kMaxInFlight captures unacked); a periodic one goes as the cadence says.
  bool NextCapture(const std::atomic<bool>& stop, Next& next) {
    absl::MutexLock lock(&mu_);
    for (;;) {
      if (closed_) return false;
      if (!sweeps_.empty()) {
        next = sweeps_.front();
        sweeps_.pop_front();
        return true;
      }
      if (stop) return false;
      const bool pause_mode = cadence_.interval.count() == 0;
      if (pause_mode ? !in_flight_.empty() : in_flight_.size() >= kMaxInFlight) {
        cv_.Wait(&mu_);  // an ack, a CaptureNow or the stream's end signals it
        continue;
      }
      const Clock::time_point due = pause_mode ? Clock::now() + cadence_.pause : next_periodic_;
      const absl::Time wake = absl::Now() + absl::FromChrono(due - Clock::now());
      bool reached = Clock::now() >= due;
      while (!reached && !stop.load() && sweeps_.empty() && !closed_) reached = cv_.WaitWithDeadline(&mu_, wake);
      if ((reached || Clock::now() >= due) && !stop.load() && sweeps_.empty() && !closed_) {
        next.sweep_id.clear();
        next.asked_at = pause_mode ? Clock::now() : due;
        if (!pause_mode) next_periodic_ += cadence_.interval;
        return true;
      }
    }
  }

  bool SendOne(grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>& stream, uint64_t seq, const Next& next) {
    const std::string& sweep_id = next.sweep_id;
    std::string at = FormatUtcMillis(std::chrono::system_clock::now());
    absl::StatusOr<std::string> id = wire::MakeCaptureId(device_id_, at, instance_, seq);
    absl::StatusOr<std::string> header = agent::RewriteCaptureHeader(template_.header, device_id_, at);
    if (!id.ok() || !header.ok()) {
      Error("cannot make a capture id or header");
      return false;
    }
    capture::Capture c = template_.capture;
    c.AddFile("capture.json", *header);
    std::vector<v1::AgentMessage> messages = wire::CaptureStreamMessages(c, {*id, at, sweep_id}, 256 * 1024);
    {
      absl::MutexLock lock(&totals_.mu);
      totals_.sent.insert(*id);
      if (!sweep_id.empty()) ++totals_.sweep_captures;
    }
    {
      // Ack latency: from when the capture was taken (a sweep's: asked for) to its ack — the time the
      // agent holds it in its spool, waits at its socket for a server that does not read included.
      absl::MutexLock lock(&mu_);
      in_flight_[*id] = InFlight{next.asked_at, !sweep_id.empty()};
    }
    for (const v1::AgentMessage& m : messages) {
      if (!stream.Write(m)) return false;
    }
    return true;
  }

  void ReadLoop(grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>& stream) {
    v1::ServerMessage m;
    while (stream.Read(&m)) {
      absl::MutexLock lock(&mu_);
      if (m.has_ack() || m.has_rejected()) {
        const std::string& id = m.has_ack() ? m.ack().capture_id() : m.rejected().capture_id();
        auto it = in_flight_.find(id);
        double ms = it == in_flight_.end()
                        ? 0
                        : std::chrono::duration<double, std::milli>(Clock::now() - it->second.asked_at).count();
        const bool sweep = it != in_flight_.end() && it->second.sweep;
        if (it != in_flight_.end()) in_flight_.erase(it);
        absl::MutexLock t(&totals_.mu);
        if (m.has_ack()) {
          totals_.ack_ms.push_back(ms);
          if (sweep) totals_.sweep_ack_ms.push_back(ms);
          if (!totals_.acked.insert(id).second || m.ack().duplicate()) ++totals_.duplicates;
        } else {
          ++totals_.rejected;
          if (totals_.errors.size() < 20) {
            totals_.errors.push_back(device_id_ + ": capture " + id + " rejected: " + m.rejected().message());
          }
        }
      } else if (m.has_capture_now()) {
        sweeps_.push_back(Next{m.capture_now().sweep_id(), Clock::now()});
      }
      cv_.SignalAll();
    }
    absl::MutexLock lock(&mu_);
    closed_ = true;
    cv_.SignalAll();
  }

  void Error(const std::string& what) {
    absl::MutexLock t(&totals_.mu);
    ++totals_.stream_errors;
    if (totals_.errors.size() < 20) totals_.errors.push_back(device_id_ + ": " + what);
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::string device_id_;
  // A fixed capture id instance: each simulated agent has its own device id, so ids cannot collide.
  const std::string instance_ = "0123abcd";
  const Template& template_;
  Totals& totals_;
  const Cadence cadence_;
  Clock::time_point next_periodic_;  // interval mode: when the next periodic capture is due
  absl::Mutex mu_;
  absl::CondVar cv_;
  std::map<std::string, InFlight> in_flight_ ABSL_GUARDED_BY(mu_);
  std::deque<Next> sweeps_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "memfleet-loadtest: simulated agents against a real memfleet-server; fails on any lost or "
      "duplicated capture"};
  int agents = 500, seconds = 60, sweeps = 2, pause_ms = 1000, workers = 0, streams_per_channel = 100;
  int sweep_deadline_s = 0, interval_s = 0, sweep_every_s = 0;
  double max_server_rss_mb = 0, max_idle_kb_per_stream = 0, max_ack_p99_ms = 0;
  bool expect_sweeps_stored = false;
  std::string server_bin, data_dir = memfleet::testing::GetTestPaths().data_dir, work_dir;
  std::vector<std::string> server_args;
  app.add_option("--agents", agents, "simulated agents, each its own stream")->check(CLI::Range(1, 5000));
  app.add_option("--seconds", seconds, "how long the agents send captures")->check(CLI::Range(1, 3600));
  app.add_option("--sweeps", sweeps, "sweeps across all agents during the run")->check(CLI::Range(0, 100));
  app.add_option("--sweep-deadline-s", sweep_deadline_s, "each sweep's deadline (0: --seconds, at least 30)")
      ->check(CLI::Range(0, 3600));
  app.add_option("--pause-ms", pause_ms, "each agent's pause between an ack and its next capture");
  app.add_option("--interval-s", interval_s,
                 "instead of --pause-ms: each agent captures every N s (a lab's cadence), its first at its own "
                 "phase, the agents' phases spread evenly over N")
      ->check(CLI::Range(0, 86400));
  app.add_option("--sweep-every-s", sweep_every_s, "instead of --sweeps: a sweep every N s of the run")
      ->check(CLI::Range(0, 86400));
  app.add_option("--streams-per-channel", streams_per_channel, "agent streams sharing one channel (connection)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--workers", workers, "memfleet-server --workers (0: its default)");
  app.add_option("--server-bin", server_bin, "memfleet-server binary (default: next to this one)");
  app.add_option("--data", data_dir, "tests/data folder (holds captures/*/tree)");
  app.add_option("--dir", work_dir, "work folder for the database and the server log (default: a new temp dir)");
  app.add_option("--server-arg", server_args, "extra memfleet-server argument (repeatable), e.g. a rate limit");
  app.add_flag("--expect-sweeps-stored", expect_sweeps_stored,
               "fail unless every sweep stored one capture from every agent within its deadline");
  app.add_option("--max-server-rss-mb", max_server_rss_mb, "fail when the server's peak RSS exceeds this (MiB)");
  app.add_option("--max-idle-kb-per-stream", max_idle_kb_per_stream,
                 "fail when the server's RSS with every stream open and idle exceeds its RSS before the first "
                 "stream by more than this per stream (KiB)");
  app.add_option("--max-ack-p99-ms", max_ack_p99_ms,
                 "fail when the 99th percentile of ack latency (capture taken or asked for to ack) exceeds this");
  CLI11_PARSE(app, argc, argv);

  // Thousands of streams need more descriptors than the usual soft limit (the server child inherits it).
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  if (server_bin.empty()) {
    server_bin = (std::filesystem::canonical("/proc/self/exe").parent_path() / "memfleet-server").string();
  }
  if (work_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "memfleet-loadtest-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::cerr << "cannot make a temp dir\n";
      return 2;
    }
    work_dir = tmpl;
  }
  std::string db = work_dir + "/memfleet.db";
  std::string log = work_dir + "/server.log";

  std::vector<Template> templates;
  for (const char* tree : kTrees) {
    agent::CaptureTreeFs fs(data_dir + "/captures/" + tree + "/tree");
    absl::StatusOr<capture::Capture> c = agent::CollectCapture(fs, agent::CollectOptions{});
    if (!c.ok()) {
      std::cerr << "cannot load " << tree << ": " << c.status().message() << "\n";
      return 2;
    }
    Template t;
    const std::string* header = c->FileContent("capture.json");
    if (header == nullptr) {
      std::cerr << tree << " has no capture.json\n";
      return 2;
    }
    t.header = *header;
    t.capture = std::move(*c);
    templates.push_back(std::move(t));
  }

  std::vector<std::string> server_argv = {server_bin, "--listen", "127.0.0.1:0", "--db", db};
  if (workers > 0) server_argv.insert(server_argv.end(), {"--workers", std::to_string(workers)});
  server_argv.insert(server_argv.end(), server_args.begin(), server_args.end());
  memfleet::testing::Subprocess server_process(server_argv, log);
  const pid_t server = server_process.pid();
  const std::string listening = server_process.WaitForLine("listening on ", std::chrono::seconds(60));
  if (listening.empty()) {
    std::cerr << "memfleet-server did not start:\n" << server_process.Log();
    return 2;  // ~Subprocess kills it
  }
  const std::string target = listening.substr(listening.rfind(' ') + 1);
  if (sweep_every_s > 0) sweeps = (seconds - 1) / sweep_every_s;
  const uint64_t rss_before_streams_kb = StatusOf(server).rss_kb;
  std::cout << "memfleet-server pid " << server << " on " << target << ", db " << db << "; " << agents << " agents for "
            << seconds << " s, " << sweeps << " sweeps; server RSS " << rss_before_streams_kb / 1024
            << " MiB before any stream" << std::endl;

  Totals totals;
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<SimAgent>> sims;
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < agents; i += streams_per_channel) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // its own connection, not one shared by all
    channels.push_back(grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
  }
  char name[32];
  for (int i = 0; i < agents; ++i) {
    std::snprintf(name, sizeof name, "load-%04d", i);
    Cadence cadence;
    cadence.pause = std::chrono::milliseconds(pause_ms);
    cadence.interval = std::chrono::seconds(interval_s);
    cadence.phase = cadence.interval * i / agents;
    sims.push_back(std::make_unique<SimAgent>(channels[static_cast<size_t>(i / streams_per_channel)], name,
                                              templates[static_cast<size_t>(i) % templates.size()], totals, cadence));
  }
  Gate hello_gate(128);
  ProcessStatus peak;
  auto sample = [&peak, server] {
    ProcessStatus now = StatusOf(server);
    peak.rss_kb = std::max(peak.rss_kb, now.rss_kb);
    peak.threads = std::max(peak.threads, now.threads);
  };
  // Every agent connects first; the run starts when all streams are open, so each sweep reaches them all.
  StartLine start_line;
  const auto connecting = Clock::now();
  for (auto& s : sims) {
    threads.emplace_back([&s, &stop, &hello_gate, &start_line] { s->Run(stop, hello_gate, start_line); });
  }
  const int arrived = start_line.AwaitArrivals(agents, absl::Seconds(600));
  sample();
  const uint64_t rss_idle_kb = StatusOf(server).rss_kb;
  const double idle_kb_per_stream =
      static_cast<double>(rss_idle_kb > rss_before_streams_kb ? rss_idle_kb - rss_before_streams_kb : 0) / agents;
  std::cout << arrived << " of " << agents << " streams open (or refused) after "
            << std::chrono::duration<double>(Clock::now() - connecting).count() << " s; server RSS "
            << rss_idle_kb / 1024 << " MiB (" << idle_kb_per_stream << " KiB a stream), " << StatusOf(server).threads
            << " threads" << std::endl;
  start_line.Go();
  auto started = Clock::now();
  const double cpu_at_start_s = CpuSecondsOf(server);

  // Sweeps across every device, spread over the run; the server's RSS sampled meanwhile.
  auto query = v1::QueryService::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  int sweep_stored = 0, sweep_other = 0;
  double longest_sweep_s = 0;
  for (int k = 1; k <= sweeps; ++k) {
    auto at = started + (sweep_every_s > 0 ? std::chrono::milliseconds(1000LL * sweep_every_s * k)
                                           : std::chrono::milliseconds(1000LL * seconds * k / (sweeps + 1)));
    while (Clock::now() < at) {
      sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    grpc::ClientContext ctx;
    v1::SweepRequest req;
    req.set_deadline_s(static_cast<uint32_t>(sweep_deadline_s > 0 ? sweep_deadline_s : std::max(30, seconds)));
    const auto sweep_started = Clock::now();
    auto reader = query->StartSweep(&ctx, req);
    v1::SweepProgress p;
    std::map<std::string, v1::SweepProgress::State> states;
    while (reader->Read(&p)) {
      if (!p.device_id().empty()) states[p.device_id()] = p.state();
    }
    grpc::Status s = reader->Finish();
    for (const auto& [device, state] : states) (state == v1::SweepProgress::STORED ? sweep_stored : sweep_other)++;
    const double took_s = std::chrono::duration<double>(Clock::now() - sweep_started).count();
    longest_sweep_s = std::max(longest_sweep_s, took_s);
    std::cout << "sweep " << k << ": " << (s.ok() ? "ok" : s.error_message()) << ", " << states.size()
              << " devices, finished after " << took_s << " s" << std::endl;
  }
  while (Clock::now() < started + std::chrono::seconds(seconds)) {
    sample();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  stop = true;
  for (auto& s : sims) s->Wake();
  for (std::thread& t : threads) t.join();
  double elapsed_s = std::chrono::duration<double>(Clock::now() - started).count();
  sample();
  const uint64_t hwm_kb = StatusOf(server).hwm_kb;
  const double run_cpu_s = CpuSecondsOf(server) - cpu_at_start_s;
  const uint64_t peak_rss_kb = std::max(peak.rss_kb, hwm_kb);
  server_process.Kill(SIGTERM);

  // The ledger: every acked capture stored exactly once, nothing stored that was not sent.
  std::map<std::string, int64_t> stored;
  absl::StatusOr<storage::SqliteDb> d = storage::SqliteDb::Open(db, SQLITE_OPEN_READONLY);
  if (!d.ok()) {
    std::cerr << "cannot open " << db << ": " << d.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<storage::Statement> st = d->Prepare("SELECT capture_id, COUNT(*) FROM captures GROUP BY capture_id");
  if (!st.ok()) return 1;
  for (;;) {
    absl::StatusOr<storage::StepResult> r = st->Step();
    if (!r.ok() || *r != storage::StepResult::kRow) break;
    stored[st->ColumnText(0)] = st->ColumnInt64(1);
  }
  // Per sweep: its captures in the database, and from how many devices (one each, if it held).
  std::map<std::string, std::pair<int64_t, int64_t>> sweep_rows;
  absl::StatusOr<storage::Statement> by_sweep = d->Prepare(
      "SELECT sweep_id, COUNT(*), COUNT(DISTINCT device_id) FROM captures WHERE sweep_id != '' GROUP BY sweep_id");
  if (!by_sweep.ok()) return 1;
  for (;;) {
    absl::StatusOr<storage::StepResult> r = by_sweep->Step();
    if (!r.ok() || *r != storage::StepResult::kRow) break;
    sweep_rows[by_sweep->ColumnText(0)] = {by_sweep->ColumnInt64(1), by_sweep->ColumnInt64(2)};
  }
  std::string integrity = "not run";
  {
    absl::StatusOr<storage::Statement> check = d->Prepare("PRAGMA integrity_check");
    if (check.ok()) {
      absl::StatusOr<storage::StepResult> r = check->Step();
      integrity = r.ok() && *r == storage::StepResult::kRow ? check->ColumnText(0) : "failed to run";
    }
  }
  // Every agent has ended; the lock is for the analysis.
  absl::MutexLock totals_lock(&totals.mu);
  uint64_t lost = 0, multiple = 0, unknown = 0;
  for (const std::string& id : totals.acked) lost += stored.count(id) == 0 ? 1 : 0;
  for (const auto& [id, n] : stored) {
    multiple += n > 1 ? 1 : 0;
    unknown += totals.sent.count(id) == 0 ? 1 : 0;
  }

  std::vector<double>& ms = totals.ack_ms;
  std::printf(
      "agents %d, %.1f s: %zu captures sent, %zu acked (%.1f captures/s), %zu stored, %llu rejected, "
      "%llu duplicate acks, %llu stream errors\n",
      agents, elapsed_s, totals.sent.size(), totals.acked.size(), static_cast<double>(totals.acked.size()) / elapsed_s,
      stored.size(), static_cast<unsigned long long>(totals.rejected),
      static_cast<unsigned long long>(totals.duplicates), static_cast<unsigned long long>(totals.stream_errors));
  const double ack_p99_ms = Percentile(ms, 99);
  std::printf("ack latency ms (taken or asked for -> ack): p50 %.1f, p99 %.1f, max %.1f\n", Percentile(ms, 50),
              ack_p99_ms, Percentile(ms, 100));
  if (!totals.sweep_ack_ms.empty()) {
    std::printf("  sweeps' captures (CaptureNow -> ack): p50 %.1f, p99 %.1f, max %.1f; longest sweep %.1f s\n",
                Percentile(totals.sweep_ack_ms, 50), Percentile(totals.sweep_ack_ms, 99),
                Percentile(totals.sweep_ack_ms, 100), longest_sweep_s);
  }
  std::printf("sweeps: %d device answers stored, %d not (offline/timed out/failed); %llu sweep captures sent\n",
              sweep_stored, sweep_other, static_cast<unsigned long long>(totals.sweep_captures));
  bool sweeps_held = sweep_stored == agents * sweeps && static_cast<int>(sweep_rows.size()) == sweeps;
  for (const auto& [id, rows] : sweep_rows) {
    std::printf("sweep %s in the database: %lld captures from %lld devices\n", id.c_str(),
                static_cast<long long>(rows.first), static_cast<long long>(rows.second));
    sweeps_held = sweeps_held && rows.first == agents && rows.second == agents;
  }
  std::printf("server peak RSS %.1f MiB (VmHWM %.1f MiB), peak threads %llu\n",
              static_cast<double>(peak_rss_kb) / 1024.0, static_cast<double>(hwm_kb) / 1024.0,
              static_cast<unsigned long long>(peak.threads));
  std::printf("server CPU during the run %.1f s (%.0f%% of one core), %.1f captures per CPU-second\n", run_cpu_s,
              100.0 * run_cpu_s / elapsed_s,
              run_cpu_s > 0 ? static_cast<double>(totals.acked.size()) / run_cpu_s : 0.0);
  std::printf("ledger: %llu acked but not stored, %llu stored more than once, %llu stored but never sent\n",
              static_cast<unsigned long long>(lost), static_cast<unsigned long long>(multiple),
              static_cast<unsigned long long>(unknown));
  std::printf("PRAGMA integrity_check: %s\n", integrity.c_str());
  for (const std::string& e : totals.errors) std::printf("  %s\n", e.c_str());

  const double peak_rss_mb = static_cast<double>(peak_rss_kb) / 1024.0;
  const bool rss_held = max_server_rss_mb <= 0 || peak_rss_mb <= max_server_rss_mb;
  const bool idle_held = max_idle_kb_per_stream <= 0 || idle_kb_per_stream <= max_idle_kb_per_stream;
  const bool p99_held = max_ack_p99_ms <= 0 || ack_p99_ms <= max_ack_p99_ms;
  bool pass = integrity == "ok" && lost == 0 && multiple == 0 && unknown == 0 && totals.duplicates == 0 &&
              totals.stream_errors == 0 && totals.rejected == 0 && !totals.acked.empty() &&
              totals.acked.size() == totals.sent.size() && (!expect_sweeps_stored || sweeps_held) && rss_held &&
              idle_held && p99_held;
  if (expect_sweeps_stored && !sweeps_held) std::printf("not every sweep stored one capture from every agent\n");
  if (!rss_held)
    std::printf("server peak RSS %.1f MiB is over --max-server-rss-mb %.0f\n", peak_rss_mb, max_server_rss_mb);
  if (!idle_held) {
    std::printf("%.1f KiB an idle stream is over --max-idle-kb-per-stream %.0f\n", idle_kb_per_stream,
                max_idle_kb_per_stream);
  }
  if (!p99_held) std::printf("ack p99 %.0f ms is over --max-ack-p99-ms %.0f\n", ack_p99_ms, max_ack_p99_ms);
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  if (pass) std::filesystem::remove_all(work_dir);
  return pass ? 0 : 1;
}
