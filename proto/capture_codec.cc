#include "proto/capture_codec.h"

#include <zstd.h>

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace memfleet::wire {
namespace {

using accounting::Capture;
using accounting::Node;

constexpr uint64_t kMaxDecodedBytes = 1ull << 30;

void AppendNode(v1::CaptureChunk& chunk, const std::string& path, const Node& node, std::string_view piece,
                bool append) {
  v1::NodeEntry* e = chunk.add_nodes();
  e->set_path(path);
  switch (node.kind) {
    case Node::Kind::kFile:
      e->set_content(piece.data(), piece.size());
      break;
    case Node::Kind::kError:
      e->set_errno_name(node.content);
      break;
    case Node::Kind::kDirectory:
      e->set_directory(true);
      break;
  }
  if (append) e->set_append(true);
}

absl::Status AddEntry(Capture& capture, const v1::NodeEntry& e, std::string& last_path) {
  if (!IsSafeNodePath(e.path())) {
    return absl::InvalidArgumentError(absl::StrCat("unsafe node path \"", e.path().substr(0, 80), "\""));
  }
  if (e.append()) {
    if (e.path() != last_path || e.value_case() != v1::NodeEntry::kContent) {
      return absl::InvalidArgumentError(absl::StrCat("append entry for ", e.path(), " without its first part"));
    }
    if (!capture.AppendToFile(e.path(), e.content())) {
      return absl::InvalidArgumentError("append to a non-file node");
    }
    return absl::OkStatus();
  }
  switch (e.value_case()) {
    case v1::NodeEntry::kContent:
      capture.AddFile(e.path(), e.content());
      break;
    case v1::NodeEntry::kErrnoName:
      capture.AddError(e.path(), e.errno_name());
      break;
    case v1::NodeEntry::kDirectory:
      capture.AddDirectory(e.path());
      break;
    case v1::NodeEntry::VALUE_NOT_SET:
      return absl::InvalidArgumentError(absl::StrCat("node ", e.path(), " has no value"));
  }
  last_path = e.path();
  return absl::OkStatus();
}

}  // namespace

bool IsSafeNodePath(std::string_view path) {
  if (path.empty() || path.size() > 4096 || path.front() == '/' || path.back() == '/') return false;
  if (path.find('\0') != std::string_view::npos) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view seg = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

uint32_t NodeCount(const Capture& capture) { return static_cast<uint32_t>(capture.size()); }

std::vector<v1::CaptureChunk> ChunkCapture(const Capture& capture, const std::string& capture_id,
                                           size_t max_chunk_bytes) {
  max_chunk_bytes = std::max<size_t>(max_chunk_bytes, 1024);
  std::vector<v1::CaptureChunk> chunks;
  v1::CaptureChunk current;
  size_t current_bytes = 0;
  auto flush = [&]() {
    current.set_capture_id(capture_id);
    current.set_seq(static_cast<uint32_t>(chunks.size()));
    chunks.push_back(std::move(current));
    current = v1::CaptureChunk();
    current_bytes = 0;
  };
  for (const auto& [path, node] : capture.nodes()) {
    std::string_view content = node.is_file() ? std::string_view(node.content) : std::string_view();
    size_t overhead = path.size() + 16;
    if (content.empty()) {
      if (current_bytes + overhead > max_chunk_bytes && current.nodes_size() > 0) flush();
      AppendNode(current, path, node, content, false);
      current_bytes += overhead;
      continue;
    }
    bool first = true;
    while (!content.empty()) {
      if (current_bytes + overhead >= max_chunk_bytes && current.nodes_size() > 0) flush();
      size_t room = max_chunk_bytes > current_bytes + overhead ? max_chunk_bytes - current_bytes - overhead : 1;
      std::string_view piece = content.substr(0, room);
      AppendNode(current, path, node, piece, !first);
      current_bytes += piece.size() + overhead;
      content.remove_prefix(piece.size());
      first = false;
    }
  }
  if (current.nodes_size() > 0 || chunks.empty()) flush();
  return chunks;
}

absl::Status CaptureAssembler::Begin(const v1::CaptureBegin& begin) {
  if (begin.capture_id().empty()) return absl::InvalidArgumentError("capture without an id");
  if (begin.node_count() > limits_.max_nodes) {
    return absl::ResourceExhaustedError(absl::StrCat("capture of ", begin.node_count(), " nodes exceeds the limit of ",
                                                     limits_.max_nodes));
  }
  if (begin.content_bytes() > limits_.max_capture_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("capture of ", begin.content_bytes(),
                                                     " bytes exceeds the limit of ", limits_.max_capture_bytes));
  }
  *this = CaptureAssembler(limits_);
  active_ = true;
  capture_id_ = begin.capture_id();
  expected_nodes_ = begin.node_count();
  return absl::OkStatus();
}

absl::Status CaptureAssembler::AddChunk(const v1::CaptureChunk& chunk) {
  if (!active_) return absl::FailedPreconditionError("capture chunk before its begin");
  if (chunk.capture_id() != capture_id_) {
    return absl::InvalidArgumentError(absl::StrCat("chunk of capture ", chunk.capture_id(), " inside capture ", capture_id_));
  }
  if (chunk.seq() != next_seq_) {
    return absl::InvalidArgumentError(absl::StrCat("chunk ", chunk.seq(), " out of order (expected ", next_seq_, ")"));
  }
  ++next_seq_;
  for (const v1::NodeEntry& e : chunk.nodes()) {
    content_bytes_ += e.content().size();
    if (content_bytes_ > limits_.max_capture_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat("capture exceeds ", limits_.max_capture_bytes, " bytes"));
    }
    if (capture_.size() >= limits_.max_nodes && !e.append()) {
      return absl::ResourceExhaustedError(absl::StrCat("capture exceeds ", limits_.max_nodes, " nodes"));
    }
    if (e.append()) {
      const Node* n = capture_.Find(e.path());
      if (n != nullptr && n->content.size() + e.content().size() > limits_.max_node_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat("node ", e.path(), " exceeds ", limits_.max_node_bytes, " bytes"));
      }
    } else if (e.content().size() > limits_.max_node_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat("node ", e.path(), " exceeds ", limits_.max_node_bytes, " bytes"));
    }
    absl::Status s = AddEntry(capture_, e, last_path_);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<Capture> CaptureAssembler::Finish(const v1::CaptureEnd& end) {
  if (!active_) return absl::FailedPreconditionError("capture end before its begin");
  if (end.capture_id() != capture_id_) return absl::InvalidArgumentError("capture end of another capture");
  if (end.chunk_count() != next_seq_) {
    return absl::DataLossError(absl::StrCat("capture ", capture_id_, " ended after ", next_seq_, " chunks, expected ",
                                            end.chunk_count()));
  }
  if (capture_.size() < expected_nodes_) {
    return absl::DataLossError(absl::StrCat("capture ", capture_id_, " holds ", capture_.size(), " nodes, its begin announced ",
                                            expected_nodes_));
  }
  active_ = false;
  return std::move(capture_);
}

std::string EncodeStoredCapture(const Capture& capture, const std::string& capture_id, const std::string& device_id,
                                const std::string& captured_at, int compression_level) {
  v1::StoredCapture stored;
  stored.set_capture_id(capture_id);
  stored.set_device_id(device_id);
  stored.set_captured_at(captured_at);
  for (const auto& [path, node] : capture.nodes()) {
    v1::NodeEntry* e = stored.add_nodes();
    e->set_path(path);
    if (node.is_file()) e->set_content(node.content);
    else if (node.is_error()) e->set_errno_name(node.content);
    else e->set_directory(true);
  }
  std::string raw = stored.SerializeAsString();
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (cctx == nullptr) return std::string();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, compression_level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  size_t n = ZSTD_compress2(cctx, out.data(), out.size(), raw.data(), raw.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) return std::string();
  out.resize(n);
  return out;
}

absl::StatusOr<Capture> DecodeStoredCapture(std::string_view codec, std::string_view blob) {
  if (codec != kStoredCodec) return absl::InvalidArgumentError(absl::StrCat("unknown capture codec \"", std::string(codec), "\""));
  unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > kMaxDecodedBytes) {
    return absl::DataLossError("stored capture: not a zstd frame of known size");
  }
  std::string raw(size, '\0');
  size_t n = ZSTD_decompress(raw.data(), raw.size(), blob.data(), blob.size());
  if (ZSTD_isError(n) || n != size) return absl::DataLossError("stored capture: corrupt zstd data");
  v1::StoredCapture stored;
  if (!stored.ParseFromString(raw)) return absl::DataLossError("stored capture: corrupt protobuf");
  Capture capture;
  std::string last;
  for (const v1::NodeEntry& e : stored.nodes()) {
    absl::Status s = AddEntry(capture, e, last);
    if (!s.ok()) return absl::DataLossError(absl::StrCat("stored capture: ", s.message()));
  }
  return capture;
}

}  // namespace memfleet::wire
