// ChunkCapture + CaptureAssembler (the agent stream) and EncodeStoredCapture / DecodeStoredCapture (the
// server's stored form): round trips that must be byte-exact, and every way a hostile or broken stream must
// be refused with the documented code.
#include "proto/capture_codec.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <zstd.h>

#include "capture/node_path.h"
#include "gtest/gtest.h"

namespace memfleet::wire {
namespace {

using capture::Capture;
using capture::Node;

constexpr size_t kChunkBytes = 256 * 1024;
constexpr size_t kBigNodeBytes = 3 * 1024 * 1024;

// All 256 byte values, NULs included, in a pattern that does not repeat at chunk boundaries.
std::string BigContent() {
  std::string s(kBigNodeBytes, '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return s;
}

Capture SampleCapture() {
  Capture c;
  c.AddFile("capture.json", "{\"format\": 1, \"device_id\": \"d1\", \"captured_at\": \"2026-12-02T16:15:00Z\"}\n");
  c.AddFile("proc/meminfo", "MemTotal:       16000000 kB\nMemFree:          100000 kB\n");
  c.AddFile("proc/123/smaps", BigContent());
  c.AddFile("proc/123/cmdline", std::string("/system/bin/app\0--flag\0", 23));
  c.AddFile("proc/123/oom_score_adj", "");  // an empty file is a fact, not an absence
  c.AddError("proc/456/smaps", "EACCES");
  c.AddDirectory("sys/kernel/dmabuf/buffers");
  c.AddFile("proc/dma_heap/rss_pid@123", "123 4096\n");
  return c;
}

void ExpectSameCapture(const Capture& want, const Capture& got) {
  ASSERT_EQ(want.size(), got.size());
  auto w = want.nodes().begin();
  auto g = got.nodes().begin();
  for (; w != want.nodes().end(); ++w, ++g) {
    ASSERT_EQ(w->first, g->first);
    EXPECT_EQ(w->second.kind, g->second.kind) << w->first;
    // Not EXPECT_EQ on 3 MB strings: a mismatch would print all of it.
    EXPECT_TRUE(w->second.content == g->second.content)
        << w->first << ": " << w->second.content.size() << " bytes sent, " << g->second.content.size() << " received";
  }
}

v1::CaptureBegin BeginFor(const Capture& c, const std::string& id) {
  v1::CaptureBegin b;
  b.set_capture_id(id);
  b.set_captured_at("2026-12-02T16:15:00Z");
  b.set_node_count(NodeCount(c));
  b.set_content_bytes(c.ContentBytes());
  return b;
}

v1::CaptureEnd EndFor(const std::string& id, size_t chunks) {
  v1::CaptureEnd e;
  e.set_capture_id(id);
  e.set_chunk_count(static_cast<uint32_t>(chunks));
  return e;
}

// Through the wire bytes, as the server gets them (an empty file's oneof must survive serialization).
v1::CaptureChunk Reparsed(const v1::CaptureChunk& chunk) {
  v1::CaptureChunk out;
  EXPECT_TRUE(out.ParseFromString(chunk.SerializeAsString()));
  return out;
}

v1::CaptureChunk ChunkOf(const std::string& id, uint32_t seq, std::vector<v1::NodeEntry> entries) {
  v1::CaptureChunk c;
  c.set_capture_id(id);
  c.set_seq(seq);
  for (auto& e : entries) *c.add_nodes() = std::move(e);
  return c;
}

v1::NodeEntry FileEntry(const std::string& path, const std::string& content, bool append = false) {
  v1::NodeEntry e;
  e.set_path(path);
  e.set_content(content);
  e.set_append(append);
  return e;
}

TEST(ChunkCaptureTest, RoundTripIsByteExactAndSplitsTheBigNode) {
  Capture capture = SampleCapture();
  std::vector<v1::CaptureChunk> chunks = ChunkCapture(capture, "cap-1", kChunkBytes);
  // 3 MiB of content alone needs at least 12 chunks of 256 KiB.
  ASSERT_GE(chunks.size(), kBigNodeBytes / kChunkBytes);

  size_t big_entries = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].capture_id(), "cap-1");
    EXPECT_EQ(chunks[i].seq(), i);
    size_t content = 0;
    for (const v1::NodeEntry& e : chunks[i].nodes()) {
      content += e.content().size();
      if (e.path() == "proc/123/smaps") {
        // Only the first piece is a new node; the rest continue it.
        EXPECT_EQ(e.append(), big_entries > 0);
        ++big_entries;
      } else {
        EXPECT_FALSE(e.append()) << e.path();
      }
    }
    EXPECT_LE(content, kChunkBytes) << "chunk " << i;
  }
  EXPECT_GE(big_entries, kBigNodeBytes / kChunkBytes);

  CaptureAssembler assembler;
  ASSERT_TRUE(assembler.Begin(BeginFor(capture, "cap-1")).ok());
  for (const v1::CaptureChunk& chunk : chunks) ASSERT_TRUE(assembler.AddChunk(Reparsed(chunk)).ok());
  absl::StatusOr<Capture> rebuilt = assembler.Finish(EndFor("cap-1", chunks.size()));
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  ExpectSameCapture(capture, *rebuilt);
  const Node* empty = rebuilt->Find("proc/123/oom_score_adj");
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->is_file());
  EXPECT_EQ(rebuilt->Find("proc/456/smaps")->content, "EACCES");
  EXPECT_TRUE(rebuilt->IsDirectory("sys/kernel/dmabuf/buffers"));
}

// The agent's encoding of one capture: Begin, the chunks, End; the assembler rebuilds it and the digest in
// the End verifies it, and a changed byte fails that check.
TEST(CaptureStreamMessagesTest, BeginChunksEndRebuildTheCaptureAndCarryItsDigest) {
  Capture capture = SampleCapture();
  std::vector<v1::AgentMessage> messages =
      CaptureStreamMessages(capture, {"cap-2", "2026-12-02T16:15:00.123Z", "sweep-7"}, kChunkBytes);
  ASSERT_GE(messages.size(), 2 + kBigNodeBytes / kChunkBytes);
  ASSERT_TRUE(messages.front().has_begin());
  const v1::CaptureBegin& begin = messages.front().begin();
  EXPECT_EQ(begin.capture_id(), "cap-2");
  EXPECT_EQ(begin.captured_at(), "2026-12-02T16:15:00.123Z");
  EXPECT_EQ(begin.sweep_id(), "sweep-7");
  EXPECT_EQ(begin.content_bytes(), capture.ContentBytes());
  ASSERT_TRUE(messages.back().has_end());
  EXPECT_EQ(messages.back().end().chunk_count(), messages.size() - 2);
  EXPECT_EQ(messages.back().end().capture_sha256().size(), 32u);

  CaptureAssembler assembler;
  ASSERT_TRUE(assembler.Begin(begin).ok());
  for (size_t i = 1; i + 1 < messages.size(); ++i) {
    ASSERT_TRUE(messages[i].has_chunk());
    ASSERT_TRUE(assembler.AddChunk(messages[i].chunk()).ok());
  }
  absl::StatusOr<Capture> rebuilt = assembler.Finish(messages.back().end());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_FALSE(assembler.digest_missing());
  ExpectSameCapture(capture, *rebuilt);

  // One byte changed on the way: the digest catches it.
  v1::CaptureChunk changed = messages[1].chunk();
  std::string* content = changed.mutable_nodes(0)->mutable_content();
  ASSERT_FALSE(content->empty());
  (*content)[0] ^= 1;
  CaptureAssembler second;
  ASSERT_TRUE(second.Begin(begin).ok());
  ASSERT_TRUE(second.AddChunk(changed).ok());
  for (size_t i = 2; i + 1 < messages.size(); ++i) ASSERT_TRUE(second.AddChunk(messages[i].chunk()).ok());
  EXPECT_EQ(second.Finish(messages.back().end()).status().code(), absl::StatusCode::kDataLoss);
}

// An empty capture chunks into one empty chunk, and the assembler refuses it: stored, it would become the
// device's latest report with every figure unknown.
TEST(ChunkCaptureTest, EmptyCaptureIsOneEmptyChunkAndRefused) {
  Capture empty;
  std::vector<v1::CaptureChunk> chunks = ChunkCapture(empty, "cap-0", kChunkBytes);
  ASSERT_EQ(chunks.size(), 1u);
  CaptureAssembler assembler;
  ASSERT_TRUE(assembler.Begin(BeginFor(empty, "cap-0")).ok());
  ASSERT_TRUE(assembler.AddChunk(chunks[0]).ok());
  absl::StatusOr<Capture> rebuilt = assembler.Finish(EndFor("cap-0", 1));
  EXPECT_EQ(rebuilt.status().code(), absl::StatusCode::kInvalidArgument) << rebuilt.status();
}

TEST(CaptureAssemblerTest, AssemblerIsReusableForTheNextCapture) {
  Capture first = SampleCapture();
  Capture second;
  second.AddFile("proc/meminfo", "MemTotal: 1 kB\n");
  CaptureAssembler assembler;
  for (const auto& [capture, id] : {std::pair<const Capture*, std::string>{&first, "a"}, {&second, "b"}}) {
    std::vector<v1::CaptureChunk> chunks = ChunkCapture(*capture, id, kChunkBytes);
    ASSERT_TRUE(assembler.Begin(BeginFor(*capture, id)).ok());
    for (const auto& c : chunks) ASSERT_TRUE(assembler.AddChunk(c).ok());
    absl::StatusOr<Capture> rebuilt = assembler.Finish(EndFor(id, chunks.size()));
    ASSERT_TRUE(rebuilt.ok());
    // Nothing of the first capture may leak into the second.
    ExpectSameCapture(*capture, *rebuilt);
  }
}

class AssemblerErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1::CaptureBegin b;
    b.set_capture_id("cap-1");
    b.set_node_count(3);
    b.set_content_bytes(100);
    ASSERT_TRUE(assembler_.Begin(b).ok());
  }
  CaptureAssembler assembler_;
};

TEST_F(AssemblerErrorTest, OutOfOrderSeqIsInvalidArgument) {
  absl::Status s = assembler_.AddChunk(ChunkOf("cap-1", 1, {FileEntry("proc/meminfo", "x")}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST_F(AssemblerErrorTest, RepeatedSeqIsInvalidArgument) {
  ASSERT_TRUE(assembler_.AddChunk(ChunkOf("cap-1", 0, {FileEntry("proc/meminfo", "x")})).ok());
  absl::Status s = assembler_.AddChunk(ChunkOf("cap-1", 0, {FileEntry("proc/vmstat", "y")}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST_F(AssemblerErrorTest, ChunkOfAnotherCaptureIsInvalidArgument) {
  absl::Status s = assembler_.AddChunk(ChunkOf("cap-2", 0, {FileEntry("proc/meminfo", "x")}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST_F(AssemblerErrorTest, AppendWithoutFirstPartIsInvalidArgument) {
  absl::Status s = assembler_.AddChunk(ChunkOf("cap-1", 0, {FileEntry("proc/meminfo", "x", /*append=*/true)}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST_F(AssemblerErrorTest, AppendToADifferentNodeIsInvalidArgument) {
  absl::Status s = assembler_.AddChunk(
      ChunkOf("cap-1", 0, {FileEntry("proc/meminfo", "x"), FileEntry("proc/vmstat", "y", /*append=*/true)}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST_F(AssemblerErrorTest, EntryWithoutValueIsInvalidArgument) {
  v1::NodeEntry e;
  e.set_path("proc/meminfo");
  absl::Status s = assembler_.AddChunk(ChunkOf("cap-1", 0, {e}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(CaptureAssemblerTest, UnsafePathsAreInvalidArgument) {
  for (const std::string& path : {std::string("../x"), std::string("/abs"), std::string("a//b"), std::string("a/./b"),
                                  std::string("a/.."), std::string("a/"), std::string(""), std::string("a\0b", 3)}) {
    CaptureAssembler assembler;
    v1::CaptureBegin b;
    b.set_capture_id("cap-1");
    b.set_content_bytes(1);
    ASSERT_TRUE(assembler.Begin(b).ok());
    absl::Status s = assembler.AddChunk(ChunkOf("cap-1", 0, {FileEntry(path, "x")}));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "path \"" << path << "\": " << s;
    EXPECT_FALSE(capture::IsSafeNodePath(path)) << path;
  }
}

TEST(CaptureAssemblerTest, ChunkOrEndBeforeBeginIsFailedPrecondition) {
  CaptureAssembler assembler;
  EXPECT_EQ(assembler.AddChunk(ChunkOf("cap-1", 0, {})).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(assembler.Finish(EndFor("cap-1", 0)).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CaptureAssemblerTest, EndWithWrongChunkCountIsDataLoss) {
  Capture capture = SampleCapture();
  std::vector<v1::CaptureChunk> chunks = ChunkCapture(capture, "cap-1", kChunkBytes);
  CaptureAssembler assembler;
  ASSERT_TRUE(assembler.Begin(BeginFor(capture, "cap-1")).ok());
  // The last chunk never arrived.
  for (size_t i = 0; i + 1 < chunks.size(); ++i) ASSERT_TRUE(assembler.AddChunk(chunks[i]).ok());
  EXPECT_EQ(assembler.Finish(EndFor("cap-1", chunks.size())).status().code(), absl::StatusCode::kDataLoss);
}

TEST(CaptureAssemblerTest, EndOfAnotherCaptureIsInvalidArgument) {
  CaptureAssembler assembler;
  v1::CaptureBegin b;
  b.set_capture_id("cap-1");
  ASSERT_TRUE(assembler.Begin(b).ok());
  EXPECT_EQ(assembler.Finish(EndFor("cap-2", 0)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CaptureAssemblerTest, BeginOverTheLimitsIsResourceExhausted) {
  AssemblyLimits limits;
  limits.max_capture_bytes = 1000;
  limits.max_nodes = 10;
  CaptureAssembler assembler(limits);
  v1::CaptureBegin b;
  b.set_capture_id("cap-1");
  b.set_content_bytes(1001);
  EXPECT_EQ(assembler.Begin(b).code(), absl::StatusCode::kResourceExhausted);
  b.set_content_bytes(10);
  b.set_node_count(11);
  EXPECT_EQ(assembler.Begin(b).code(), absl::StatusCode::kResourceExhausted);
  b.set_capture_id("");
  b.set_node_count(1);
  EXPECT_EQ(assembler.Begin(b).code(), absl::StatusCode::kInvalidArgument);
}

// A Begin that understates the capture must not get the assembler past it: the first byte beyond what it
// announced ends the capture.
TEST(CaptureAssemblerTest, ContentBeyondTheAnnouncedBytesIsDataLoss) {
  AssemblyLimits limits;
  limits.max_capture_bytes = 1000;
  CaptureAssembler assembler(limits);
  v1::CaptureBegin b;
  b.set_capture_id("cap-1");
  b.set_content_bytes(10);
  ASSERT_TRUE(assembler.Begin(b).ok());
  absl::Status s = assembler.AddChunk(ChunkOf("cap-1", 0, {FileEntry("a", std::string(11, 'x'))}));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

// Paths count against the capture limit too (content alone is within it).
TEST(CaptureAssemblerTest, ChunksOverTheCaptureLimitAreResourceExhausted) {
  AssemblyLimits limits;
  limits.max_capture_bytes = 1000;
  CaptureAssembler assembler(limits);
  v1::CaptureBegin b;
  b.set_capture_id("cap-1");
  b.set_content_bytes(1000);
  ASSERT_TRUE(assembler.Begin(b).ok());
  ASSERT_TRUE(assembler.AddChunk(ChunkOf("cap-1", 0, {FileEntry("a", std::string(600, 'x'))})).ok());
  absl::Status s = assembler.AddChunk(ChunkOf("cap-1", 1, {FileEntry("b", std::string(400, 'y'))}));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

TEST(CaptureAssemblerTest, NodeGrownByAppendsOverItsLimitIsResourceExhausted) {
  AssemblyLimits limits;
  limits.max_node_bytes = 1 << 20;
  Capture capture = SampleCapture();  // its smaps is 3 MiB
  std::vector<v1::CaptureChunk> chunks = ChunkCapture(capture, "cap-1", kChunkBytes);
  CaptureAssembler assembler(limits);
  ASSERT_TRUE(assembler.Begin(BeginFor(capture, "cap-1")).ok());
  absl::Status s;
  for (const auto& c : chunks) {
    s = assembler.AddChunk(c);
    if (!s.ok()) break;
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

TEST(CaptureAssemblerTest, OneNodeOverItsLimitIsResourceExhausted) {
  AssemblyLimits limits;
  limits.max_node_bytes = 100;
  CaptureAssembler assembler(limits);
  v1::CaptureBegin b;
  b.set_capture_id("cap-1");
  b.set_content_bytes(101);
  ASSERT_TRUE(assembler.Begin(b).ok());
  absl::Status s = assembler.AddChunk(ChunkOf("cap-1", 0, {FileEntry("a", std::string(101, 'x'))}));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

TEST(CaptureAssemblerTest, MoreNodesThanTheLimitIsResourceExhausted) {
  AssemblyLimits limits;
  limits.max_nodes = 3;
  CaptureAssembler assembler(limits);
  v1::CaptureBegin b;
  b.set_capture_id("cap-1");
  b.set_node_count(2);  // understated
  b.set_content_bytes(4);
  ASSERT_TRUE(assembler.Begin(b).ok());
  absl::Status s = assembler.AddChunk(
      ChunkOf("cap-1", 0, {FileEntry("a", "1"), FileEntry("b", "2"), FileEntry("c", "3"), FileEntry("d", "4")}));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

TEST(StoredCaptureTest, RoundTripIsByteExact) {
  Capture capture = SampleCapture();
  std::string blob = EncodeStoredCapture(capture, "cap-1", "d1", "2026-12-02T16:15:00Z");
  ASSERT_FALSE(blob.empty());
  // The 3 MiB node is a repeating pattern; zstd must make it much smaller than the raw capture.
  EXPECT_LT(blob.size(), capture.ContentBytes() / 2);
  absl::StatusOr<Capture> decoded = DecodeStoredCapture(kStoredCodec, blob);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSameCapture(capture, *decoded);
}

// The encoder streams fields into zstd (less memory, less copying) instead of building a StoredCapture
// message; its decompressed bytes must be exactly that message's serialization, so stored blobs stay one
// format.
TEST(StoredCaptureTest, StreamedBytesAreTheMessageSerialization) {
  Capture capture = SampleCapture();
  v1::StoredCapture want;
  want.set_capture_id("cap-1");
  want.set_device_id("d1");
  want.set_captured_at("2026-12-02T16:15:00Z");
  for (const auto& [path, node] : capture.nodes()) {
    v1::NodeEntry* e = want.add_nodes();
    e->set_path(path);
    if (node.is_file()) e->set_content(node.content);
    if (node.is_error()) e->set_errno_name(node.content);
    if (node.is_directory()) e->set_directory(true);
  }
  std::string blob = EncodeStoredCapture(capture, "cap-1", "d1", "2026-12-02T16:15:00Z");
  const unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
  ASSERT_EQ(size, want.ByteSizeLong());  // the frame states its size: the decoder relies on it
  std::string raw(size, '\0');
  ASSERT_EQ(ZSTD_decompress(raw.data(), raw.size(), blob.data(), blob.size()), size);
  EXPECT_TRUE(raw == want.SerializeAsString());
  // An empty device id is skipped, as proto3 does.
  std::string no_device = EncodeStoredCapture(Capture(), "cap-0", "", "t");
  v1::StoredCapture empty;
  empty.set_capture_id("cap-0");
  empty.set_captured_at("t");
  std::string raw_empty(empty.ByteSizeLong(), '\0');
  ASSERT_EQ(ZSTD_decompress(raw_empty.data(), raw_empty.size(), no_device.data(), no_device.size()), raw_empty.size());
  EXPECT_EQ(raw_empty, empty.SerializeAsString());
}

TEST(StoredCaptureTest, EmptyCaptureRoundTrips) {
  std::string blob = EncodeStoredCapture(Capture(), "cap-0", "d1", "2026-12-02T16:15:00Z");
  absl::StatusOr<Capture> decoded = DecodeStoredCapture(kStoredCodec, blob);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->size(), 0u);
}

TEST(StoredCaptureTest, CorruptBlobIsDataLoss) {
  std::string blob = EncodeStoredCapture(SampleCapture(), "cap-1", "d1", "2026-12-02T16:15:00Z");
  std::string truncated = blob.substr(0, blob.size() / 2);
  EXPECT_EQ(DecodeStoredCapture(kStoredCodec, truncated).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeStoredCapture(kStoredCodec, "").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeStoredCapture(kStoredCodec, "not zstd at all").status().code(), absl::StatusCode::kDataLoss);
  // Uncompressed protobuf bytes are not the stored form either.
  v1::StoredCapture raw;
  raw.set_capture_id("cap-1");
  EXPECT_EQ(DecodeStoredCapture(kStoredCodec, raw.SerializeAsString()).status().code(), absl::StatusCode::kDataLoss);
}

TEST(StoredCaptureTest, UnsafePathInsideABlobIsDataLoss) {
  Capture evil;
  evil.AddFile("../etc/passwd", "x");  // Capture itself does not police paths; the decoder must
  std::string blob = EncodeStoredCapture(evil, "cap-1", "d1", "2026-12-02T16:15:00Z");
  EXPECT_EQ(DecodeStoredCapture(kStoredCodec, blob).status().code(), absl::StatusCode::kDataLoss);
}

TEST(StoredCaptureTest, UnknownCodecIsInvalidArgument) {
  std::string blob = EncodeStoredCapture(SampleCapture(), "cap-1", "d1", "2026-12-02T16:15:00Z");
  EXPECT_EQ(DecodeStoredCapture("gzip+proto", blob).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeStoredCapture("", blob).status().code(), absl::StatusCode::kInvalidArgument);
}

// ---- delta storage ----

// Incompressible bytes (an LCG's high bits), so that only the keyframe can make them small.
std::string NoiseContent(size_t n) {
  std::string s(n, '\0');
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (char& ch : s) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    ch = static_cast<char>(x >> 56);
  }
  return s;
}

// A device whose biggest node does not compress on its own, `later`: a little later.
Capture NoisyCapture(bool later, size_t noise_bytes = 1 << 20) {
  Capture c = SampleCapture();
  std::string noise = NoiseContent(noise_bytes);
  if (later) {
    c.AddFile("proc/meminfo", "MemTotal:       16000000 kB\nMemFree:           99876 kB\n");
    noise[noise.size() / 2] ^= 0x5a;
  }
  c.AddFile("proc/123/smaps", noise);
  return c;
}

std::unique_ptr<const DeltaKeyframe> KeyframeOf(const std::string& whole_blob) {
  absl::StatusOr<std::string> bytes = DecompressStoredCapture(kStoredCodec, whole_blob);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<std::unique_ptr<const DeltaKeyframe>> k = DeltaKeyframe::Create(bytes.ok() ? *bytes : "", 3);
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? std::move(*k) : nullptr;
}

// `delta`, decoded against the keyframe whose whole blob is `keyframe_blob`, is `want` exactly.
void ExpectDeltaDecodesTo(const std::string& delta, const std::string& keyframe_blob, const Capture& want) {
  absl::StatusOr<std::string> keyframe_bytes = DecompressStoredCapture(kStoredCodec, keyframe_blob);
  ASSERT_TRUE(keyframe_bytes.ok()) << keyframe_bytes.status();
  absl::StatusOr<Capture> decoded = DecodeStoredCapture(kDeltaCodec, delta, *keyframe_bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSameCapture(want, *decoded);
}

TEST(StoredCaptureDeltaTest, RoundTripIsByteExactAndAFractionOfTheWholeBlob) {
  const std::string whole = EncodeStoredCapture(NoisyCapture(false), "cap-1", "d1", "2026-12-02T16:15:00Z", 3);
  std::unique_ptr<const DeltaKeyframe> keyframe = KeyframeOf(whole);
  ASSERT_NE(keyframe, nullptr);
  const Capture later = NoisyCapture(true);
  const std::string delta = EncodeStoredCaptureDelta(later, "cap-2", "d1", "2026-12-02T16:25:00Z", *keyframe);
  ASSERT_FALSE(delta.empty());
  const std::string later_whole = EncodeStoredCapture(later, "cap-2", "d1", "2026-12-02T16:25:00Z", 3);
  // Two changes in 1 MiB that zstd alone cannot shrink: the delta is a few hundred bytes; the whole blob
  // stays about 1 MiB. The keyframe's start is 1 MiB back from the delta's end: the window must cover it.
  EXPECT_GT(later_whole.size(), size_t{1} << 19);
  EXPECT_LT(delta.size() * 100, later_whole.size()) << delta.size() << " vs " << later_whole.size();
  ExpectDeltaDecodesTo(delta, whole, later);
  // The delta holds the same StoredCapture as the whole blob of the same capture.
  absl::StatusOr<Capture> from_whole = DecodeStoredCapture(kStoredCodec, later_whole);
  ASSERT_TRUE(from_whole.ok());
  ExpectSameCapture(*from_whole, later);
}

// A phone's capture with full smaps of its GPU processes runs to tens of MB, beyond zstd level 3's
// 2 MiB window and 2^17-slot tables, with which this delta came out at 91% of the whole blob: the window
// must reach back to the keyframe's start and the tables must index all of it. Incompressible noise is the
// hard case (every position wants its own slot; the tables give one per 16 bytes), where text does far
// better; what matters is that it is a delta the ingestor keeps (at most half the whole blob).
TEST(StoredCaptureDeltaTest, AKeyframeLargerThanTheDefaultWindowStillServes) {
  constexpr size_t kNoise = 24u << 20;
  const std::string whole = EncodeStoredCapture(NoisyCapture(false, kNoise), "cap-1", "d1", "2026-12-02T16:15:00Z", 3);
  std::unique_ptr<const DeltaKeyframe> keyframe = KeyframeOf(whole);
  ASSERT_NE(keyframe, nullptr);
  const Capture later = NoisyCapture(true, kNoise);
  const std::string delta = EncodeStoredCaptureDelta(later, "cap-2", "d1", "2026-12-02T16:25:00Z", *keyframe);
  EXPECT_LT(delta.size() * 2, whole.size()) << delta.size() << " vs " << whole.size();
  ExpectDeltaDecodesTo(delta, whole, later);
}

// The server encodes capture after capture with one StoredCaptureEncoder a thread. Whatever it encoded
// before (a delta against another keyframe, another level, a larger capture), each blob is the one a new
// context gives: nothing of the last capture's dictionary, level or window carries over.
TEST(StoredCaptureDeltaTest, AnEncoderUsedForCaptureAfterCaptureGivesTheBytesOfANewContext) {
  const Capture first = NoisyCapture(false);
  const Capture second = NoisyCapture(true);
  const Capture small = SampleCapture();
  const std::string whole_first = EncodeStoredCapture(first, "cap-1", "d1", "2026-12-02T16:15:00Z", 3);
  const std::string whole_small = EncodeStoredCapture(small, "cap-7", "d2", "2026-12-02T16:20:00Z", 3);
  std::unique_ptr<const DeltaKeyframe> keyframe_first = KeyframeOf(whole_first);
  std::unique_ptr<const DeltaKeyframe> keyframe_small = KeyframeOf(whole_small);
  ASSERT_NE(keyframe_first, nullptr);
  ASSERT_NE(keyframe_small, nullptr);

  StoredCaptureEncoder encoder;
  const std::string delta = encoder.EncodeDelta(second, "cap-2", "d1", "2026-12-02T16:25:00Z", *keyframe_first);
  EXPECT_EQ(delta, EncodeStoredCaptureDelta(second, "cap-2", "d1", "2026-12-02T16:25:00Z", *keyframe_first));
  ExpectDeltaDecodesTo(delta, whole_first, second);
  // A whole blob right after a delta: it must not reference the keyframe, so it decodes alone.
  const std::string whole9 = encoder.Encode(second, "cap-2", "d1", "2026-12-02T16:25:00Z");
  EXPECT_EQ(whole9, EncodeStoredCapture(second, "cap-2", "d1", "2026-12-02T16:25:00Z"));
  absl::StatusOr<Capture> decoded = DecodeStoredCapture(kStoredCodec, whole9);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSameCapture(second, *decoded);
  // Level 9 then level 3: the level given, not the last one.
  const std::string whole3 = encoder.Encode(first, "cap-1", "d1", "2026-12-02T16:15:00Z", 3);
  EXPECT_EQ(whole3, whole_first);
  EXPECT_NE(whole3.size(), encoder.Encode(first, "cap-1", "d1", "2026-12-02T16:15:00Z").size());
  // A small capture against another device's keyframe, after the 1 MiB ones.
  const std::string small_delta = encoder.EncodeDelta(small, "cap-8", "d2", "2026-12-02T16:30:00Z", *keyframe_small);
  EXPECT_EQ(small_delta, EncodeStoredCaptureDelta(small, "cap-8", "d2", "2026-12-02T16:30:00Z", *keyframe_small));
  ExpectDeltaDecodesTo(small_delta, whole_small, small);
  // Kept for the next capture: what a capture of this size needs, under the bound.
  EXPECT_GT(encoder.memory_bytes(), size_t{1} << 16);
  EXPECT_LE(encoder.memory_bytes(), StoredCaptureEncoder::kKeptBytes);
}

// A capture larger than what the encoder keeps between captures (12 MiB that do not compress, so the
// output alone is over the bound) is encoded as any other, and what it grew is freed after it: a worker
// thread does not hold a phone's largest capture's buffers until its next one.
TEST(StoredCaptureDeltaTest, AnEncoderLetsGoOfWhatALargeCaptureGrew) {
  const Capture large = NoisyCapture(false, size_t{12} << 20);
  StoredCaptureEncoder encoder;
  const std::string blob = encoder.Encode(large, "cap-1", "d1", "2026-12-02T16:15:00Z", 3);
  EXPECT_GT(blob.size(), size_t{12} << 20);
  EXPECT_EQ(blob, EncodeStoredCapture(large, "cap-1", "d1", "2026-12-02T16:15:00Z", 3));
  EXPECT_LT(encoder.memory_bytes(), size_t{1} << 20);
  // And it still encodes after letting go.
  const std::string next = encoder.Encode(SampleCapture(), "cap-2", "d1", "2026-12-02T16:25:00Z");
  EXPECT_EQ(next, EncodeStoredCapture(SampleCapture(), "cap-2", "d1", "2026-12-02T16:25:00Z"));
}

TEST(StoredCaptureDeltaTest, ADeltaNeedsItsOwnKeyframe) {
  const std::string whole = EncodeStoredCapture(NoisyCapture(false), "cap-1", "d1", "2026-12-02T16:15:00Z", 3);
  std::unique_ptr<const DeltaKeyframe> keyframe = KeyframeOf(whole);
  ASSERT_NE(keyframe, nullptr);
  const std::string delta =
      EncodeStoredCaptureDelta(NoisyCapture(true), "cap-2", "d1", "2026-12-02T16:25:00Z", *keyframe);
  EXPECT_EQ(DecodeStoredCapture(kDeltaCodec, delta).status().code(), absl::StatusCode::kFailedPrecondition);
  // Another capture's bytes as keyframe: the content checksum catches the wrong reconstruction.
  absl::StatusOr<std::string> other = DecompressStoredCapture(
      kStoredCodec, EncodeStoredCapture(NoisyCapture(true), "cap-9", "d2", "2026-12-02T17:00:00Z"));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(DecodeStoredCapture(kDeltaCodec, delta, *other).status().code(), absl::StatusCode::kDataLoss);
  // A delta is not a whole capture, and a truncated one is corrupt.
  EXPECT_EQ(DecompressStoredCapture(kDeltaCodec, delta).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::string> keyframe_bytes = DecompressStoredCapture(kStoredCodec, whole);
  ASSERT_TRUE(keyframe_bytes.ok());
  EXPECT_EQ(DecodeStoredCapture(kDeltaCodec, delta.substr(0, delta.size() - 3), *keyframe_bytes).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DeltaKeyframe::Create("", 3).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::wire
