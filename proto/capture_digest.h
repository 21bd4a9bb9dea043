// The end-to-end check of a capture on the agent stream: a SHA-256 the agent computes over the capture it
// spooled and sends in CaptureEnd.capture_sha256, and the server recomputes over what it assembled. It
// covers every node's kind, path and bytes, so a node lost, added, reordered into another path or changed
// on the way is caught. The bytes hashed are defined in docs/capture-format.md ("Capture digest").
//
//   end->set_capture_sha256(CaptureSha256(capture));     // agent
//   if (CaptureSha256(assembled) != end.capture_sha256()) ...   // server
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_PROTO_CAPTURE_DIGEST_H_
#define MEMFLEET_PROTO_CAPTURE_DIGEST_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "capture/capture.h"

namespace memfleet::wire {

inline constexpr size_t kCaptureSha256Bytes = 32;

// The 32 raw bytes of the digest; "" only when OpenSSL cannot allocate a hash context.
std::string CaptureSha256(const capture::Capture& capture);

// The lowercase hex form, for messages.
std::string HexDigest(const std::string& digest);

// A DataLoss status for a digest mismatch, marked so that IsDigestMismatch tells it from the other count
// mismatches: those come from the sender and are refused for good, while this one may be the wire's and is
// worth a (bounded) resend.
absl::Status DigestMismatchError(const std::string& message);
bool IsDigestMismatch(const absl::Status& status);

}  // namespace memfleet::wire

#endif  // MEMFLEET_PROTO_CAPTURE_DIGEST_H_
