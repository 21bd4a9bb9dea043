// DeviceRootFs: a RootFs over a live root — "/" on a phone or on a Linux machine, or a folder holding a
// running system (a chroot, a mounted device root). Nodes are read to EOF with read() loops (procfs
// reports size 0); the allowlisted commands run without a shell, with a timeout, only when the root
// has them. Under a folder other than "/" nothing is run or written unless Options::live_folder says it
// is a live system (ChooseRootKind in root_kind.h decides which RootFs a folder gets).
//
//   DeviceRootFs fs("/");
//   NodeRead m = fs.Read("proc/meminfo");
//   NodeRead d = fs.RunCommand("dumpsys_meminfo", "");   // <root>/system/bin/dumpsys meminfo, or ENOENT
//   NodeRead h = fs.RunCommand("native_heap", "1234");   // am dumpheap -n 1234 <scratch file>
//   NodeRead p = fs.RunCommand("getprop", "");           // <root>/system/bin/getprop, or ENOENT
//
// Path rules are RootedDir's (EINVAL for absolute, "."/".." segments, escapes). Thread-safe;
// WriteThenRead calls are serialized because the kernel nodes they drive are global and one-shot.
#ifndef MEMFLEET_AGENT_READER_DEVICE_ROOT_FS_H_
#define MEMFLEET_AGENT_READER_DEVICE_ROOT_FS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/reader/root_fs.h"
#include "agent/reader/rooted_dir.h"

namespace memfleet::agent {

class DeviceRootFs : public RootFs {
 public:
  struct Options {
    int command_timeout_ms = 10000;  // a command still running then is killed (its process group)
    // The same for `am dumpheap -n`, which a capture runs for a few processes: each may hold the capture
    // only this long (--heap-dump-timeout-ms).
    int heap_dump_timeout_ms = 5000;
    size_t max_command_output_bytes = size_t{64} << 20;
    // Where `am dumpheap` writes its dump (an absolute path of the running system, not under the root).
    // Empty: /data/local/tmp when it is a folder (Android), else /tmp.
    std::string scratch_dir;
    bool allow_openat2 = true;  // see RootedDir::Options
    // A root other than "/" is a running system whose programs may run and whose nodes may be written
    // (--live-root). Off, RunCommand and WriteThenRead fail with EPERM there: a data folder laid out
    // like a root must not make the agent (often root itself) run or write what it holds.
    bool live_folder = false;
  };

  explicit DeviceRootFs(std::string root, Options options);
  explicit DeviceRootFs(std::string root = "/") : DeviceRootFs(std::move(root), Options{}) {}

  NodeRead ReadAtMost(std::string_view path, size_t max_bytes) override;
  // `arg` only names the node in the capture; `request` is what the kernel gets. EPERM under a folder
  // that is not a live system (see Options::live_folder).
  NodeRead WriteThenRead(std::string_view path, std::string_view request, std::string_view arg) override;
  DirList List(std::string_view path) override;
  bool IsDirectory(std::string_view path) override;
  // "dumpsys_meminfo", "dumpsys_gpu_gpumem" or "getprop" (arg empty), or "native_heap" (arg a pid);
  // anything else is EINVAL. ENOENT when the root has no system/bin/dumpsys (resp. getprop, am);
  // ETIMEDOUT (the command outlived its timeout and was killed), EFBIG (output over
  // the limit), EIO (non-zero exit or killed by a signal), ENODATA (am wrote no dump), EPERM under a
  // folder that is not a live system.
  NodeRead RunCommand(std::string_view name, std::string_view arg) override;
  std::string RootName() const override { return root_.root(); }

 private:
  NodeRead RunProgram(std::string_view program_in_root, const std::vector<std::string>& args, int timeout_ms);
  NodeRead DumpNativeHeap(std::string_view pid);
  // True when the root is "/" or Options::live_folder is set: programs may run and nodes be written.
  bool MayActOnRoot() const;

  RootedDir root_;
  Options options_;
  // Guards no member: a write-then-read node answers the last write, so the pair must not interleave.
  absl::Mutex write_then_read_mu_;
};

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_READER_DEVICE_ROOT_FS_H_
