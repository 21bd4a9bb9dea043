#include "capture/capture.h"

#include <algorithm>
#include <utility>

namespace memfleet::capture {

void Capture::AddParents(std::string_view path) {
  size_t slash = path.rfind('/');
  while (slash != std::string_view::npos && slash > 0) {
    std::string_view parent = path.substr(0, slash);
    auto it = nodes_.find(parent);
    if (it != nodes_.end()) {
      // An already-recorded parent means all of its parents are recorded too.
      return;
    }
    nodes_.emplace(std::string(parent), Node{Node::Kind::kDirectory, {}});
    held_bytes_ += parent.size();
    slash = parent.rfind('/');
  }
}

void Capture::Put(std::string path, Node node) {
  AddParents(path);
  auto [it, inserted] = nodes_.try_emplace(std::move(path));
  if (inserted) {
    held_bytes_ += it->first.size();
  } else {
    held_bytes_ -= it->second.content.size();
  }
  held_bytes_ += node.content.size();
  it->second = std::move(node);
}

void Capture::AddFile(std::string path, std::string content) {
  Put(std::move(path), Node{Node::Kind::kFile, std::move(content)});
}

void Capture::AddDirectory(std::string path) {
  AddParents(path);
  auto [it, inserted] = nodes_.try_emplace(std::move(path), Node{Node::Kind::kDirectory, {}});
  if (inserted) held_bytes_ += it->first.size();
}

void Capture::AddError(std::string path, std::string errno_name) {
  Put(std::move(path), Node{Node::Kind::kError, std::move(errno_name)});
}

bool Capture::AppendToFile(std::string_view path, std::string_view data) {
  auto it = nodes_.find(path);
  if (it == nodes_.end() || !it->second.is_file()) return false;
  it->second.content.append(data.data(), data.size());
  held_bytes_ += data.size();
  return true;
}

const Node* Capture::Find(std::string_view path) const {
  auto it = nodes_.find(path);
  return it == nodes_.end() ? nullptr : &it->second;
}

const std::string* Capture::FileContent(std::string_view path) const {
  const Node* n = Find(path);
  return n != nullptr && n->is_file() ? &n->content : nullptr;
}

bool Capture::IsDirectory(std::string_view path) const {
  const Node* n = Find(path);
  return n != nullptr && n->is_directory();
}

std::vector<std::string> Capture::Children(std::string_view dir) const {
  std::vector<std::string> out;
  std::string prefix(dir);
  if (!prefix.empty()) prefix += '/';
  auto it = prefix.empty() ? nodes_.begin() : nodes_.lower_bound(prefix);
  while (it != nodes_.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
    std::string_view rest = std::string_view(it->first).substr(prefix.size());
    size_t slash = rest.find('/');
    std::string_view name = rest.substr(0, slash);
    if (!name.empty()) out.emplace_back(name);
    if (slash == std::string_view::npos) {
      ++it;
    } else {
      // Skip the whole subtree of this child: everything that starts with "<prefix><name>/".
      std::string next = prefix;
      next.append(name);
      next += static_cast<char>('/' + 1);
      it = nodes_.lower_bound(next);
    }
  }
  // Names like "1-x" sort between "1" and "1/..." in the map, so dedupe after sorting.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

size_t Capture::ContentBytes() const {
  size_t total = 0;
  for (const auto& [path, node] : nodes_) {
    if (node.is_file()) total += node.content.size();
  }
  return total;
}

}  // namespace memfleet::capture
