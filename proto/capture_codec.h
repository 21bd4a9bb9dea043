// Capture <-> wire and storage forms: chunks of node entries for the agent stream (large nodes split),
// an assembler that rebuilds a capture from chunks under size limits, and the compressed stored form
// the server keeps for re-accounting.
//
//   std::vector<v1::CaptureChunk> chunks = ChunkCapture(capture, id, 256 * 1024);
//   CaptureAssembler a(limits);  a.Begin(begin); for (c : chunks) a.AddChunk(c);  a.Finish(end)
//   std::string blob = EncodeStoredCapture(capture, id, device, at);  // zstd(StoredCapture)
//
// Pure functions and a single-threaded assembler object.
#ifndef MEMFLEET_PROTO_CAPTURE_CODEC_H_
#define MEMFLEET_PROTO_CAPTURE_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "memfleet/v1/agent_service.pb.h"
#include "memfleet/v1/capture.pb.h"
#include "server/accounting/capture.h"

namespace memfleet::wire {

inline constexpr char kStoredCodec[] = "zstd+proto";

// Splits a capture into chunks of at most about `max_chunk_bytes` of content each, nodes in path order.
// A node larger than the chunk size is split into several entries (`append` on the later ones).
std::vector<v1::CaptureChunk> ChunkCapture(const accounting::Capture& capture, const std::string& capture_id,
                                           size_t max_chunk_bytes);

// Number of distinct node paths and content bytes, for CaptureBegin.
uint32_t NodeCount(const accounting::Capture& capture);

struct AssemblyLimits {
  uint64_t max_capture_bytes = 256ull << 20;  // content bytes of one capture
  uint32_t max_nodes = 200000;
  uint64_t max_node_bytes = 64ull << 20;      // one node after its appends
};

// Rebuilds a capture from Begin, in-order chunks and End. Errors: InvalidArgument (a chunk of another
// capture, out-of-order seq, an append without its first entry, a bad path), ResourceExhausted (a limit),
// FailedPrecondition (chunk before Begin, End before all chunks), DataLoss (End's counts do not match).
class CaptureAssembler {
 public:
  explicit CaptureAssembler(AssemblyLimits limits = {}) : limits_(limits) {}
  absl::Status Begin(const v1::CaptureBegin& begin);
  absl::Status AddChunk(const v1::CaptureChunk& chunk);
  absl::StatusOr<accounting::Capture> Finish(const v1::CaptureEnd& end);
  const std::string& capture_id() const { return capture_id_; }
  bool active() const { return active_; }
  uint64_t content_bytes() const { return content_bytes_; }

 private:
  AssemblyLimits limits_;
  bool active_ = false;
  std::string capture_id_;
  uint32_t expected_nodes_ = 0;
  uint32_t next_seq_ = 0;
  uint64_t content_bytes_ = 0;
  std::string last_path_;
  accounting::Capture capture_;
};

// A node path as the wire may carry it: relative, '/'-separated, no "." / ".." / empty segments, no NUL,
// at most 4096 bytes.
bool IsSafeNodePath(std::string_view path);

// zstd-compressed StoredCapture, with zstd's content checksum so a flipped byte is caught on decode.
// The agent uses a low level (small compressor state on the phone); the server keeps level 9 for storage.
inline constexpr int kAgentCompressionLevel = 3;
inline constexpr int kStorageCompressionLevel = 9;
std::string EncodeStoredCapture(const accounting::Capture& capture, const std::string& capture_id,
                                const std::string& device_id, const std::string& captured_at,
                                int compression_level = kStorageCompressionLevel);
// InvalidArgument for an unknown codec, DataLoss for a corrupt blob.
absl::StatusOr<accounting::Capture> DecodeStoredCapture(std::string_view codec, std::string_view blob);

}  // namespace memfleet::wire

#endif  // MEMFLEET_PROTO_CAPTURE_CODEC_H_
