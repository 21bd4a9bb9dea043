// The agent's containment against hostile names (docs/security.md, "Inputs": the agent reads only its
// allowlist under its root): every path the agent could be led to — by a capture tree, a crafted
// directory entry, a symlink on the device, or a server — is refused unless it is an allowlisted node
// beneath the root. Run with the kernel's openat2 checks and with the realpath() fallback.
#include <limits.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "agent/reader/device_root_fs.h"
#include "agent/reader/node_allowlist.h"
#include "agent/reader/rooted_dir.h"
#include "gtest/gtest.h"
#include "memfleet/v1/agent_service.pb.h"
#include "tests/support/temp_dir.h"

namespace memfleet::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

constexpr char kSecret[] = "TOPSECRET-memfleet-hostile-test";

using memfleet::testing::TempDir;

// Hostile names as a server, a tree or a user could spell them.
std::vector<std::string> HostileNames() {
  return {
      "../../etc/shadow"s,
      "../etc/shadow"s,
      ".."s,
      "/etc/shadow"s,
      "/proc/self/environ"s,
      "/"s,
      "proc/../../etc/shadow"s,
      "proc/1/../../../etc/shadow"s,
      "proc/meminfo\n"s,
      "proc/meminfo\nproc/1/environ"s,
      "proc/1\n/smaps"s,
      "proc/meminfo\0/../../etc/shadow"s,
      "\0"s,
      "proc/self/root/etc/shadow"s,
      "proc/self/cwd/x"s,
      "proc/self/exe"s,
      "proc/1/root/etc/shadow"s,
      "proc/1/cwd"s,
      "proc/" + std::string(PATH_MAX + 10, '1') + "/smaps",
      std::string(PATH_MAX * 2, 'a'),
      "proc/" + std::string(300, 'x') + "/meminfo",
      "escape/shadow"s,
      "root_link/etc/shadow"s,
      "loop_a"s,
      "proc/loop/meminfo"s,
  };
}

class HostileNamesTest : public ::testing::TestWithParam<bool> {
 protected:
  // A device root holding the nodes the tests aim at, and an outside folder with the secret. The root's
  // links: escape -> ../outside, root_link -> /, loop_a <-> loop_b, proc/self -> /proc/self (the agent
  // host's own), proc/loop -> proc/loop, proc/meminfo_outside -> the secret.
  void SetUp() override {
    secret_ = dir_.Write("outside/shadow", kSecret);
    dir_.Write("root/proc/meminfo", "MemTotal: 1000 kB\n");
    dir_.Write("root/proc/1/smaps_rollup", "Rss: 4 kB\n");
    root_ = dir_.path() + "/root";
    fs::create_symlink("../outside", root_ + "/escape");
    fs::create_symlink("/", root_ + "/root_link");
    fs::create_symlink("loop_b", root_ + "/loop_a");
    fs::create_symlink("loop_a", root_ + "/loop_b");
    fs::create_symlink("/proc/self", root_ + "/proc/self");
    fs::create_symlink("loop", root_ + "/proc/loop");
    fs::create_symlink(secret_, root_ + "/proc/meminfo_outside");
    fs::create_symlink("../../../outside/shadow", root_ + "/proc/1/status");  // an allowlisted name
  }
  RootedDir::Options rooted() const { return RootedDir::Options{GetParam()}; }

  TempDir dir_;
  std::string secret_;
  std::string root_;
};

TEST_P(HostileNamesTest, TheAllowlistRefusesEveryHostileName) {
  for (const std::string& name : HostileNames()) {
    EXPECT_FALSE(IsAllowed(name)) << name;
    EXPECT_FALSE(IsAllowedDirectory(name)) << name;
  }
}

TEST_P(HostileNamesTest, TheRootedDirRefusesThemOrFindsNothing) {
  RootedDir root(root_, rooted());
  for (const std::string& name : HostileNames()) {
    NodeRead r = root.ReadFile(name);
    EXPECT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.content.find(kSecret), std::string::npos) << name;
    EXPECT_FALSE(root.ListDir(name).ok()) << name;
  }
  // Symlinks that leave the root, through absolute or relative targets, to / or in a loop.
  for (const char* link :
       {"escape/shadow", "root_link/etc/passwd", "proc/meminfo_outside", "proc/1/status", "proc/self/status"}) {
    NodeRead r = root.ReadFile(link);
    EXPECT_EQ(r.errno_name, "EINVAL") << link;
    EXPECT_TRUE(r.content.empty()) << link;
  }
  for (const char* loop : {"loop_a", "proc/loop/meminfo"}) {
    NodeRead r = root.ReadFile(loop);
    EXPECT_FALSE(r.ok()) << loop;
    EXPECT_TRUE(r.errno_name == "ELOOP" || r.errno_name == "EINVAL") << loop << ": " << r.errno_name;
  }
  EXPECT_FALSE(root.ListDir("root_link").ok());
  EXPECT_FALSE(root.IsDirectory("root_link"));
  EXPECT_FALSE(root.IsDirectory("proc/self"));
  // What is inside stays readable.
  NodeRead inside = root.ReadFile("proc/meminfo");
  ASSERT_TRUE(inside.ok()) << inside.errno_name;
  EXPECT_EQ(inside.content, "MemTotal: 1000 kB\n");
}

TEST_P(HostileNamesTest, ALiveRootCollectsNothingFromOutside) {
  DeviceRootFs::Options o;
  o.allow_openat2 = GetParam();
  o.command_timeout_ms = 2000;
  DeviceRootFs device(root_, o);
  absl::StatusOr<capture::Capture> c = CollectCapture(device, CollectOptions{});
  ASSERT_TRUE(c.ok()) << c.status();
  for (const auto& [path, node] : c->nodes()) {
    EXPECT_TRUE(IsAllowed(path) || IsAllowedDirectory(path) || path == "capture.json") << path;
    EXPECT_EQ(node.content.find(kSecret), std::string::npos) << path;
  }
  ASSERT_NE(c->FileContent("proc/meminfo"), nullptr);
  EXPECT_EQ(*c->FileContent("proc/meminfo"), "MemTotal: 1000 kB\n");
  // proc/1/status is allowlisted but links outside: recorded as an error, not as the secret.
  EXPECT_EQ(c->FileContent("proc/1/status"), nullptr);
}

TEST_P(HostileNamesTest, AHostileCaptureTreeLeaksNothing) {
  // Directory entries a tree could hold: a newline in a pid folder, a non-numeric pid, an escaping link.
  dir_.Write("tree/capture.json",
             R"({"format_version":1,"device_id":"hostile","captured_at":"2026-11-30T08:00:00Z","page_size":4096})");
  dir_.Write("tree/proc/meminfo", "MemTotal: 1000 kB\n");
  dir_.Write("tree/proc/12\n3/smaps", kSecret);
  dir_.Write("tree/proc/self/smaps", kSecret);
  std::string tree = dir_.path() + "/tree";
  fs::create_directories(tree + "/proc/7");
  fs::create_symlink(secret_, tree + "/proc/7/smaps");
  fs::create_symlink("/", tree + "/proc/8");
  CaptureTreeFs::Options o;
  o.allow_openat2 = GetParam();
  CaptureTreeFs cfs(tree, o);
  absl::StatusOr<capture::Capture> c = CollectCapture(cfs, CollectOptions{});
  ASSERT_TRUE(c.ok()) << c.status();
  for (const auto& [path, node] : c->nodes()) {
    EXPECT_EQ(path.find('\n'), std::string::npos) << path;
    EXPECT_EQ(path.find("self"), std::string::npos) << path;
    EXPECT_EQ(node.content.find(kSecret), std::string::npos) << path;
  }
  EXPECT_EQ(c->FileContent("proc/7/smaps"), nullptr);
  EXPECT_EQ(c->Find("proc/8/smaps"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Openat2AndRealpath, HostileNamesTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "openat2" : "realpath";
                         });

// A server can only ask for "a capture now" (with a sweep id the agent echoes, never uses as a path) or
// a new interval: no command of the protocol has a field that could name a file.
TEST(ServerCommandsTest, NoServerMessageCanNameAPath) {
  const google::protobuf::Descriptor* server_message = v1::ServerMessage::descriptor();
  std::vector<std::string> string_fields;
  for (int i = 0; i < server_message->field_count(); ++i) {
    const google::protobuf::Descriptor* body = server_message->field(i)->message_type();
    ASSERT_NE(body, nullptr);
    for (int j = 0; j < body->field_count(); ++j) {
      const google::protobuf::FieldDescriptor* f = body->field(j);
      if (f->type() == google::protobuf::FieldDescriptor::TYPE_STRING ||
          f->type() == google::protobuf::FieldDescriptor::TYPE_BYTES ||
          f->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
        string_fields.push_back(std::string(body->name()) + "." + std::string(f->name()));
      }
    }
  }
  // Welcome.server_version and the ack/rejection texts are logged; CaptureNow.sweep_id goes back to
  // the server and into the spool's metadata, never into a path.
  EXPECT_EQ(string_fields,
            (std::vector<std::string>{"Welcome.server_version", "CaptureAck.capture_id", "CaptureRejected.capture_id",
                                      "CaptureRejected.message", "CaptureNow.sweep_id"}));
}

}  // namespace
}  // namespace memfleet::agent
