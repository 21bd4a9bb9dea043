#include "proto/capture_codec.h"

// For ZSTD_createCDict_advanced and ZSTD_getCParams (exported by Debian's libzstd 1.5.4): a keyframe's
// dictionary needs tables sized to the keyframe, which the stable API cannot ask for.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capture/node_path.h"
#include "proto/capture_digest.h"

namespace memfleet::wire {
namespace {

using capture::Capture;
using capture::Node;

constexpr uint64_t kMaxDecodedBytes = 1ull << 30;
// Largest window of a delta frame: a keyframe and a capture of up to 512 MiB together.
constexpr int kMaxDeltaWindowLog = 29;

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
  if (!capture::IsSafeNodePath(e.path())) {
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

std::vector<v1::AgentMessage> CaptureStreamMessages(const capture::Capture& capture, const CaptureStreamHead& head,
                                                    size_t max_chunk_bytes) {
  std::vector<v1::CaptureChunk> chunks = ChunkCapture(capture, head.capture_id, max_chunk_bytes);
  std::vector<v1::AgentMessage> out(chunks.size() + 2);
  v1::CaptureBegin* begin = out.front().mutable_begin();
  begin->set_capture_id(head.capture_id);
  begin->set_captured_at(head.captured_at);
  begin->set_sweep_id(head.sweep_id);
  begin->set_node_count(NodeCount(capture));
  begin->set_content_bytes(capture.ContentBytes());
  for (size_t i = 0; i < chunks.size(); ++i) out[i + 1].mutable_chunk()->Swap(&chunks[i]);
  v1::CaptureEnd* end = out.back().mutable_end();
  end->set_capture_id(head.capture_id);
  end->set_chunk_count(static_cast<uint32_t>(chunks.size()));
  end->set_capture_sha256(CaptureSha256(capture));
  return out;
}

absl::Status CaptureAssembler::Begin(const v1::CaptureBegin& begin) {
  if (begin.capture_id().empty()) return absl::InvalidArgumentError("capture without an id");
  if (begin.node_count() > limits_.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("capture of ", begin.node_count(), " nodes exceeds the limit of ", limits_.max_nodes));
  }
  if (begin.content_bytes() > limits_.max_capture_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("capture of ", begin.content_bytes(), " bytes exceeds the limit of ", limits_.max_capture_bytes));
  }
  *this = CaptureAssembler(limits_);
  active_ = true;
  capture_id_ = begin.capture_id();
  expected_nodes_ = begin.node_count();
  expected_content_bytes_ = begin.content_bytes();
  return absl::OkStatus();
}

absl::Status CaptureAssembler::AddChunk(const v1::CaptureChunk& chunk) {
  if (!active_) return absl::FailedPreconditionError("capture chunk before its begin");
  if (chunk.capture_id() != capture_id_) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk of capture ", chunk.capture_id(), " inside capture ", capture_id_));
  }
  if (chunk.seq() != next_seq_) {
    return absl::InvalidArgumentError(absl::StrCat("chunk ", chunk.seq(), " out of order (expected ", next_seq_, ")"));
  }
  ++next_seq_;
  for (const v1::NodeEntry& e : chunk.nodes()) {
    if (absl::Status s = CheckEntryShape(e); !s.ok()) return s;
    content_bytes_ += e.content().size();
    if (content_bytes_ > expected_content_bytes_) {
      return absl::DataLossError(absl::StrCat("capture ", capture_id_, " sent more content than the ",
                                              expected_content_bytes_, " bytes its begin announced"));
    }
    if (e.append()) {
      const Node* n = capture_.Find(e.path());
      if (n != nullptr && n->content.size() + e.content().size() > limits_.max_node_bytes) {
        return absl::ResourceExhaustedError(
            absl::StrCat("node ", e.path(), " exceeds ", limits_.max_node_bytes, " bytes"));
      }
    } else if (e.content().size() > limits_.max_node_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("node ", e.path(), " exceeds ", limits_.max_node_bytes, " bytes"));
    }
    absl::Status s = AddEntry(capture_, e, last_path_);
    if (!s.ok()) return s;
    // Checked after the entry is in: its parent folders are nodes and held bytes too.
    if (capture_.size() > limits_.max_nodes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("capture exceeds ", limits_.max_nodes, " nodes (parent folders included)"));
    }
    if (capture_.held_bytes() > limits_.max_capture_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("capture exceeds ", limits_.max_capture_bytes, " bytes (contents, paths and error names)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Capture> CaptureAssembler::Finish(const v1::CaptureEnd& end) {
  if (!active_) return absl::FailedPreconditionError("capture end before its begin");
  if (end.capture_id() != capture_id_) return absl::InvalidArgumentError("capture end of another capture");
  if (end.chunk_count() != next_seq_) {
    return absl::DataLossError(
        absl::StrCat("capture ", capture_id_, " ended after ", next_seq_, " chunks, expected ", end.chunk_count()));
  }
  if (capture_.size() != expected_nodes_) {
    return absl::DataLossError(absl::StrCat("capture ", capture_id_, " holds ", capture_.size(),
                                            " nodes, its begin announced ", expected_nodes_));
  }
  if (content_bytes_ != expected_content_bytes_) {
    return absl::DataLossError(absl::StrCat("capture ", capture_id_, " holds ", content_bytes_,
                                            " content bytes, its begin announced ", expected_content_bytes_));
  }
  // An empty capture would become the device's latest report with every figure unknown.
  if (capture_.size() == 0) return absl::InvalidArgumentError(absl::StrCat("capture ", capture_id_, " holds no nodes"));
  if (absl::Status s = CheckDigest(end.capture_sha256()); !s.ok()) return s;
  active_ = false;
  return std::move(capture_);
}

absl::Status CaptureAssembler::CheckDigest(const std::string& announced) {
  digest_missing_ = announced.empty();
  if (digest_missing_) return absl::OkStatus();
  if (announced.size() != kCaptureSha256Bytes) {
    return absl::InvalidArgumentError(absl::StrCat("capture ", capture_id_, ": capture_sha256 is ", announced.size(),
                                                   " bytes, not ", kCaptureSha256Bytes));
  }
  const std::string actual = CaptureSha256(capture_);
  if (actual.empty()) return absl::ResourceExhaustedError("cannot allocate a SHA-256 context");
  if (actual != announced) {
    return DigestMismatchError(absl::StrCat("capture ", capture_id_, " arrived with SHA-256 ", HexDigest(actual),
                                            ", the agent sent ", HexDigest(announced),
                                            " (changed on the way: resend it)"));
  }
  return absl::OkStatus();
}

namespace {

// The protobuf wire form of StoredCapture written field by field into a zstd stream: the
// capture is not copied into a message, then a serialized string, then a compress-bound buffer, which
// held the agent's peak RSS at several times the capture. The bytes are exactly what
// StoredCapture::SerializeAsString() gives (proto3: empty scalars skipped, a oneof member always written,
// fields in number order), so the stored form and its decoder are unchanged.
size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

size_t LengthDelimitedSize(size_t len) { return 1 + VarintSize(len) + len; }

size_t NodeEntrySize(const std::string& path, const capture::Node& node) {
  size_t n = path.empty() ? 0 : LengthDelimitedSize(path.size());
  if (node.is_directory()) return n + 2;
  return n + LengthDelimitedSize(node.content.size());
}

class ZstdProtoWriter {
 public:
  // `space` and `staged`: buffers to write in, kept by the caller between captures (their contents are
  // overwritten; their allocations are what is reused).
  ZstdProtoWriter(ZSTD_CCtx* cctx, std::string* space, std::string* staged)
      : cctx_(cctx), out_(space), staged_(*staged) {
    staged_.clear();
    staged_.reserve(kStageBytes);
  }

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      staged_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    staged_.push_back(static_cast<char>(v));
    MaybeFlush();
  }

  // Small bytes are staged; large ones go to zstd straight from the capture, without a copy.
  bool Bytes(std::string_view b) {
    if (b.size() < kStageBytes / 4) {
      staged_.append(b.data(), b.size());
      return MaybeFlush();
    }
    return Flush() && Compress(b, ZSTD_e_continue);
  }

  bool LengthDelimited(uint32_t field, std::string_view b) {
    Varint((uint64_t{field} << 3) | 2);
    Varint(b.size());
    return Bytes(b);
  }

  bool Finish() { return Flush() && Compress({}, ZSTD_e_end); }
  // The frame, once Finish succeeded: a copy of the space written, or (`take`) the space itself, resized.
  std::string Output(bool take) {
    if (!take) return std::string(out_->data(), used_);
    out_->resize(used_);
    return std::move(*out_);
  }
  bool ok() const { return ok_; }

 private:
  static constexpr size_t kStageBytes = 64 * 1024;

  bool MaybeFlush() { return staged_.size() < kStageBytes || Flush(); }

  bool Flush() {
    bool ok = Compress(staged_, ZSTD_e_continue);
    staged_.clear();
    return ok;
  }

  bool Compress(std::string_view in, ZSTD_EndDirective mode) {
    if (!ok_) return false;
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    for (;;) {
      if (out_->size() - used_ < ZSTD_CStreamOutSize())
        out_->resize(std::max(out_->size() * 2, used_ + ZSTD_CStreamOutSize()));
      ZSTD_outBuffer output{out_->data() + used_, out_->size() - used_, 0};
      const size_t remaining = ZSTD_compressStream2(cctx_, &output, &input, mode);
      used_ += output.pos;
      if (ZSTD_isError(remaining)) {
        ok_ = false;
        return false;
      }
      const bool done = mode == ZSTD_e_end ? remaining == 0 : input.pos == input.size;
      if (done) break;
    }
    return true;
  }

  ZSTD_CCtx* cctx_;
  std::string* out_;  // written up to used_; its size is the space zstd may write in
  std::string& staged_;
  size_t used_ = 0;
  bool ok_ = true;
};

// Writes the StoredCapture of `capture` through `cctx`, already set up with its level or dictionary.
// `keep_buffers`: the buffers serve the next capture too, so the frame is copied out of them.
std::string WriteStoredCapture(ZSTD_CCtx* cctx, EncodeBuffers& buffers, bool keep_buffers, const Capture& capture,
                               const std::string& capture_id, const std::string& device_id,
                               const std::string& captured_at) {
  size_t total = 0;
  for (const std::string* s : {&capture_id, &device_id, &captured_at}) {
    if (!s->empty()) total += LengthDelimitedSize(s->size());
  }
  for (const auto& [path, node] : capture.nodes()) total += LengthDelimitedSize(NodeEntrySize(path, node));

  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  // The decoder wants the frame to state its size.
  ZSTD_CCtx_setPledgedSrcSize(cctx, total);
  ZstdProtoWriter w(cctx, &buffers.output, &buffers.staged);
  uint32_t field = 1;
  for (const std::string* s : {&capture_id, &device_id, &captured_at}) {
    if (!s->empty()) w.LengthDelimited(field, *s);
    ++field;
  }
  for (const auto& [path, node] : capture.nodes()) {
    w.Varint((uint64_t{4} << 3) | 2);
    w.Varint(NodeEntrySize(path, node));
    if (!path.empty()) w.LengthDelimited(1, path);
    if (node.is_directory()) {
      w.Varint((uint64_t{4} << 3) | 0);
      w.Varint(1);
    } else {
      w.LengthDelimited(node.is_file() ? 2 : 3, node.content);
    }
  }
  if (!(w.Finish() && w.ok())) return std::string();
  return w.Output(/*take=*/!keep_buffers);
}

struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// The frame's declared size, checked against the decode limit.
absl::StatusOr<size_t> FrameSize(std::string_view blob) {
  unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > kMaxDecodedBytes) {
    return absl::DataLossError("stored capture: not a zstd frame of known size");
  }
  return static_cast<size_t>(size);
}

absl::StatusOr<Capture> ParseStored(const std::string& raw) {
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

// Delta frames carry the keyframe's dictionary id 0 (raw content); the frame header says nothing of
// which keyframe, so the store keeps that beside the blob (captures.raw_base).
absl::StatusOr<std::string> DecompressDelta(std::string_view blob, std::string_view keyframe) {
  absl::StatusOr<size_t> size = FrameSize(blob);
  if (!size.ok()) return size.status();
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  if (dctx == nullptr) return absl::ResourceExhaustedError("stored capture: cannot allocate a zstd decoder");
  // The encoder's window spans keyframe and capture (EncodeStoredCaptureDelta); decoding in one call
  // into a buffer of the frame's stated size needs no window buffer, so a large one costs nothing.
  ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, kMaxDeltaWindowLog);
  if (ZSTD_isError(ZSTD_DCtx_refPrefix(dctx.get(), keyframe.data(), keyframe.size()))) {
    return absl::InternalError("stored capture: zstd refused the keyframe");
  }
  std::string raw(*size, '\0');
  size_t n = ZSTD_decompressDCtx(dctx.get(), raw.data(), raw.size(), blob.data(), blob.size());
  if (ZSTD_isError(n) || n != *size) {
    return absl::DataLossError("stored capture: corrupt delta, or decoded against the wrong keyframe");
  }
  return raw;
}

}  // namespace

std::string EncodeStoredCapture(const Capture& capture, const std::string& capture_id, const std::string& device_id,
                                const std::string& captured_at, int compression_level) {
  return StoredCaptureEncoder(/*keep_buffers=*/false)
      .Encode(capture, capture_id, device_id, captured_at, compression_level);
}

absl::StatusOr<std::string> DecompressStoredCapture(std::string_view codec, std::string_view blob) {
  if (codec != kStoredCodec) {
    return absl::InvalidArgumentError(
        absl::StrCat("capture codec \"", std::string(codec), "\" is not a whole capture"));
  }
  absl::StatusOr<size_t> size = FrameSize(blob);
  if (!size.ok()) return size.status();
  std::string raw(*size, '\0');
  size_t n = ZSTD_decompress(raw.data(), raw.size(), blob.data(), blob.size());
  if (ZSTD_isError(n) || n != *size) return absl::DataLossError("stored capture: corrupt zstd data");
  return raw;
}

absl::StatusOr<Capture> DecodeStoredCapture(std::string_view codec, std::string_view blob, std::string_view keyframe) {
  if (codec == kStoredCodec) {
    absl::StatusOr<std::string> raw = DecompressStoredCapture(codec, blob);
    if (!raw.ok()) return raw.status();
    return ParseStored(*raw);
  }
  if (codec == kDeltaCodec) {
    if (keyframe.empty()) {
      return absl::FailedPreconditionError("stored capture: a delta cannot be decoded without its keyframe");
    }
    absl::StatusOr<std::string> raw = DecompressDelta(blob, keyframe);
    if (!raw.ok()) return raw.status();
    return ParseStored(*raw);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown capture codec \"", std::string(codec), "\""));
}

absl::StatusOr<std::unique_ptr<const DeltaKeyframe>> DeltaKeyframe::Create(std::string_view keyframe,
                                                                           int compression_level) {
  if (keyframe.empty()) return absl::InvalidArgumentError("an empty keyframe");
  // Level 3's tables hold 2^17 positions: over a keyframe of tens of MB only its last few hundred kB
  // would stay findable, and for a small keyframe they are mostly empty (the server holds one per
  // device). Sized to about one slot per 4 bytes of keyframe (2^12..2^24 slots: 16 KiB to 64 MiB per
  // table), all of the keyframe can be matched; deltas re-synchronize within bytes of a change.
  ZSTD_compressionParameters params = ZSTD_getCParams(compression_level, keyframe.size(), keyframe.size());
  unsigned table_log = 12;
  while (table_log < 24 && (size_t{1} << (table_log + 4)) < keyframe.size()) ++table_log;
  params.hashLog = table_log;
  params.chainLog = table_log;
  params.windowLog = std::max(params.windowLog, 21u);
  // A StoredCapture does not start with zstd's dictionary magic, but say raw content rather than rely on it.
  ZSTD_CDict* cdict = ZSTD_createCDict_advanced(keyframe.data(), keyframe.size(), ZSTD_dlm_byCopy, ZSTD_dct_rawContent,
                                                params, ZSTD_defaultCMem);
  if (cdict == nullptr) return absl::InternalError("zstd could not build a dictionary of the keyframe");
  return std::unique_ptr<const DeltaKeyframe>(new DeltaKeyframe(cdict, keyframe.size()));
}

DeltaKeyframe::~DeltaKeyframe() { ZSTD_freeCDict(cdict_); }

size_t DeltaKeyframe::memory_bytes() const { return ZSTD_sizeof_CDict(cdict_); }

std::string EncodeStoredCaptureDelta(const Capture& capture, const std::string& capture_id,
                                     const std::string& device_id, const std::string& captured_at,
                                     const DeltaKeyframe& keyframe) {
  return StoredCaptureEncoder(/*keep_buffers=*/false)
      .EncodeDelta(capture, capture_id, device_id, captured_at, keyframe);
}

StoredCaptureEncoder::StoredCaptureEncoder(bool keep_buffers) : cctx_(ZSTD_createCCtx()), keep_buffers_(keep_buffers) {}

StoredCaptureEncoder::~StoredCaptureEncoder() { ZSTD_freeCCtx(cctx_); }

std::string StoredCaptureEncoder::Encode(const Capture& capture, const std::string& capture_id,
                                         const std::string& device_id, const std::string& captured_at,
                                         int compression_level) {
  if (cctx_ == nullptr) return std::string();
  // Each capture starts from zstd's defaults: a level or a dictionary left from the last one must not apply.
  ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, compression_level);
  std::string blob = WriteStoredCapture(cctx_, buffers_, keep_buffers_, capture, capture_id, device_id, captured_at);
  LetGoOfLargeState();
  return blob;
}

std::string StoredCaptureEncoder::EncodeDelta(const Capture& capture, const std::string& capture_id,
                                              const std::string& device_id, const std::string& captured_at,
                                              const DeltaKeyframe& keyframe) {
  if (cctx_ == nullptr) return std::string();
  ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_and_parameters);
  if (ZSTD_isError(ZSTD_CCtx_refCDict(cctx_, keyframe.cdict_))) return std::string();
  // Matches into the keyframe are only allowed within the window, which level 3 keeps at 2 MiB: a
  // capture of tens of MB would find none. Size it to span keyframe and capture (a manually set
  // window sticks over the dictionary's parameters).
  const uint64_t span = uint64_t{keyframe.bytes_} + capture.ContentBytes() + capture.size() * 16;
  int window_log = 21;
  while (window_log < kMaxDeltaWindowLog && (uint64_t{1} << window_log) < span) ++window_log;
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, window_log);
  std::string blob = WriteStoredCapture(cctx_, buffers_, keep_buffers_, capture, capture_id, device_id, captured_at);
  LetGoOfLargeState();
  return blob;
}

size_t StoredCaptureEncoder::memory_bytes() const {
  return (cctx_ != nullptr ? ZSTD_sizeof_CCtx(cctx_) : 0) + buffers_.output.capacity() + buffers_.staged.capacity();
}

void StoredCaptureEncoder::LetGoOfLargeState() {
  if (!keep_buffers_ || memory_bytes() <= kKeptBytes) return;
  ZSTD_freeCCtx(cctx_);
  cctx_ = ZSTD_createCCtx();
  // Swapped, not assigned: a moved-in empty string keeps the target's allocation.
  std::string().swap(buffers_.output);
  std::string().swap(buffers_.staged);
}

}  // namespace memfleet::wire
