// Capture <-> wire and storage forms: chunks of node entries for the agent stream (large nodes split),
// an assembler that rebuilds a capture from chunks under size limits, and the compressed stored form
// the server keeps for re-accounting.
//
//   std::vector<v1::AgentMessage> stream = CaptureStreamMessages(capture, {id, at, sweep}, 256 * 1024);
//   std::vector<v1::CaptureChunk> chunks = ChunkCapture(capture, id, 256 * 1024);
//   CaptureAssembler a(limits);  a.Begin(begin); for (c : chunks) a.AddChunk(c);  a.Finish(end)
//   std::string blob = EncodeStoredCapture(capture, id, device, at);  // zstd(StoredCapture)
//
// Pure functions and a single-threaded assembler object.
#ifndef MEMFLEET_PROTO_CAPTURE_CODEC_H_
#define MEMFLEET_PROTO_CAPTURE_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "memfleet/v1/agent_service.pb.h"
#include "memfleet/v1/capture.pb.h"
#include "capture/capture.h"
#include "proto/capture_limits.h"

struct ZSTD_CDict_s;  // zstd.h's ZSTD_CDict, kept out of this header
struct ZSTD_CCtx_s;   // and its ZSTD_CCtx

namespace memfleet::wire {

inline constexpr char kStoredCodec[] = "zstd+proto";

// Splits a capture into chunks of at most about `max_chunk_bytes` of content each, nodes in path order.
// A node larger than the chunk size is split into several entries (`append` on the later ones).
std::vector<v1::CaptureChunk> ChunkCapture(const capture::Capture& capture, const std::string& capture_id,
                                           size_t max_chunk_bytes);

// Number of distinct node paths and content bytes, for CaptureBegin.
uint32_t NodeCount(const capture::Capture& capture);

// What names a capture on the agent stream besides its nodes.
struct CaptureStreamHead {
  std::string capture_id;
  std::string captured_at;
  std::string sweep_id;  // "" unless the capture answers a sweep
};

// The messages that carry `capture` on the agent stream, in order: its Begin (id, time, sweep, node count,
// content bytes), the chunks of ChunkCapture, and its End (chunk count, CaptureSha256). The one encoder
// of the agent, the tests' raw agent, the ingest benchmark and the loadtest.
std::vector<v1::AgentMessage> CaptureStreamMessages(const capture::Capture& capture, const CaptureStreamHead& head,
                                                    size_t max_chunk_bytes);

// Rebuilds a capture from Begin, in-order chunks and End. Errors: InvalidArgument (a chunk of another
// capture, out-of-order seq, an append without its first entry, a bad path or error value, a capture with
// no nodes), ResourceExhausted (a limit, AssemblyLimits in capture_limits.h), FailedPrecondition (chunk
// before Begin, End before all chunks), DataLoss (End's chunk count, or Begin's node count or content
// bytes, differ from what arrived; or the digest differs: IsDigestMismatch, capture_digest.h).
class CaptureAssembler {
 public:
  explicit CaptureAssembler(AssemblyLimits limits = {}) : limits_(limits) {}
  absl::Status Begin(const v1::CaptureBegin& begin);
  absl::Status AddChunk(const v1::CaptureChunk& chunk);
  absl::StatusOr<capture::Capture> Finish(const v1::CaptureEnd& end);
  const std::string& capture_id() const { return capture_id_; }
  bool active() const { return active_; }
  uint64_t content_bytes() const { return content_bytes_; }
  // What the capture assembled so far holds: contents, error names and paths (what max_capture_bytes limits).
  size_t held_bytes() const { return capture_.held_bytes(); }
  // After a successful Finish: the End carried no digest (an agent older than the field), so the capture
  // is unverified.
  bool digest_missing() const { return digest_missing_; }

 private:
  absl::Status CheckDigest(const std::string& announced);

  AssemblyLimits limits_;
  bool active_ = false;
  std::string capture_id_;
  uint32_t expected_nodes_ = 0;
  uint64_t expected_content_bytes_ = 0;
  bool digest_missing_ = false;
  uint32_t next_seq_ = 0;
  uint64_t content_bytes_ = 0;
  std::string last_path_;
  capture::Capture capture_;
};

// zstd-compressed StoredCapture, with zstd's content checksum so a flipped byte is caught on decode.
// The agent uses a low level (small compressor state on the phone); the server keeps level 9 for storage.
inline constexpr int kAgentCompressionLevel = 3;
inline constexpr int kStorageCompressionLevel = 9;
std::string EncodeStoredCapture(const capture::Capture& capture, const std::string& capture_id,
                                const std::string& device_id, const std::string& captured_at,
                                int compression_level = kStorageCompressionLevel);
// InvalidArgument for an unknown codec, DataLoss for a corrupt blob. A kDeltaCodec blob needs the
// decompressed keyframe it was encoded against (`keyframe`, from DecompressStoredCapture of that
// keyframe's blob): FailedPrecondition without it, DataLoss with the wrong one (the checksum differs).
absl::StatusOr<capture::Capture> DecodeStoredCapture(std::string_view codec, std::string_view blob,
                                                     std::string_view keyframe = {});

// ---- Delta storage (docs/performance.md, "Storage") ----
// Consecutive captures of one device are nearly the same text, so the server stores most of them as a
// zstd frame that references a recent whole capture of the device (the keyframe) as raw-content
// dictionary: a few hundred bytes instead of ~10% of the capture. Only a kStoredCodec blob can be a
// keyframe, so decoding a delta takes at most two decompressions.
inline constexpr char kDeltaCodec[] = "zstd-delta+proto";

// The serialized StoredCapture inside a kStoredCodec blob (what a delta references). DataLoss when corrupt,
// InvalidArgument for any other codec.
absl::StatusOr<std::string> DecompressStoredCapture(std::string_view codec, std::string_view blob);

// A keyframe prepared for encoding deltas against it: zstd's digested dictionary of its bytes, built once
// and shared by every delta of the keyframe. Immutable once made; safe to share across threads.
class DeltaKeyframe {
 public:
  // `keyframe`: DecompressStoredCapture of the keyframe's blob (copied). Internal when zstd cannot build it.
  static absl::StatusOr<std::unique_ptr<const DeltaKeyframe>> Create(std::string_view keyframe, int compression_level);
  ~DeltaKeyframe();
  DeltaKeyframe(const DeltaKeyframe&) = delete;
  DeltaKeyframe& operator=(const DeltaKeyframe&) = delete;

  // Bytes this object holds (zstd's copy of the keyframe and its tables), for a cache's budget.
  size_t memory_bytes() const;

 private:
  friend class StoredCaptureEncoder;
  DeltaKeyframe(ZSTD_CDict_s* cdict, size_t bytes) : cdict_(cdict), bytes_(bytes) {}
  ZSTD_CDict_s* cdict_;
  size_t bytes_;  // the keyframe's size
};

// The capture as a kDeltaCodec blob against `keyframe` (same StoredCapture content as
// EncodeStoredCapture, so DecodeStoredCapture with the keyframe gives the capture back). "" on failure.
std::string EncodeStoredCaptureDelta(const capture::Capture& capture, const std::string& capture_id,
                                     const std::string& device_id, const std::string& captured_at,
                                     const DeltaKeyframe& keyframe);

// The output and staging buffers an encoding writes in; kept by StoredCaptureEncoder with its context.
struct EncodeBuffers {
  std::string output;
  std::string staged;
};

// EncodeStoredCapture and EncodeStoredCaptureDelta for a caller that encodes capture after capture: one
// zstd context whose window buffer and tables stay allocated between captures. The server encodes every
// capture it receives, and a new context each time cost more than the compression (its megabytes of
// buffers are mapped, faulted in and unmapped per capture). What a large capture grew is let go after it:
// at most kKeptBytes stay between captures. The agent keeps the free functions: held between captures,
// the context would stay in its resident size. Not thread-safe: one per thread.
class StoredCaptureEncoder {
 public:
  // `keep_buffers` false: the output buffer becomes the blob, and no copy is made (for one capture).
  explicit StoredCaptureEncoder(bool keep_buffers = true);
  ~StoredCaptureEncoder();
  StoredCaptureEncoder(const StoredCaptureEncoder&) = delete;
  StoredCaptureEncoder& operator=(const StoredCaptureEncoder&) = delete;

  // A context and buffers over this, after a capture, are freed rather than kept for the next one: a
  // phone's capture of tens of MB grows a level-9 context to tens of MB, which a worker thread would hold.
  static constexpr size_t kKeptBytes = size_t{8} << 20;

  // The same bytes as the free functions above.
  std::string Encode(const capture::Capture& capture, const std::string& capture_id, const std::string& device_id,
                     const std::string& captured_at, int compression_level = kStorageCompressionLevel);
  std::string EncodeDelta(const capture::Capture& capture, const std::string& capture_id, const std::string& device_id,
                          const std::string& captured_at, const DeltaKeyframe& keyframe);

  // What it holds between captures: the context's size (its tables and window buffer) and the buffers'.
  size_t memory_bytes() const;

 private:
  // Frees the context and the buffers when they are kept and together hold over kKeptBytes.
  void LetGoOfLargeState();

  ZSTD_CCtx_s* cctx_;  // null when zstd could not allocate one: every Encode then gives ""
  bool keep_buffers_;
  EncodeBuffers buffers_;
};

}  // namespace memfleet::wire

#endif  // MEMFLEET_PROTO_CAPTURE_CODEC_H_
