#include "agent/reader/collector.h"

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/reader/node_allowlist.h"
#include "capture/node_path.h"

namespace memfleet::agent {
namespace {

using capture::Capture;
using Names = std::initializer_list<std::string_view>;

const Names kPidFiles = {"cmdline", "status", "oom_score_adj", "smaps", "smaps_rollup", "maps"};
const Names kCmaSysfsFiles = {"alloc_pages_success", "alloc_pages_fail", "release_pages_success",
                              "total_pages",         "available_pages",  "gcma"};
const Names kCmaDebugFiles = {"count", "used", "order_per_bit"};
const Names kKgslFiles = {"gpumem_mapped", "gpumem_unmapped", "imported_mem", "kernel"};
const Names kDmabufFiles = {"size", "exporter_name"};
const Names kZramFiles = {"mm_stat", "mem_used_total"};

constexpr char kRssPid[] = "proc/dma_heap/rss_pid";

std::string Join(std::string_view dir, std::string_view name) {
  std::string out(dir);
  out += '/';
  out.append(name);
  return out;
}

const DirEntry* FindEntry(const DirList& list, std::string_view name) {
  for (const DirEntry& e : list.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// An entry that stands for a folder: a real one, or one a capture tree records as failed.
bool IsFolderEntry(const DirEntry& e) { return e.is_directory || e.is_error; }

absl::StatusOr<std::string> DeviceHeader(const CollectOptions& options) {
  try {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    header["format"] = 1;
    header["device_id"] = options.device_id;
    header["captured_at"] = options.captured_at;
    header["page_size"] = options.page_size;
    if (options.full_smaps) header["smaps"] = "full";
    if (options.android_version) header["android_version"] = *options.android_version;
    if (options.ddr_size_kb) header["ddr_size_kb"] = *options.ddr_size_kb;
    for (const auto& [name, value] : options.header_facts) {
      if (!header.contains(name)) header[name] = value;
    }
    // `replace`: a device id that is not UTF-8 must not throw out of dump().
    return header.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot write the capture.json header: ", e.what()));
  }
}

// One collection. Discovery is by listing: a node is read only when its folder's listing shows it, so a
// failed read is always a fact about a node that exists (denied, EIO, or gone since the listing) and is
// recorded, while nodes this kernel simply lacks leave no trace.
class Collector {
 public:
  Collector(RootFs& fs, const CollectOptions& options) : fs_(fs), options_(options) {}

  absl::StatusOr<Capture> Run();

 private:
  enum class Presence {
    kOptional,  // may not exist on this kernel: ENOENT is not a fact
    kListed,    // its parent's listing showed it
  };

  // On a live root, pids, fds and buffers come and go between a listing and a read: ENOENT / ESRCH there
  // is a race, not a fact. A capture tree is replayed losslessly.
  bool IsRace(const std::string& errno_name, bool race_prone) const {
    return race_prone && !capture_tree_ && (errno_name == "ENOENT" || errno_name == "ESRCH");
  }

  std::optional<DirList> ListDir(const std::string& path, Presence presence, bool race_prone);
  // The size of the bytes recorded, or nullopt when the node failed (recorded or not) or is refused.
  std::optional<size_t> ReadFile(const std::string& path, bool race_prone);
  void ReadListedFiles(const std::string& dir, const DirList& list, Names names, bool race_prone);
  void CollectRegions(const std::string& dir, Names names);
  void CollectPid(const std::string& pid);
  void CollectDmabuf();
  void CollectKgsl();
  void CollectZram();
  void CollectRssPid();
  void CollectCommands();
  // The live GPU processes whose native heap this capture dumps (CollectOptions::max_heap_dumps).
  std::vector<std::string> HeapDumpPids() const;
  // Records the result of a write-then-read or command node. A missing node is skipped unless a listing
  // showed it (a capture tree's `.err` saying ENOENT).
  void RecordArgNode(const std::string& node, NodeRead r, bool listed);

  // A node read with no more bytes than it could be kept with (the node cap, or what is left of the
  // capture): one that has more comes back as the error KeepFile would record, EFBIG or kCaptureFullErrno,
  // without the agent ever holding more than that budget of it.
  NodeRead ReadWithinBudget(const std::string& path);
  // Every node goes through these, which hold the capture to options_.max_capture_bytes: a file that
  // does not fit becomes an error node kCaptureFullErrno; a node that does not fit even so (the last
  // bytes of the cap) is left out.
  void KeepFile(const std::string& path, std::string content);
  void KeepError(const std::string& path, std::string errno_name);
  void KeepDirectory(const std::string& path);
  bool Fits(const std::string& path, size_t value_bytes) const { return value_bytes <= RoomFor(path); }
  // The value bytes `path` may still take: what the capture has left after the path and the parent
  // folders adding it would create.
  uint64_t RoomFor(const std::string& path) const {
    const uint64_t held = capture_.held_bytes();
    const uint64_t need = uint64_t{path.size()} + NewParentBytes(path);
    if (held > options_.max_capture_bytes || need > options_.max_capture_bytes - held) return 0;
    return options_.max_capture_bytes - held - need;
  }
  // The path bytes of the parent folders that adding `path` would create.
  size_t NewParentBytes(std::string_view path) const {
    size_t bytes = 0;
    for (size_t slash = path.rfind('/'); slash != std::string_view::npos && slash > 0;
         slash = path.rfind('/', slash - 1)) {
      if (capture_.Find(path.substr(0, slash)) != nullptr) break;
      bytes += slash;
    }
    return bytes;
  }

  std::string RootLabel() const {
    std::string name = fs_.RootName();
    return name.empty() ? "the root" : absl::StrCat("'", name, "'");
  }

  RootFs& fs_;
  const CollectOptions& options_;
  bool capture_tree_ = false;
  Capture capture_;
  // Pids whose smaps or smaps_rollup has content: the processes the per-process extras are asked for
  // (kernel threads have empty smaps; the extras cost a kernel walk or a command each).
  std::set<std::string> pids_with_memory_;
  // Pids with a KGSL proc folder on a live root: GPU processes, as are those whose maps show a GPU
  // device mapping. Only they get full smaps, the per-mapping detail the engine uses (gfxdev_kb); the
  // rest get smaps_rollup + maps, which give the same figures (docs/accounting.md section 2).
  std::set<std::string> kgsl_pids_;
  // Live pids with memory that are GPU processes (a KGSL folder or a GPU device mapping).
  std::set<std::string> gpu_pids_;
};

// A mapping of a GPU device node (docs/accounting.md section 2, gfxdev_kb: /dev/kgsl*, *kgsl-3d0*,
// /dev/mali*). A plain substring search over maps, not a parse: a false hit only costs reading the full
// smaps.
bool MapsShowGpuDevice(std::string_view maps) {
  return maps.find(" /dev/kgsl") != std::string_view::npos || maps.find("kgsl-3d0") != std::string_view::npos ||
         maps.find(" /dev/mali") != std::string_view::npos;
}

NodeRead Collector::ReadWithinBudget(const std::string& path) {
  const uint64_t node_cap = std::min<uint64_t>(options_.max_node_bytes, kMaxNodeBytes);
  const uint64_t room = RoomFor(path);
  NodeRead r = fs_.ReadAtMost(path, static_cast<size_t>(std::min(node_cap, room)));
  // A node over both caps is told as the tighter one: the read stopped there.
  if (r.errno_name == "EFBIG" && room < node_cap) r.errno_name = kCaptureFullErrno;
  return r;
}

void Collector::KeepFile(const std::string& path, std::string content) {
  if (content.size() > options_.max_node_bytes) {
    KeepError(path, "EFBIG");
  } else if (Fits(path, content.size())) {
    capture_.AddFile(path, std::move(content));
  } else {
    KeepError(path, kCaptureFullErrno);
  }
}

void Collector::KeepError(const std::string& path, std::string errno_name) {
  if (Fits(path, errno_name.size())) {
    capture_.AddError(path, std::move(errno_name));
  }
}

void Collector::KeepDirectory(const std::string& path) {
  if (Fits(path, 0)) {
    capture_.AddDirectory(path);
  }
}

std::optional<DirList> Collector::ListDir(const std::string& path, Presence presence, bool race_prone) {
  if (!IsAllowedDirectory(path)) return std::nullopt;
  DirList list = fs_.List(path);
  if (list.ok()) {
    KeepDirectory(path);
    return list;
  }
  if (presence == Presence::kOptional && list.errno_name == "ENOENT") return std::nullopt;
  if (!IsRace(list.errno_name, race_prone)) KeepError(path, list.errno_name);
  return std::nullopt;
}

std::optional<size_t> Collector::ReadFile(const std::string& path, bool race_prone) {
  if (!IsAllowed(path)) return std::nullopt;
  NodeRead r = ReadWithinBudget(path);
  if (r.ok()) {
    size_t size = r.content.size();
    KeepFile(path, std::move(r.content));
    return size;
  }
  if (!IsRace(r.errno_name, race_prone)) KeepError(path, std::move(r.errno_name));
  return std::nullopt;
}

void Collector::ReadListedFiles(const std::string& dir, const DirList& list, Names names, bool race_prone) {
  for (std::string_view name : names) {
    if (FindEntry(list, name) != nullptr) ReadFile(Join(dir, name), race_prone);
  }
}

void Collector::CollectRegions(const std::string& dir, Names names) {
  std::optional<DirList> regions = ListDir(dir, Presence::kOptional, false);
  if (!regions) return;
  for (const DirEntry& e : regions->entries) {
    if (!IsFolderEntry(e) || !IsSafeRegionName(e.name)) continue;
    std::string region = Join(dir, e.name);
    if (std::optional<DirList> files = ListDir(region, Presence::kListed, false)) {
      ReadListedFiles(region, *files, names, false);
    }
  }
}

void Collector::CollectPid(const std::string& pid) {
  std::string dir = Join("proc", pid);
  std::optional<DirList> list = ListDir(dir, Presence::kListed, /*race_prone=*/true);
  if (!list) return;
  bool has_memory = false;
  bool gpu = false;
  if (capture_tree_) {
    // Whatever the tree recorded is replayed (a tree may hold smaps_rollup and maps instead of smaps).
    for (std::string_view name : kPidFiles) {
      if (FindEntry(*list, name) == nullptr) continue;
      std::optional<size_t> size = ReadFile(Join(dir, name), false);
      if ((name == "smaps" || name == "smaps_rollup") && size.value_or(0) > 0) has_memory = true;
    }
  } else {
    // Per-pid failures are facts the rules use (an EACCES oom_score_adj, a pid that exited: smaps gone),
    // so they are recorded even as ENOENT.
    ReadListedFiles(dir, *list, {"cmdline", "status", "oom_score_adj"}, false);
    // maps first: it is cheap for the kernel (no page walk) and tells a GPU process apart. It is kept
    // only when full smaps is not, for the dma-buf mappings smaps would have shown.
    const std::string maps_path = Join(dir, "maps");
    std::optional<NodeRead> maps;
    if (FindEntry(*list, "maps") != nullptr && IsAllowed(maps_path)) maps = ReadWithinBudget(maps_path);
    gpu = kgsl_pids_.count(pid) > 0 || (maps && maps->ok() && MapsShowGpuDevice(maps->content));
    // A kernel without smaps_rollup (before 4.14) leaves full smaps as the only source.
    const bool full_smaps = options_.full_smaps || gpu || FindEntry(*list, "smaps_rollup") == nullptr;
    std::optional<size_t> smaps;
    if (full_smaps && FindEntry(*list, "smaps") != nullptr) smaps = ReadFile(Join(dir, "smaps"), false);
    if (smaps) {
      has_memory = *smaps > 0;
    } else {
      // Without full smaps: the rollup for Pss, and maps for the dma-buf mappings.
      if (FindEntry(*list, "smaps_rollup") != nullptr) {
        has_memory = ReadFile(Join(dir, "smaps_rollup"), false).value_or(0) > 0;
      }
      if (maps) {
        if (maps->ok()) {
          KeepFile(maps_path, std::move(maps->content));
        } else {
          KeepError(maps_path, std::move(maps->errno_name));
        }
      }
    }
  }
  if (has_memory) pids_with_memory_.insert(pid);
  if (has_memory && gpu) gpu_pids_.insert(pid);

  const DirEntry* fdinfo = FindEntry(*list, "fdinfo");
  if (fdinfo == nullptr || !IsFolderEntry(*fdinfo)) return;
  std::string fdinfo_dir = Join(dir, "fdinfo");
  std::optional<DirList> fds = ListDir(fdinfo_dir, Presence::kListed, /*race_prone=*/true);
  if (!fds) return;
  for (const DirEntry& e : fds->entries) {
    if (IsNumericName(e.name)) ReadFile(Join(fdinfo_dir, e.name), /*race_prone=*/true);
  }
}

void Collector::CollectDmabuf() {
  const std::string dir = "sys/kernel/dmabuf/buffers";
  std::optional<DirList> buffers = ListDir(dir, Presence::kOptional, false);
  if (!buffers) return;
  for (const DirEntry& e : buffers->entries) {
    if (!IsFolderEntry(e) || !IsNumericName(e.name)) continue;
    std::string buffer = Join(dir, e.name);
    // A buffer freed since the listing is a race; its size falls back to fdinfo anyway.
    if (std::optional<DirList> files = ListDir(buffer, Presence::kListed, true)) {
      ReadListedFiles(buffer, *files, kDmabufFiles, true);
    }
  }
}

void Collector::CollectKgsl() {
  const std::string root = "sys/class/kgsl/kgsl";
  // Its mere existence is a fact (the platform is qcom), recorded by ListDir.
  std::optional<DirList> kgsl = ListDir(root, Presence::kOptional, false);
  if (!kgsl) return;
  const DirEntry* proc = FindEntry(*kgsl, "proc");
  if (proc == nullptr || !IsFolderEntry(*proc)) return;
  std::string proc_dir = Join(root, "proc");
  std::optional<DirList> pids = ListDir(proc_dir, Presence::kListed, false);
  if (!pids) return;
  for (const DirEntry& e : pids->entries) {
    if (!IsFolderEntry(e) || !IsNumericName(e.name)) continue;
    std::string pid_dir = Join(proc_dir, e.name);
    // A file missing from an existing pid folder is left out: the engine reads "folder exists, file not
    // in the capture" as missing. Read errors (EIO on gpumem_unmapped happens) are recorded.
    if (std::optional<DirList> files = ListDir(pid_dir, Presence::kListed, true)) {
      ReadListedFiles(pid_dir, *files, kKgslFiles, true);
    }
  }
}

void Collector::CollectZram() {
  std::optional<DirList> block = ListDir("sys/block", Presence::kOptional, false);
  if (!block) return;
  for (const DirEntry& e : block->entries) {
    if (!IsFolderEntry(e) || !absl::StartsWith(e.name, "zram")) continue;
    std::string device = Join("sys/block", e.name);
    if (!IsAllowedDirectory(device)) continue;
    if (std::optional<DirList> files = ListDir(device, Presence::kListed, false)) {
      ReadListedFiles(device, *files, kZramFiles, false);
    }
  }
}

void Collector::RecordArgNode(const std::string& node, NodeRead r, bool listed) {
  if (r.ok()) {
    KeepFile(node, std::move(r.content));
  } else if (r.errno_name != "ENOENT" || listed) {
    KeepError(node, std::move(r.errno_name));
  }
}

void Collector::CollectRssPid() {
  std::optional<DirList> list = ListDir("proc/dma_heap", Presence::kListed, false);
  if (!list) return;
  // A live root shows `rss_pid`; a capture tree shows the `rss_pid@<pid>` nodes it recorded.
  bool has_node = false;
  std::set<std::string> listed;
  for (const DirEntry& e : list->entries) {
    if (e.name == "rss_pid") {
      has_node = true;
    } else if (absl::StartsWith(e.name, "rss_pid@") && IsNumericName(e.name.substr(8))) {
      has_node = true;
      listed.insert(e.name.substr(8));
    }
  }
  if (!has_node) return;
  std::set<std::string> pids = listed;
  pids.insert(pids_with_memory_.begin(), pids_with_memory_.end());
  for (const std::string& pid : pids) {
    std::string node = absl::StrCat(kRssPid, "@", pid);
    if (!IsAllowed(node)) continue;
    // The kernel wants exactly "pid:<pid>\n" in one write (docs/node-formats.md section 3).
    NodeRead r = fs_.WriteThenRead(kRssPid, absl::StrCat("pid:", pid, "\n"), pid);
    RecordArgNode(node, std::move(r), listed.count(pid) > 0);
  }
}

std::vector<std::string> Collector::HeapDumpPids() const {
  std::vector<std::string> gpu(gpu_pids_.begin(), gpu_pids_.end());
  std::sort(gpu.begin(), gpu.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;  // numeric order of decimal names
  });
  const size_t take = std::min(options_.max_heap_dumps, gpu.size());
  if (take == 0) return {};
  const size_t first = static_cast<size_t>((options_.heap_dump_round % gpu.size()) * take % gpu.size());
  std::vector<std::string> pids;
  for (size_t i = 0; i < take; ++i) pids.push_back(gpu[(first + i) % gpu.size()]);
  return pids;
}

void Collector::CollectCommands() {
  std::set<std::string> listed_heaps;
  std::set<std::string> listed_commands;
  if (std::optional<DirList> cmd = ListDir("cmd", Presence::kOptional, false)) {
    for (const DirEntry& e : cmd->entries) {
      if (absl::StartsWith(e.name, "native_heap@") && IsNumericName(e.name.substr(12))) {
        listed_heaps.insert(e.name.substr(12));
      } else {
        listed_commands.insert(e.name);
      }
    }
  }
  // A capture tree's recorded outputs are replayed as they are; a live root runs what this capture asks.
  std::set<std::string> pids = listed_heaps;
  if (!capture_tree_) {
    for (std::string& pid : HeapDumpPids()) pids.insert(std::move(pid));
  }
  for (const std::string& pid : pids) {
    std::string node = capture::NativeHeapNode(pid);
    if (!IsAllowed(node)) continue;
    RecordArgNode(node, fs_.RunCommand("native_heap", pid), listed_heaps.count(pid) > 0);
  }
  for (std::string_view name : {"dumpsys_meminfo", "dumpsys_gpu_gpumem", "getprop"}) {
    const bool listed = listed_commands.count(std::string(name)) > 0;
    if (!capture_tree_ && !options_.run_dumpsys) continue;
    if (capture_tree_ && !listed) continue;
    const std::string node = "cmd/" + std::string(name);
    if (IsAllowed(node)) RecordArgNode(node, fs_.RunCommand(name, ""), listed);
  }
}

absl::StatusOr<Capture> Collector::Run() {
  NodeRead header = ReadWithinBudget(capture::kHeaderNode);
  if (header.ok()) {
    capture_tree_ = true;
    KeepFile(capture::kHeaderNode, std::move(header.content));
  } else if (header.errno_name == "EFBIG" || header.errno_name == kCaptureFullErrno) {
    capture_tree_ = true;  // a capture.json too big to keep: recorded as such, as any other node
    KeepError(capture::kHeaderNode, std::move(header.errno_name));
  } else if (header.errno_name == "EINVAL") {
    // What RootedDir refuses: a link out of the root, or a FIFO / device node in place of a file.
    return absl::FailedPreconditionError(
        absl::StrCat(RootLabel(),
                     " has a capture.json that is not a regular file inside it (EINVAL): a symlink that "
                     "leads out of the tree is not followed; copy the file into the tree instead"));
  } else if (header.errno_name != "ENOENT") {
    return absl::FailedPreconditionError(absl::StrCat(RootLabel(), " has a capture.json that cannot be read (",
                                                      header.errno_name,
                                                      "); fix its permissions, or remove it if this is a device root"));
  }

  std::optional<DirList> proc = ListDir("proc", Presence::kOptional, false);
  bool has_meminfo = proc && FindEntry(*proc, "meminfo") != nullptr;
  if (!capture_tree_ && !has_meminfo) {
    return absl::FailedPreconditionError(
        absl::StrCat(RootLabel(),
                     " is neither a capture tree (no capture.json) nor a device root (no proc/meminfo); "
                     "point the agent at a capture tree folder or at the root of a running system"));
  }
  if (!capture_tree_) {
    absl::StatusOr<std::string> json = DeviceHeader(options_);
    if (!json.ok()) return json.status();
    KeepFile(capture::kHeaderNode, *std::move(json));
  }

  if (proc && !capture_tree_ && IsAllowedDirectory("sys/class/kgsl/kgsl/proc")) {
    // Unrecorded here: CollectKgsl records the folder and its files.
    DirList kgsl = fs_.List("sys/class/kgsl/kgsl/proc");
    for (const DirEntry& e : kgsl.entries) {
      if (IsNumericName(e.name)) kgsl_pids_.insert(e.name);
    }
  }
  if (proc) {
    ReadListedFiles("proc", *proc, {"meminfo", "config.gz"}, false);
    for (const DirEntry& e : proc->entries) {
      if (IsFolderEntry(e) && IsNumericName(e.name)) CollectPid(e.name);
    }
    for (std::string_view gpu : {"mtk_mali", "xgpu"}) {
      const DirEntry* e = FindEntry(*proc, gpu);
      if (e == nullptr || !IsFolderEntry(*e)) continue;
      std::string dir = Join("proc", gpu);
      if (std::optional<DirList> files = ListDir(dir, Presence::kListed, false)) {
        ReadListedFiles(dir, *files, {"gpu_memory"}, false);
      }
    }
  }
  CollectRegions("sys/kernel/mm/cma", kCmaSysfsFiles);
  CollectRegions("sys/kernel/debug/cma", kCmaDebugFiles);
  // Mali kbase on SoCs other than MediaTek (debugfs: root only, mounted on most farm builds).
  if (std::optional<DirList> mali = ListDir("sys/kernel/debug/mali0", Presence::kOptional, false)) {
    ReadListedFiles("sys/kernel/debug/mali0", *mali, {"gpu_memory"}, false);
  }
  CollectDmabuf();
  CollectKgsl();
  CollectZram();
  if (std::optional<DirList> heaps = ListDir("sys/kernel/dma_heap", Presence::kOptional, false)) {
    ReadListedFiles("sys/kernel/dma_heap", *heaps, {"total_pools_kb"}, false);
  }
  if (std::optional<DirList> ion = ListDir("sys/kernel/ion", Presence::kOptional, false)) {
    ReadListedFiles("sys/kernel/ion", *ion, {"total_heaps_kb", "total_pools_kb"}, false);
  }
  if (proc) {
    const DirEntry* dma_heap = FindEntry(*proc, "dma_heap");
    if (dma_heap != nullptr && IsFolderEntry(*dma_heap)) CollectRssPid();
  }
  // A capture tree's command outputs are recorded data, always replayed; a live root runs them on request.
  if (capture_tree_ || options_.run_commands) CollectCommands();
  return std::move(capture_);
}

}  // namespace

absl::StatusOr<capture::Capture> CollectCapture(RootFs& fs, const CollectOptions& options) {
  Collector collector(fs, options);
  return collector.Run();
}

}  // namespace memfleet::agent
