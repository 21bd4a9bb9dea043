#include "server/fleet/sweep_coordinator.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/fleet/agent_registry.h"
#include "selector/selector.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/manual_clock.h"

namespace memfleet::server {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Maps are ordered by key, so ElementsAre checks them exactly (gmock's UnorderedElementsAre needs
// libgmock, which the test folder does not link).

// What a fake agent's stream received.
struct SinkLog {
  std::mutex mu;
  std::vector<v1::ServerMessage> messages;
  bool broken = false;
  bool cancelled = false;
  std::vector<std::string> SweepIds() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    for (const auto& m : messages) {
      if (m.has_capture_now()) out.push_back(m.capture_now().sweep_id());
    }
    return out;
  }
  // How many CaptureNow commands asked for full smaps.
  size_t FullSmapsCommands() {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& m : messages) n += m.has_capture_now() && m.capture_now().full_smaps();
    return n;
  }
};

class FakeSink : public MessageSink {
 public:
  explicit FakeSink(std::shared_ptr<SinkLog> log) : log_(std::move(log)) {}
  bool Write(const v1::ServerMessage& m) override {
    std::lock_guard<std::mutex> lock(log_->mu);
    if (log_->broken) return false;
    log_->messages.push_back(m);
    return true;
  }
  void Cancel() override {
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->cancelled = true;
  }

 private:
  std::shared_ptr<SinkLog> log_;
};

selector::Selector Select(std::vector<std::string> terms) {
  absl::StatusOr<selector::Selector> s = selector::Selector::Parse(terms);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : selector::Selector();
}

class SweepCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::Store>> s = storage::OpenSqliteStore(":memory:");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  // A device the store knows (as after its Hello), with the platform of its latest report.
  void Known(const std::string& id, const std::string& model, const std::string& platform = "") {
    storage::DeviceRecord d;
    d.device_id = id;
    d.model = model;
    d.platform = platform;
    d.soc = model == "Pixel 8" ? "gs301" : "sm8450";
    d.last_seen_at = "2026-12-01T10:00:00Z";
    ASSERT_TRUE(store_->UpsertDevice(d).ok());
  }

  // A known device with an agent connected.
  std::shared_ptr<SinkLog> Online(const std::string& id, const std::string& model, const std::string& platform = "") {
    Known(id, model, platform);
    auto log = std::make_shared<SinkLog>();
    v1::DeviceInfo info;
    info.set_device_id(id);
    info.set_model(model);
    auto session = std::make_shared<AgentSession>(info, "2026-12-01T10:00:00Z", std::make_unique<FakeSink>(log));
    EXPECT_TRUE(registry_.Register(session).ok());
    sessions_[id] = session;
    return log;
  }

  // The device ids that were sent a CaptureNow, of the logs given.
  static std::vector<std::string> Asked(const std::map<std::string, std::shared_ptr<SinkLog>>& logs) {
    std::vector<std::string> out;
    for (const auto& [id, log] : logs) {
      if (!log->SweepIds().empty()) out.push_back(id);
    }
    return out;
  }

  // Every event of the sweep until it finishes (at most 10 s), and the last update.
  SweepUpdate RunToEnd(SweepCoordinator& c, const std::string& id, std::vector<SweepEvent>* events) {
    size_t cursor = 0;
    auto give_up = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      absl::StatusOr<SweepUpdate> u = c.WaitForProgress(id, cursor, 100ms);
      EXPECT_TRUE(u.ok()) << u.status();
      if (!u.ok()) return {};
      events->insert(events->end(), u->events.begin(), u->events.end());
      cursor = u->next_cursor;
      if (u->finished || std::chrono::steady_clock::now() > give_up) return *u;
    }
  }

  static std::map<std::string, SweepState> FinalStates(const std::vector<SweepEvent>& events) {
    std::map<std::string, SweepState> out;
    for (const SweepEvent& e : events) out[e.device_id] = e.state;
    return out;
  }

  std::unique_ptr<storage::Store> store_;
  AgentRegistry registry_;
  std::map<std::string, std::shared_ptr<AgentSession>> sessions_;  // by device id, as Online registered them
};

TEST_F(SweepCoordinatorTest, SendsCaptureNowToMatchingOnlineAgentsAndMarksKnownOfflineDevices) {
  std::shared_ptr<SinkLog> a = Online("dev-a", "Xiaomi 12", "qcom");
  std::shared_ptr<SinkLog> b = Online("dev-b", "Pixel 8", "generic");
  Known("dev-c", "Xiaomi 12", "qcom");  // in the store, no agent connected
  Known("dev-d", "Pixel 8");
  SweepCoordinator c(*store_, registry_);
  absl::StatusOr<std::string> id = c.StartSweep(Select({"model=Xiaomi 12"}), 60s);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_THAT(a->SweepIds(), ElementsAre(*id));
  EXPECT_TRUE(b->SweepIds().empty());  // not selected: no command
  EXPECT_EQ(a->FullSmapsCommands(), 0u);
  // memfleet sweep --full-smaps: the command asks for full smaps.
  absl::StatusOr<std::string> full = c.StartSweep(Select({"model=Xiaomi 12"}), 60s, {}, /*full_smaps=*/true);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_THAT(a->SweepIds(), ElementsAre(*id, *full));
  EXPECT_EQ(a->FullSmapsCommands(), 1u);

  absl::StatusOr<SweepUpdate> u = c.WaitForProgress(*id, 0, 0ms);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->devices_total, 2u);
  EXPECT_EQ(u->devices_done, 1u);  // dev-c is final at once
  EXPECT_FALSE(u->finished);
  EXPECT_THAT(FinalStates(u->events),
              ElementsAre(Pair("dev-a", SweepState::kSent), Pair("dev-c", SweepState::kOffline)));

  absl::StatusOr<std::optional<storage::SweepRecord>> rec = store_->GetSweep(*id);
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->selector, "model=\"Xiaomi 12\"");  // quoted: the text reads back as one term
  EXPECT_THAT((*rec)->states, ElementsAre(Pair("dev-a", "sent"), Pair("dev-c", "offline")));
  EXPECT_EQ((*rec)->finished_at, "");
}

TEST_F(SweepCoordinatorTest, OnlyTheFirstCaptureOfADeviceTheSweepAskedIsItsAnswer) {
  Online("dev-a", "Xiaomi 12");
  Online("dev-b", "Pixel 8");   // online, not selected
  Known("dev-c", "Xiaomi 12");  // selected, offline: never asked
  SweepCoordinator c(*store_, registry_);
  absl::StatusOr<std::string> id = c.StartSweep(Select({"model=Xiaomi 12"}), 60s);
  ASSERT_TRUE(id.ok()) << id.status();

  EXPECT_FALSE(c.ClaimAnswer(*id, "dev-b", "cap-b"));  // not selected
  EXPECT_FALSE(c.ClaimAnswer(*id, "dev-c", "cap-c"));  // selected but offline: no command was sent
  EXPECT_FALSE(c.ClaimAnswer("sweep-20261201T000000Z-000001", "dev-a", "cap-a"));  // no such sweep
  EXPECT_FALSE(c.ClaimAnswer("", "dev-a", "cap-a"));
  EXPECT_TRUE(c.IsAnswer(*id, "dev-a", "cap-2"));  // asking does not claim...
  EXPECT_TRUE(c.ClaimAnswer(*id, "dev-a", "cap-1"));
  EXPECT_TRUE(c.ClaimAnswer(*id, "dev-a", "cap-1"));   // the same capture again (a resend)
  EXPECT_FALSE(c.ClaimAnswer(*id, "dev-a", "cap-2"));  // ...and once claimed, a second capture is not it
  EXPECT_FALSE(c.IsAnswer(*id, "dev-a", "cap-2"));
  EXPECT_TRUE(c.IsAnswer(*id, "dev-a", "cap-1"));
}

TEST_F(SweepCoordinatorTest, PlatformMatchesTheStoredPlatformOfTheLatestReport) {
  std::shared_ptr<SinkLog> q = Online("dev-q", "Phone", "qcom");
  std::shared_ptr<SinkLog> m = Online("dev-m", "Phone", "mtk");
  SweepCoordinator c(*store_, registry_);
  absl::StatusOr<std::string> id = c.StartSweep(Select({"platform=mtk"}), 60s);
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(q->SweepIds().empty());
  EXPECT_THAT(m->SweepIds(), ElementsAre(*id));
}

TEST_F(SweepCoordinatorTest, AgentAnswersAreTrackedUntilStoredAndTheSweepFinishesBeforeItsDeadline) {
  Online("dev-a", "Xiaomi 12");
  Online("dev-b", "Xiaomi 12");
  testing::ManualSteadyClock clock;  // never moved: the deadline cannot be what ends the sweep
  SweepCoordinator::Options options;
  options.clock = &clock;
  SweepCoordinator c(*store_, registry_, options);
  absl::StatusOr<std::string> id = c.StartSweep(Select({}), 60s);
  ASSERT_TRUE(id.ok());
  c.OnCapturing(*id, "dev-a", "cap-a");
  c.OnStored(*id, "dev-a", "cap-a");
  c.OnFailed(*id, "dev-a", "cap-a", "late failure");  // stored is final: ignored
  c.OnCapturing(*id, "dev-b", "cap-b");
  c.OnFailed(*id, "dev-b", "cap-b", "disk full");
  c.OnStored("no-such-sweep", "dev-a", "x");  // ignored
  c.OnStored(*id, "dev-not-in-sweep", "x");   // ignored
  std::vector<SweepEvent> events;
  SweepUpdate last = RunToEnd(c, *id, &events);
  EXPECT_TRUE(last.finished);
  std::vector<std::string> a_states;
  for (const SweepEvent& e : events) {
    if (e.device_id == "dev-a") a_states.push_back(SweepStateName(e.state));
  }
  EXPECT_THAT(a_states, ElementsAre("sent", "capturing", "stored"));
  EXPECT_THAT(FinalStates(events), ElementsAre(Pair("dev-a", SweepState::kStored), Pair("dev-b", SweepState::kFailed)));
  EXPECT_EQ(last.state_counts[SweepState::kStored], 1u);
  EXPECT_EQ(last.devices_done, 2u);

  absl::StatusOr<std::optional<storage::SweepRecord>> rec = store_->GetSweep(*id);
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_THAT((*rec)->states, ElementsAre(Pair("dev-a", "stored"), Pair("dev-b", "failed")));
  EXPECT_NE((*rec)->finished_at, "");
}

TEST_F(SweepCoordinatorTest, DevicesThatDoNotAnswerWithinTheDeadlineTimeOut) {
  Online("dev-quiet", "Xiaomi 12");
  Online("dev-slow", "Xiaomi 12");
  Online("dev-fast", "Xiaomi 12");
  testing::ManualSteadyClock clock;  // the deadline passes when the test says, not after 60 real seconds
  SweepCoordinator::Options options;
  options.clock = &clock;
  SweepCoordinator c(*store_, registry_, options);
  absl::StatusOr<std::string> id = c.StartSweep(Select({}), 60s);
  ASSERT_TRUE(id.ok());
  c.OnCapturing(*id, "dev-slow", "cap-slow");  // begins but never finishes
  c.OnStored(*id, "dev-fast", "cap-fast");
  clock.Advance(60s - 1ms);  // nothing is due yet
  absl::StatusOr<SweepUpdate> before = c.WaitForProgress(*id, 0, 0ms);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_FALSE(before->finished);
  clock.Advance(1ms);  // the deadline: Advance returns once its task has ended the sweep
  absl::StatusOr<SweepUpdate> at_deadline = c.WaitForProgress(*id, 0, 0ms);
  ASSERT_TRUE(at_deadline.ok()) << at_deadline.status();
  EXPECT_TRUE(at_deadline->finished);
  std::vector<SweepEvent> events;
  SweepUpdate last = RunToEnd(c, *id, &events);
  ASSERT_TRUE(last.finished);
  EXPECT_THAT(FinalStates(events),
              ElementsAre(Pair("dev-fast", SweepState::kStored), Pair("dev-quiet", SweepState::kTimedOut),
                          Pair("dev-slow", SweepState::kTimedOut)));
  // Once timed out, a late capture does not change the reported state.
  c.OnStored(*id, "dev-quiet", "late");
  absl::StatusOr<std::optional<storage::SweepRecord>> rec = store_->GetSweep(*id);
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_THAT((*rec)->states,
              ElementsAre(Pair("dev-fast", "stored"), Pair("dev-quiet", "timed_out"), Pair("dev-slow", "timed_out")));
  EXPECT_NE((*rec)->finished_at, "");
}

TEST_F(SweepCoordinatorTest, AnAgentWhoseStreamBrokeIsOffline) {
  std::shared_ptr<SinkLog> a = Online("dev-a", "Xiaomi 12");
  a->broken = true;
  SweepCoordinator c(*store_, registry_);
  absl::StatusOr<std::string> id = c.StartSweep(Select({}), 60s);
  ASSERT_TRUE(id.ok());
  std::vector<SweepEvent> events;
  SweepUpdate last = RunToEnd(c, *id, &events);
  EXPECT_TRUE(last.finished);
  EXPECT_THAT(FinalStates(events), ElementsAre(Pair("dev-a", SweepState::kOffline)));
}

TEST_F(SweepCoordinatorTest, AnAgentThatDisconnectsMidSweepFailsAndTheSweepEndsWithoutItsDeadline) {
  Online("dev-a", "Xiaomi 12");
  Online("dev-b", "Xiaomi 12");
  testing::ManualSteadyClock clock;  // never moved: the deadline cannot be what ends the sweep
  SweepCoordinator::Options options;
  options.clock = &clock;
  SweepCoordinator c(*store_, registry_, options);
  registry_.AddListener(&c);
  absl::StatusOr<std::string> id = c.StartSweep(Select({}), 60s);
  ASSERT_TRUE(id.ok());
  c.OnStored(*id, "dev-a", "cap-a");
  std::optional<OnlineAgent> b = registry_.Get("dev-b");
  ASSERT_TRUE(b.has_value());
  // dev-b's agent reconnects (its new stream replaces the old one), then that stream ends.
  auto replacement =
      std::make_shared<AgentSession>(b->info, b->connected_at, std::make_unique<FakeSink>(std::make_shared<SinkLog>()));
  ASSERT_TRUE(registry_.Register(replacement).ok());
  registry_.Unregister(replacement);
  std::vector<SweepEvent> events;
  SweepUpdate last = RunToEnd(c, *id, &events);
  EXPECT_TRUE(last.finished);
  EXPECT_THAT(FinalStates(events), ElementsAre(Pair("dev-a", SweepState::kStored), Pair("dev-b", SweepState::kFailed)));
  EXPECT_THAT(events.back().message, HasSubstr("agent disconnected"));
}

// More devices than are asked at once: the first window is asked at the start, and each device done —
// stored, failed, or its agent gone — makes room for the next, in order, until every device had its turn.
TEST_F(SweepCoordinatorTest, DevicesBeyondTheWindowAreAskedInTurnAsEachIsDone) {
  std::map<std::string, std::shared_ptr<SinkLog>> logs;
  for (const char* id : {"dev-1", "dev-2", "dev-3", "dev-4", "dev-5"}) logs[id] = Online(id, "Xiaomi 12");
  testing::ManualSteadyClock clock;  // never moved: only the devices' answers move the sweep on
  SweepCoordinator::Options options;
  options.clock = &clock;
  options.max_asked_at_once = 2;
  SweepCoordinator c(*store_, registry_, options);
  registry_.AddListener(&c);
  absl::StatusOr<std::string> id = c.StartSweep(Select({}), 60s);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_THAT(Asked(logs), ElementsAre("dev-1", "dev-2"));
  absl::StatusOr<SweepUpdate> u = c.WaitForProgress(*id, 0, 0ms);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->devices_total, 5u);
  EXPECT_EQ(u->state_counts[SweepState::kSent], 5u);
  EXPECT_THAT(u->events[4].message, HasSubstr("waiting its turn (2 devices asked at once)"));
  EXPECT_FALSE(c.ClaimAnswer(*id, "dev-3", "cap-3"));  // not asked yet: not an answer

  c.OnCapturing(*id, "dev-1", "cap-1");  // under way, not done: no room yet
  EXPECT_THAT(Asked(logs), ElementsAre("dev-1", "dev-2"));
  c.OnStored(*id, "dev-1", "cap-1");
  EXPECT_THAT(Asked(logs), ElementsAre("dev-1", "dev-2", "dev-3"));
  EXPECT_TRUE(c.ClaimAnswer(*id, "dev-3", "cap-3"));
  c.OnFailed(*id, "dev-2", "cap-2", "disk full");
  EXPECT_THAT(Asked(logs), ElementsAre("dev-1", "dev-2", "dev-3", "dev-4"));
  registry_.Unregister(sessions_["dev-4"]);  // gone mid-capture: failed, and the last one's turn comes
  EXPECT_THAT(Asked(logs), ElementsAre("dev-1", "dev-2", "dev-3", "dev-4", "dev-5"));
  c.OnStored(*id, "dev-3", "cap-3");
  c.OnStored(*id, "dev-5", "cap-5");

  std::vector<SweepEvent> events;
  SweepUpdate last = RunToEnd(c, *id, &events);
  EXPECT_TRUE(last.finished);
  EXPECT_THAT(FinalStates(events), ElementsAre(Pair("dev-1", SweepState::kStored), Pair("dev-2", SweepState::kFailed),
                                               Pair("dev-3", SweepState::kStored), Pair("dev-4", SweepState::kFailed),
                                               Pair("dev-5", SweepState::kStored)));
  for (const auto& [device, log] : logs) EXPECT_EQ(log->SweepIds().size(), 1u) << device << " asked once";
  std::vector<std::string> dev5_messages;
  for (const SweepEvent& e : events) {
    if (e.device_id == "dev-5") dev5_messages.push_back(e.message);
  }
  EXPECT_THAT(dev5_messages, ElementsAre(HasSubstr("waiting its turn"), "capture requested", "capture stored"));
}

// A device whose agent leaves before its turn is offline (it was never asked), and one whose turn never
// comes before the deadline times out saying so, not as a device that did not answer.
TEST_F(SweepCoordinatorTest, ADeviceGoneBeforeItsTurnIsOfflineAndOneWhoseTurnNeverCameSaysSo) {
  std::map<std::string, std::shared_ptr<SinkLog>> logs;
  for (const char* id : {"dev-1", "dev-2", "dev-3"}) logs[id] = Online(id, "Xiaomi 12");
  testing::ManualSteadyClock clock;
  SweepCoordinator::Options options;
  options.clock = &clock;
  options.max_asked_at_once = 1;
  SweepCoordinator c(*store_, registry_, options);
  registry_.AddListener(&c);
  absl::StatusOr<std::string> id = c.StartSweep(Select({}), 60s);
  ASSERT_TRUE(id.ok()) << id.status();
  registry_.Unregister(sessions_["dev-2"]);
  EXPECT_THAT(Asked(logs), ElementsAre("dev-1"));  // dev-1 still capturing: no room
  clock.Advance(60s);
  std::vector<SweepEvent> events;
  SweepUpdate last = RunToEnd(c, *id, &events);
  ASSERT_TRUE(last.finished);
  EXPECT_THAT(FinalStates(events),
              ElementsAre(Pair("dev-1", SweepState::kTimedOut), Pair("dev-2", SweepState::kOffline),
                          Pair("dev-3", SweepState::kTimedOut)));
  std::map<std::string, std::string> last_message;
  for (const SweepEvent& e : events) last_message[e.device_id] = e.message;
  EXPECT_THAT(last_message,
              ElementsAre(Pair("dev-1", HasSubstr("no answer")), Pair("dev-2", "agent disconnected before its turn"),
                          Pair("dev-3", HasSubstr("its turn did not come"))));
  EXPECT_TRUE(logs["dev-3"]->SweepIds().empty());
}

TEST_F(SweepCoordinatorTest, NoMatchingDeviceFinishesAtOnce) {
  Online("dev-a", "Xiaomi 12");
  SweepCoordinator c(*store_, registry_);
  absl::StatusOr<std::string> id = c.StartSweep(Select({"model=Nokia 3310"}), 60s);
  ASSERT_TRUE(id.ok());
  absl::StatusOr<SweepUpdate> u = c.WaitForProgress(*id, 0, 0ms);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->finished);
  EXPECT_EQ(u->devices_total, 0u);
}

TEST_F(SweepCoordinatorTest, RejectsBadDeadlinesAndUnknownSweeps) {
  SweepCoordinator::Options o;
  o.max_deadline = 10s;
  SweepCoordinator c(*store_, registry_, o);
  EXPECT_EQ(c.StartSweep(Select({}), 11s).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.StartSweep(Select({}), -1ms).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.WaitForProgress("sweep-nope", 0, 0ms).status().code(), absl::StatusCode::kNotFound);
}

// A server sweeping thousands of devices every few minutes keeps only as many finished sweeps in memory
// as keep_finished_devices allows (the newest always); their results stay in the store.
TEST_F(SweepCoordinatorTest, FinishedSweepsAreKeptUpToADeviceCountNewestFirst) {
  for (const char* id : {"dev-a", "dev-b", "dev-c"}) Online(id, "Xiaomi 12");
  SweepCoordinator::Options o;
  o.keep_finished_devices = 4;
  SweepCoordinator c(*store_, registry_, o);
  auto finished_sweep = [&c]() {
    absl::StatusOr<std::string> id = c.StartSweep(Select({}), 60s);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) return std::string();
    for (const char* device : {"dev-a", "dev-b", "dev-c"}) c.OnFailed(*id, device, "", "agent: no capture today");
    return *id;
  };
  const std::string first = finished_sweep();
  absl::StatusOr<SweepUpdate> u = c.WaitForProgress(first, 0, 0ms);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_TRUE(u->finished);  // 3 devices: within the bound
  const std::string second = finished_sweep();
  // 6 devices over two finished sweeps: the older one goes.
  EXPECT_EQ(c.WaitForProgress(first, 0, 0ms).status().code(), absl::StatusCode::kNotFound);
  u = c.WaitForProgress(second, 0, 0ms);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->devices_total, 3u);
  absl::StatusOr<std::optional<storage::SweepRecord>> stored = store_->GetSweep(first);
  ASSERT_TRUE(stored.ok() && stored->has_value()) << "the evicted sweep's record stays in the store";
  EXPECT_EQ((*stored)->states.size(), 3u);
}

TEST_F(SweepCoordinatorTest, ShutdownEndsRunningSweepsAndRefusesNewOnes) {
  Online("dev-a", "Xiaomi 12");
  SweepCoordinator c(*store_, registry_);
  absl::StatusOr<std::string> id = c.StartSweep(Select({}), 60s);
  ASSERT_TRUE(id.ok());
  c.Shutdown();
  absl::StatusOr<SweepUpdate> u = c.WaitForProgress(*id, 0, 0ms);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->finished);
  EXPECT_THAT(FinalStates(u->events), ElementsAre(Pair("dev-a", SweepState::kFailed)));
  EXPECT_EQ(c.StartSweep(Select({}), 1s).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(SweepCoordinatorTest, SweepsAnEarlierProcessLeftRunningAreClosedAsInterrupted) {
  // What a SIGKILLed server leaves in the store: a sweep row without finished_at, devices mid-way.
  storage::SweepRecord left;
  left.sweep_id = "sweep-20261201T100000Z-00002a";
  left.started_at = "2026-12-01T10:00:00Z";
  left.states = {{"dev-a", "sent"}, {"dev-b", "capturing"}, {"dev-c", "stored"}, {"dev-d", "offline"}};
  ASSERT_TRUE(store_->PutSweep(left).ok());
  storage::SweepRecord done = left;
  done.sweep_id = "sweep-20261201T090000Z-000001";
  done.finished_at = "2026-12-01T09:01:00Z";
  done.states = {{"dev-a", "timed_out"}};
  ASSERT_TRUE(store_->PutSweep(done).ok());

  SweepCoordinator::Options options;
  options.now = [] { return std::string("2026-12-02T08:00:00Z"); };
  SweepCoordinator c(*store_, registry_, options);
  // This process's own running sweep is not the earlier one's: it stays open.
  Online("dev-e", "Xiaomi 12");
  absl::StatusOr<std::string> running = c.StartSweep(Select({"device_id=dev-e"}), 60s);
  ASSERT_TRUE(running.ok()) << running.status();

  absl::StatusOr<size_t> closed = c.CloseInterruptedSweeps();
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(*closed, 1u);
  absl::StatusOr<std::optional<storage::SweepRecord>> after = store_->GetSweep(left.sweep_id);
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ((*after)->finished_at, "2026-12-02T08:00:00.000Z");
  EXPECT_THAT((*after)->states, ElementsAre(Pair("dev-a", "interrupted"), Pair("dev-b", "interrupted"),
                                            Pair("dev-c", "stored"), Pair("dev-d", "offline")));
  absl::StatusOr<std::optional<storage::SweepRecord>> untouched = store_->GetSweep(done.sweep_id);
  ASSERT_TRUE(untouched.ok() && untouched->has_value());
  EXPECT_EQ((*untouched)->finished_at, "2026-12-01T09:01:00.000Z");
  EXPECT_THAT((*untouched)->states, ElementsAre(Pair("dev-a", "timed_out")));
  absl::StatusOr<std::optional<storage::SweepRecord>> mine = store_->GetSweep(*running);
  ASSERT_TRUE(mine.ok() && mine->has_value());
  EXPECT_EQ((*mine)->finished_at, "");

  // Once closed, never again.
  closed = c.CloseInterruptedSweeps();
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(*closed, 0u);
}

TEST_F(SweepCoordinatorTest, SweepIdsAreUnique) {
  SweepCoordinator c(*store_, registry_);
  absl::StatusOr<std::string> a = c.StartSweep(Select({}), 1s);
  absl::StatusOr<std::string> b = c.StartSweep(Select({}), 1s);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(a->rfind("sweep-", 0), 0u);
}

}  // namespace
}  // namespace memfleet::server
