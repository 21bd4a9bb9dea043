#include "agent/reader/device_root_fs.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <utility>

#include "agent/reader/errno_name.h"
#include "agent/reader/node_allowlist.h"
#include "common/scoped_fd.h"

namespace memfleet::agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kDumpsys = "system/bin/dumpsys";
constexpr std::string_view kAm = "system/bin/am";
constexpr std::string_view kGetprop = "system/bin/getprop";

int MillisecondsUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Reaps `pid`, killing its process group if it outlives the deadline. True when it exited with status 0.
bool WaitForExit(pid_t pid, Clock::time_point deadline, bool* timed_out) {
  int status = 0;
  auto nap = std::chrono::milliseconds(1);
  while (true) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return false;
    if (Clock::now() >= deadline) {
      *timed_out = true;
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return false;
    }
    // The child usually exits right after closing its stdout, so start with short naps.
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string DefaultScratchDir() {
  struct stat st;
  if (stat("/data/local/tmp", &st) == 0 && S_ISDIR(st.st_mode)) return "/data/local/tmp";
  return "/tmp";
}

}  // namespace

DeviceRootFs::DeviceRootFs(std::string root, Options options)
    : root_(std::move(root), RootedDir::Options{options.allow_openat2}), options_(std::move(options)) {
  if (options_.scratch_dir.empty()) options_.scratch_dir = DefaultScratchDir();
}

NodeRead DeviceRootFs::ReadAtMost(std::string_view path, size_t max_bytes) { return root_.ReadFile(path, max_bytes); }

bool DeviceRootFs::MayActOnRoot() const { return options_.live_folder || root_.root_real() == "/"; }

NodeRead DeviceRootFs::WriteThenRead(std::string_view path, std::string_view request, std::string_view /*arg*/) {
  if (!MayActOnRoot()) return NodeRead::Failure("EPERM");
  absl::MutexLock lock(&write_then_read_mu_);
  return root_.WriteThenReadFile(path, request);
}

DirList DeviceRootFs::List(std::string_view path) { return root_.ListDir(path); }

bool DeviceRootFs::IsDirectory(std::string_view path) { return root_.IsDirectory(path); }

NodeRead DeviceRootFs::RunCommand(std::string_view name, std::string_view arg) {
  if (!MayActOnRoot()) return NodeRead::Failure("EPERM");
  if (name == "dumpsys_meminfo") {
    if (!arg.empty()) return NodeRead::Failure("EINVAL");
    return RunProgram(kDumpsys, {"dumpsys", "meminfo"}, options_.command_timeout_ms);
  }
  if (name == "dumpsys_gpu_gpumem") {
    // Android 12+ gpuservice; shell may run it, root is not needed.
    if (!arg.empty()) return NodeRead::Failure("EINVAL");
    return RunProgram(kDumpsys, {"dumpsys", "gpu", "--gpumem"}, options_.command_timeout_ms);
  }
  if (name == "getprop") {
    // Every property: the static agent cannot read bionic's property area, and one run is cheaper than
    // one per property.
    if (!arg.empty()) return NodeRead::Failure("EINVAL");
    return RunProgram(kGetprop, {"getprop"}, options_.command_timeout_ms);
  }
  if (name == "native_heap") {
    if (!IsNumericName(arg) || arg.size() > 10) return NodeRead::Failure("EINVAL");
    return DumpNativeHeap(arg);
  }
  return NodeRead::Failure("EINVAL");
}

NodeRead DeviceRootFs::RunProgram(std::string_view program_in_root, const std::vector<std::string>& args,
                                  int timeout_ms) {
  if (!root_.IsRegularFile(program_in_root)) return NodeRead::Failure("ENOENT");
  std::string program = (root_.root_real() == "/" ? std::string() : root_.root_real()) + "/";
  program.append(program_in_root);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return NodeRead::Failure(ErrnoName(errno));
  ScopedFd read_end(pipe_fds[0]);
  ScopedFd write_end(pipe_fds[1]);

  // No shell: argv goes to the program as is. stdin and stderr are /dev/null; the child gets its own
  // process group so a timeout kills whatever it started too, and default SIGPIPE whatever the agent has.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &empty_mask);
  posix_spawnattr_setsigdefault(&attr, &default_signals);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  write_end.reset();  // the child's copy is the only writer left: its exit ends the reads below
  if (rc != 0) return NodeRead::Failure(ErrnoName(rc));

  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  std::string output;
  bool timed_out = false;
  bool too_big = false;
  std::string read_error;
  char buffer[65536];
  while (true) {
    int wait_ms = MillisecondsUntil(deadline);
    if (wait_ms == 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {read_end.get(), POLLIN, 0};
    int ready = poll(&p, 1, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      read_error = ErrnoName(errno);
      break;
    }
    if (ready == 0) {
      timed_out = true;
      break;
    }
    ssize_t n = read(read_end.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      read_error = ErrnoName(errno);
      break;
    }
    if (n == 0) break;
    if (output.size() + static_cast<size_t>(n) > options_.max_command_output_bytes) {
      too_big = true;
      break;
    }
    output.append(buffer, static_cast<size_t>(n));
  }
  read_end.reset();
  if (timed_out || too_big || !read_error.empty()) {
    kill(-pid, SIGKILL);
    deadline = Clock::now();  // reap now, no grace period
  }
  bool wait_timed_out = false;
  bool exited_ok = WaitForExit(pid, deadline, &wait_timed_out);
  if (too_big) return NodeRead::Failure("EFBIG");
  if (!read_error.empty()) return NodeRead::Failure(read_error);
  if (timed_out || wait_timed_out) return NodeRead::Failure("ETIMEDOUT");
  if (!exited_ok) return NodeRead::Failure("EIO");
  NodeRead out;
  out.content = std::move(output);
  return out;
}

NodeRead DeviceRootFs::DumpNativeHeap(std::string_view pid) {
  if (!root_.IsRegularFile(kAm)) return NodeRead::Failure("ENOENT");
  // `am dumpheap` writes the dump to a file it opens itself; a fresh private file per dump, removed after.
  std::string path = options_.scratch_dir + "/memfleet_heap_XXXXXX";
  ScopedFd placeholder(mkostemp(path.data(), O_CLOEXEC));
  if (!placeholder.valid()) return NodeRead::Failure(ErrnoName(errno));
  placeholder.reset();  // am opens the file itself
  NodeRead run = RunProgram(kAm, {"am", "dumpheap", "-n", std::string(pid), path}, options_.heap_dump_timeout_ms);
  NodeRead dump;
  if (!run.ok()) {
    dump = std::move(run);
  } else {
    ScopedFd dump_fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!dump_fd.valid()) {
      dump = NodeRead::Failure(ErrnoName(errno));
    } else {
      struct stat st;
      size_t hint = fstat(dump_fd.get(), &st) == 0 && st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
      dump = ReadFdToEnd(dump_fd.get(), hint);
      if (dump.ok() && dump.content.empty()) dump = NodeRead::Failure("ENODATA");
    }
  }
  unlink(path.c_str());
  return dump;
}

}  // namespace memfleet::agent
