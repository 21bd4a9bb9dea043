// libFuzzer target: the capture decoders the server runs on untrusted bytes — DecodeStoredCapture (a
// stored blob, whole or a delta) and CaptureAssembler (the same bytes parsed as a CaptureChunk from an
// agent's stream). Input starting with 'D': a delta, framed as 'D', keyframe length (2 bytes, little
// endian), the keyframe, then the delta blob (seed: corpus/capture_decoder/stored_delta.bin).
// Neither may crash, leak past its limits or hit UB; errors are statuses.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proto/capture_codec.h"

namespace {

void Assemble(const memfleet::v1::CaptureChunk& chunk) {
  memfleet::wire::AssemblyLimits limits;
  limits.max_capture_bytes = 1 << 20;
  limits.max_nodes = 1000;
  limits.max_node_bytes = 256 << 10;
  memfleet::wire::CaptureAssembler assembler(limits);
  memfleet::v1::CaptureBegin begin;
  begin.set_capture_id(chunk.capture_id().empty() ? "fuzz" : chunk.capture_id());
  begin.set_node_count(static_cast<uint32_t>(chunk.nodes_size()));
  // Announced as sent, so that the entries get past the exact content check to the rest of the assembler.
  uint64_t content_bytes = 0;
  for (const memfleet::v1::NodeEntry& e : chunk.nodes()) content_bytes += e.content().size();
  begin.set_content_bytes(content_bytes);
  if (!assembler.Begin(begin).ok()) return;
  if (!assembler.AddChunk(chunk).ok()) return;
  memfleet::v1::CaptureEnd end;
  end.set_capture_id(begin.capture_id());
  end.set_chunk_count(1);
  (void)assembler.Finish(end);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)memfleet::wire::DecodeStoredCapture(memfleet::wire::kStoredCodec, bytes);
  if (size >= 3 && bytes[0] == 'D') {
    const size_t keyframe_size = std::min<size_t>(size - 3, data[1] | (size_t{data[2]} << 8));
    const std::string_view keyframe = bytes.substr(3, keyframe_size);
    (void)memfleet::wire::DecodeStoredCapture(memfleet::wire::kDeltaCodec, bytes.substr(3 + keyframe_size), keyframe);
  }

  memfleet::v1::CaptureChunk chunk;
  if (!chunk.ParseFromArray(data, static_cast<int>(size))) return 0;
  Assemble(chunk);  // as sent (a seq other than 0 must be refused)
  if (chunk.seq() != 0) {
    // Past the sequence check, so that the node entries themselves are exercised.
    chunk.set_seq(0);
    if (chunk.capture_id().empty()) chunk.set_capture_id("fuzz");
    Assemble(chunk);
  }
  return 0;
}
