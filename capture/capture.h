// Capture: one raw capture of a device, as the engine sees it — every node the agent read, by path.
//
// Paths are relative to the device root ("proc/meminfo", "proc/dma_heap/rss_pid@123",
// "cmd/native_heap@123"). A node is a file (its bytes, verbatim), a directory (listed, so "exists" is a
// fact), or an error (the errno name the agent got, "EACCES"; a capture tree stores it as `<path>.err`).
//
//   Capture c;
//   c.AddFile("proc/meminfo", text);
//   c.AddError("proc/22459/oom_score_adj", "EACCES");
//   for (const std::string& pid : c.Children("proc")) ...
//
// A Capture is a plain value: no I/O. Not thread-safe for concurrent mutation; const use is safe.
#ifndef MEMFLEET_CAPTURE_CAPTURE_H_
#define MEMFLEET_CAPTURE_CAPTURE_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memfleet::capture {

struct Node {
  enum class Kind { kFile, kDirectory, kError };
  Kind kind = Kind::kFile;
  // kFile: the node's bytes. kError: the errno name ("ENOENT", "EACCES", "EIO"). kDirectory: empty.
  std::string content;

  bool is_file() const { return kind == Kind::kFile; }
  bool is_directory() const { return kind == Kind::kDirectory; }
  bool is_error() const { return kind == Kind::kError; }
};

class Capture {
 public:
  // Adding a path also records each of its parent directories.
  void AddFile(std::string path, std::string content);
  void AddDirectory(std::string path);
  void AddError(std::string path, std::string errno_name);
  // Appends to an existing file node (a node that arrived in several pieces); false when `path` is not
  // a file node.
  bool AppendToFile(std::string_view path, std::string_view data);

  // nullptr when the capture has no such node.
  const Node* Find(std::string_view path) const;
  // The file's bytes, or nullptr when the node is absent, a directory or an error.
  const std::string* FileContent(std::string_view path) const;
  bool IsDirectory(std::string_view path) const;

  // Names of the immediate children of `dir` (files, directories and errors), sorted, deduplicated.
  // Children("") lists the root.
  std::vector<std::string> Children(std::string_view dir) const;

  const std::map<std::string, Node, std::less<>>& nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }
  // Sum of the sizes of all file contents.
  size_t ContentBytes() const;
  // Bytes the nodes hold: every path (parent folders included), file contents and error names. What a
  // capture's size limit counts, so that neither deep paths nor long error names escape it.
  size_t held_bytes() const { return held_bytes_; }

 private:
  void AddParents(std::string_view path);
  void Put(std::string path, Node node);
  std::map<std::string, Node, std::less<>> nodes_;
  size_t held_bytes_ = 0;
};

}  // namespace memfleet::capture

#endif  // MEMFLEET_CAPTURE_CAPTURE_H_
