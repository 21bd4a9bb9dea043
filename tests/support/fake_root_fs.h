// Test support: FakeRootFs, an in-memory RootFs where a test sets each node's content or the errno its read
// fails with (EACCES, EIO...), and then checks what the code under test asked for. Header-only.
//
//   FakeRootFs fs;
//   fs.AddFile("proc/meminfo", "MemTotal: 100 kB\n");
//   fs.AddError("proc/1/oom_score_adj", "EACCES");
//   ... CollectCapture(fs, {}) ...
//   EXPECT_THAT(fs.reads(), Not(Contains("proc/1/environ")));
//
// Folders exist implicitly above every node. WriteThenRead(p, request, arg) answers with node "p@arg";
// RunCommand(name, arg) with node "cmd/name@arg" (or "cmd/name"), like a capture tree. Not thread-safe.
#ifndef MEMFLEET_TESTS_SUPPORT_FAKE_ROOT_FS_H_
#define MEMFLEET_TESTS_SUPPORT_FAKE_ROOT_FS_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/reader/root_fs.h"

namespace memfleet::testing {

class FakeRootFs : public agent::RootFs {
 public:
  void AddFile(std::string path, std::string content) { nodes_[std::move(path)] = {Kind::kFile, std::move(content)}; }
  // Reading or listing `path` fails with `errno_name`; its folder's listing still shows it (is_error).
  void AddError(std::string path, std::string errno_name) {
    nodes_[std::move(path)] = {Kind::kError, std::move(errno_name)};
  }
  void AddDirectory(std::string path) { nodes_[std::move(path)] = {Kind::kDirectory, {}}; }

  // Every node asked for, in order: Read paths, "<path>@<arg>" for WriteThenRead, "cmd/<name>[@<arg>]"
  // for RunCommand.
  const std::vector<std::string>& reads() const { return reads_; }
  const std::vector<std::string>& lists() const { return lists_; }
  // The requests WriteThenRead got, as "<path>@<arg>=<request>".
  const std::vector<std::string>& write_requests() const { return write_requests_; }
  const std::vector<std::string>& commands() const { return commands_; }

  agent::NodeRead ReadAtMost(std::string_view path, size_t max_bytes) override {
    reads_.emplace_back(path);
    agent::NodeRead r = Lookup(path);
    if (r.ok() && r.content.size() > max_bytes) return Error("EFBIG");
    return r;
  }

  agent::NodeRead WriteThenRead(std::string_view path, std::string_view request, std::string_view arg) override {
    std::string node = std::string(path) + "@" + std::string(arg);
    reads_.push_back(node);
    write_requests_.push_back(node + "=" + std::string(request));
    // Like the kernel node: the write needs the node itself to exist.
    if (!Exists(path)) return Error("ENOENT");
    return Lookup(node);
  }

  agent::DirList List(std::string_view path) override {
    lists_.emplace_back(path);
    agent::DirList out;
    auto it = nodes_.find(std::string(path));
    if (it != nodes_.end() && it->second.kind == Kind::kError) {
      out.errno_name = it->second.content;
      return out;
    }
    if (it != nodes_.end() && it->second.kind == Kind::kFile) {
      out.errno_name = "ENOTDIR";
      return out;
    }
    std::string prefix = path.empty() ? "" : std::string(path) + "/";
    std::map<std::string, agent::DirEntry> children;
    bool found = it != nodes_.end();
    for (const auto& [node_path, node] : nodes_) {
      if (node_path.compare(0, prefix.size(), prefix) != 0 || node_path.size() == prefix.size()) continue;
      found = true;
      std::string rest = node_path.substr(prefix.size());
      size_t slash = rest.find('/');
      agent::DirEntry& e = children[rest.substr(0, slash)];
      e.name = rest.substr(0, slash);
      if (slash != std::string::npos || node.kind == Kind::kDirectory) e.is_directory = true;
      if (slash == std::string::npos && node.kind == Kind::kError) e.is_error = true;
    }
    if (!found) {
      out.errno_name = "ENOENT";
      return out;
    }
    for (auto& [name, e] : children) out.entries.push_back(std::move(e));
    return out;
  }

  bool IsDirectory(std::string_view path) override {
    auto it = nodes_.find(std::string(path));
    if (it != nodes_.end()) return it->second.kind == Kind::kDirectory;
    std::string prefix = std::string(path) + "/";
    auto next = nodes_.lower_bound(prefix);
    return next != nodes_.end() && next->first.compare(0, prefix.size(), prefix) == 0;
  }

  agent::NodeRead RunCommand(std::string_view name, std::string_view arg) override {
    std::string node = "cmd/" + std::string(name) + (arg.empty() ? "" : "@" + std::string(arg));
    reads_.push_back(node);
    commands_.push_back(node);
    return Lookup(node);
  }

  std::string RootName() const override { return "fake"; }

 private:
  enum class Kind { kFile, kError, kDirectory };
  struct Node {
    Kind kind;
    std::string content;  // bytes, or the errno name
  };

  static agent::NodeRead Error(std::string errno_name) {
    agent::NodeRead r;
    r.errno_name = std::move(errno_name);
    return r;
  }

  bool Exists(std::string_view path) { return nodes_.count(std::string(path)) > 0 || IsDirectory(path); }

  agent::NodeRead Lookup(std::string_view path) {
    auto it = nodes_.find(std::string(path));
    if (it == nodes_.end()) return Error(IsDirectory(path) ? "EISDIR" : "ENOENT");
    switch (it->second.kind) {
      case Kind::kFile: {
        agent::NodeRead r;
        r.content = it->second.content;
        return r;
      }
      case Kind::kError:
        return Error(it->second.content);
      case Kind::kDirectory:
        return Error("EISDIR");
    }
    return Error("EIO");
  }

  std::map<std::string, Node> nodes_;
  std::vector<std::string> reads_;
  std::vector<std::string> lists_;
  std::vector<std::string> write_requests_;
  std::vector<std::string> commands_;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_FAKE_ROOT_FS_H_
