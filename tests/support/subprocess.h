// Test support: starts a real binary (memfleet-server, memfleet-agent) as a child process with its
// output captured to a file, waits for a line, and stops it; or runs one to its end. Header-only; POSIX.
//
//   Subprocess server({bin + "/memfleet-server", "--listen", "127.0.0.1:0", "--db", db});
//   std::string line = server.WaitForLine("listening on", std::chrono::seconds(30));
//   ProcessRun token = RunToExit({bin + "/memfleet-server", "--db", db, "token", "list"}, dir + "/list.log");
#ifndef MEMFLEET_TESTS_SUPPORT_SUBPROCESS_H_
#define MEMFLEET_TESTS_SUPPORT_SUBPROCESS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace memfleet::testing {

class Subprocess {
 public:
  // stdout and stderr both go to `log_path` (a fresh file). It runs in `cwd` (this process's when "").
  Subprocess(const std::vector<std::string>& argv, const std::string& log_path, const std::string& cwd = "")
      : log_path_(log_path) {
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
      if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess() { Kill(SIGKILL); }

  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // The first log line containing `needle`, or "" after the timeout (or when the process died).
  std::string WaitForLine(const std::string& needle, std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      std::istringstream log(Log());
      for (std::string line; std::getline(log, line);) {
        if (line.find(needle) != std::string::npos) return line;
      }
      if (Exited()) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "";
  }

  // True once at least `count` log lines contain `needle`; false after the timeout or when the process died.
  bool WaitForLines(const std::string& needle, size_t count, std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      std::istringstream log(Log());
      size_t seen = 0;
      for (std::string line; std::getline(log, line);) seen += line.find(needle) != std::string::npos ? 1 : 0;
      if (seen >= count) return true;
      if (Exited()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  bool Exited() {
    if (pid_ <= 0) return true;
    if (exited_) return true;
    int status = 0;
    struct rusage usage = {};
    pid_t r = wait4(pid_, &status, WNOHANG, &usage);
    if (r == pid_) {
      exited_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      peak_rss_kb_ = usage.ru_maxrss;
    }
    return exited_;
  }

  // Waits for the process to exit by itself; returns its exit code, or -1 on timeout.
  int WaitExit(std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      if (Exited()) return exit_code_;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }

  // Sends `sig` and reaps the process (SIGTERM first gives it 10 s, then SIGKILL).
  void Kill(int sig = SIGTERM) {
    if (pid_ <= 0 || Exited()) return;
    kill(pid_, sig);
    if (WaitExit(std::chrono::seconds(10)) < 0) {
      kill(pid_, SIGKILL);
      WaitExit(std::chrono::seconds(10));
    }
  }

  pid_t pid() const { return pid_; }
  // The most the process had resident, once it has exited (0 before).
  long peak_rss_kb() const { return peak_rss_kb_; }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
  long peak_rss_kb_ = 0;
};

// What a binary run to its end left.
struct ProcessRun {
  int exit_code = -1;    // -1: still running at the timeout (then killed); 128+N: ended by signal N
  std::string output;    // stdout and stderr
  long peak_rss_kb = 0;  // the most it, or a child it waited for (adb, a shell), had resident
};

// Runs `argv` in `cwd` (this process's when "") until it exits, its output in `log_path`, which stays for a
// failing test to point at. Past `timeout` it is killed and its exit code is -1.
inline ProcessRun RunToExit(const std::vector<std::string>& argv, const std::string& log_path,
                            std::chrono::milliseconds timeout = std::chrono::seconds(60), const std::string& cwd = "") {
  Subprocess process(argv, log_path, cwd);
  ProcessRun run;
  run.exit_code = process.WaitExit(timeout);
  if (run.exit_code < 0) process.Kill(SIGKILL);
  run.output = process.Log();
  run.peak_rss_kb = process.peak_rss_kb();
  return run;
}

inline std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl =
      (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) + "/" + prefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* d = mkdtemp(buf.data());
  return d ? std::string(d) : std::string();
}

// A loopback port held for this object's lifetime, for a server that must come back where agents look
// (a restart, or a server that starts after its agents). The socket is bound with SO_REUSEADDR and
// never listens: connecting to it is refused, as when no server runs, and the kernel hands the port to
// no one else, while memfleet-server (also SO_REUSEADDR) can bind it. A port found free and closed
// again before a child binds it could be taken in between; this one never is.
class LoopbackPortReservation {
 public:
  LoopbackPortReservation() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::perror("LoopbackPortReservation");
      std::abort();
    }
    port_ = ntohs(addr.sin_port);
  }
  LoopbackPortReservation(const LoopbackPortReservation&) = delete;
  LoopbackPortReservation& operator=(const LoopbackPortReservation&) = delete;
  ~LoopbackPortReservation() { close(fd_); }

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_SUBPROCESS_H_
