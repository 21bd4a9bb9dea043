#include "cli/adb_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/scoped_fd.h"

extern char** environ;

namespace memfleet::cli {
namespace {

using SteadyClock = std::chrono::steady_clock;

int MillisecondsLeft(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

enum class ReadEnd { kClosed, kDeadline, kTooMuch };

// Everything the child writes until it closes its end, the deadline passes or it wrote more than
// `max_bytes` (what it wrote up to then is in *out).
ReadEnd ReadAll(int fd, SteadyClock::time_point deadline, size_t max_bytes, std::string* out) {
  char buffer[16384];
  while (true) {
    struct pollfd p = {fd, POLLIN, 0};
    int ready = poll(&p, 1, MillisecondsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ReadEnd::kDeadline;
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return ReadEnd::kClosed;
    if (out->size() + static_cast<size_t>(n) > max_bytes) return ReadEnd::kTooMuch;
    out->append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

std::string AdbProgram() {
  const char* adb = std::getenv("ADB");
  return adb != nullptr && adb[0] != '\0' ? std::string(adb) : std::string("adb");
}

ProcessAdb::ProcessAdb(std::string program, std::chrono::seconds timeout, size_t max_output_bytes)
    : program_(std::move(program)), timeout_(timeout), max_output_bytes_(max_output_bytes) {}

absl::StatusOr<AdbResult> ProcessAdb::Run(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  ScopedFd read_end(pipe_fds[0]);
  ScopedFd write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program_.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, program_.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  const std::string command = absl::StrCat(program_, " ", absl::StrJoin(args, " "));
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot run ", program_, ": ", std::strerror(rc), " (install Debian's adb package, or set $ADB)"));
  }

  AdbResult result;
  const ReadEnd end = ReadAll(read_end.get(), SteadyClock::now() + timeout_, max_output_bytes_, &result.output);
  if (end != ReadEnd::kClosed) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (end == ReadEnd::kDeadline) {
    return absl::DeadlineExceededError(absl::StrCat("`", command, "` did not finish within ", timeout_.count(), " s"));
  }
  if (end == ReadEnd::kTooMuch) {
    return absl::ResourceExhaustedError(
        absl::StrCat("`", command, "` printed more than ", max_output_bytes_ >> 20, " MiB; stopped reading it"));
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace memfleet::cli
