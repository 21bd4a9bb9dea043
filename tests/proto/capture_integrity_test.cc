// What a capture may cost the server and whether it arrived as sent: paths bounded in depth and bytes,
// parent folders counted as nodes and bytes, error values held to errno names, Begin's counts checked
// exactly, and the SHA-256 of CaptureEnd verified (its bytes as docs/capture-format.md defines them).
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/capture_codec.h"
#include "proto/capture_digest.h"
#include "proto/capture_limits.h"

namespace memfleet::wire {
namespace {

using capture::Capture;

Capture SmallCapture() {
  Capture c;
  c.AddFile("capture.json", "{\"format\": 1}\n");
  c.AddFile("proc/meminfo", "MemTotal: 1 kB\n");  // and its folder "proc", a node of kind D
  c.AddError("proc/12/smaps", "EACCES");
  c.AddDirectory("sys/kernel/dmabuf/buffers");
  return c;
}

// The messages of `c` as the agent sends them (digest included), chunked small.
struct Messages {
  v1::CaptureBegin begin;
  std::vector<v1::CaptureChunk> chunks;
  v1::CaptureEnd end;
};
Messages MessagesFor(const Capture& c, const std::string& id = "cap-1") {
  Messages m;
  m.begin.set_capture_id(id);
  m.begin.set_node_count(NodeCount(c));
  m.begin.set_content_bytes(c.ContentBytes());
  m.chunks = ChunkCapture(c, id, 1024);
  m.end.set_capture_id(id);
  m.end.set_chunk_count(static_cast<uint32_t>(m.chunks.size()));
  m.end.set_capture_sha256(CaptureSha256(c));
  return m;
}

absl::StatusOr<Capture> Assemble(const Messages& m, AssemblyLimits limits = {}, CaptureAssembler* out = nullptr) {
  CaptureAssembler local(limits);
  CaptureAssembler& a = out != nullptr ? *out : local;
  if (absl::Status s = a.Begin(m.begin); !s.ok()) return s;
  for (const v1::CaptureChunk& c : m.chunks) {
    if (absl::Status s = a.AddChunk(c); !s.ok()) return s;
  }
  return a.Finish(m.end);
}

v1::CaptureChunk OneEntryChunk(const std::string& path, const std::string& content) {
  v1::CaptureChunk chunk;
  chunk.set_capture_id("cap-1");
  v1::NodeEntry* e = chunk.add_nodes();
  e->set_path(path);
  e->set_content(content);
  return chunk;
}

std::string PathOfDepth(int segments) {
  std::string p = "d";
  for (int i = 1; i < segments; ++i) p += "/d";
  return p;
}

// Known answers, computed independently (Python's hashlib over the documented byte stream: the domain
// string with its NUL, then per node its kind tag, the little-endian 64-bit length and bytes of its path
// and of its content): the digest is the same whatever SHA-256 implementation computes it.
TEST(CaptureDigestTest, KnownAnswers) {
  EXPECT_EQ(HexDigest(CaptureSha256(Capture())), "39b5608bcfa78f24ad3aa76d4c0cb4d7de537a880a228e8c51fb4dfa890d93bf");
  Capture c;
  c.AddFile("proc/meminfo", "MemTotal: 1 kB\n");  // and its folder "proc", a node of kind D
  EXPECT_EQ(HexDigest(CaptureSha256(c)), "98dadcec83ed50d383b85510237ccac88199c4dcb592c9e4bd85a1a0dbed8ba0");
}

TEST(CaptureIntegrityTest, AnHonestCaptureWithItsDigestIsVerified) {
  Capture c = SmallCapture();
  CaptureAssembler a;
  absl::StatusOr<Capture> got = Assemble(MessagesFor(c), {}, &a);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(a.digest_missing());
  EXPECT_EQ(got->size(), c.size());
}

TEST(CaptureIntegrityTest, NoDigestIsAcceptedAndMarkedUnverified) {
  Messages m = MessagesFor(SmallCapture());
  m.end.clear_capture_sha256();  // an agent older than the field
  CaptureAssembler a;
  absl::StatusOr<Capture> got = Assemble(m, {}, &a);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(a.digest_missing());
}

TEST(CaptureIntegrityTest, ChangedContentIsADigestMismatchWorthAResend) {
  Capture sent = SmallCapture();
  Messages m = MessagesFor(sent);
  // One byte changed on the way, lengths and counts all intact.
  std::string* content = m.chunks[0].mutable_nodes(0)->mutable_content();
  (*content)[0] = static_cast<char>((*content)[0] ^ 1);
  absl::StatusOr<Capture> got = Assemble(m);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << got.status();
  EXPECT_TRUE(IsDigestMismatch(got.status()));
}

TEST(CaptureIntegrityTest, ADigestOfTheWrongLengthIsInvalidArgument) {
  Messages m = MessagesFor(SmallCapture());
  m.end.set_capture_sha256("short");
  EXPECT_EQ(Assemble(m).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CaptureIntegrityTest, TheDigestCoversKindsPathsAndContents) {
  const std::string base = CaptureSha256(SmallCapture());
  ASSERT_EQ(base.size(), kCaptureSha256Bytes);
  EXPECT_EQ(CaptureSha256(SmallCapture()), base);
  Capture kind = SmallCapture();
  kind.AddFile("proc/12/smaps", "EACCES");  // same bytes, a file instead of an error
  Capture path = SmallCapture();
  path.AddFile("proc/meminfo2", "");
  Capture bytes = SmallCapture();
  bytes.AddFile("proc/meminfo", "MemTotal: 2 kB\n");
  // Length-prefixed fields: moving bytes from a path into its content changes the digest.
  Capture a, b;
  a.AddFile("ab", "c");
  b.AddFile("a", "bc");
  for (const Capture* other : {&kind, &path, &bytes}) EXPECT_NE(CaptureSha256(*other), base);
  EXPECT_NE(CaptureSha256(a), CaptureSha256(b));
  // Pinned: the example of docs/capture-format.md, whose Python lines give the same. The agent, the server
  // and any other implementation must agree on these exact bytes.
  Capture doc;
  doc.AddFile("proc/meminfo", "MemTotal: 1 kB\n");
  EXPECT_EQ(HexDigest(CaptureSha256(doc)), "98dadcec83ed50d383b85510237ccac88199c4dcb592c9e4bd85a1a0dbed8ba0");
}

TEST(CaptureIntegrityTest, ContentBytesOffByOneIsDataLoss) {
  for (int delta : {-1, +1}) {
    Messages m = MessagesFor(SmallCapture());
    m.begin.set_content_bytes(m.begin.content_bytes() + delta);
    absl::StatusOr<Capture> got = Assemble(m);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << delta << ": " << got.status();
    EXPECT_FALSE(IsDigestMismatch(got.status()));
  }
}

TEST(CaptureIntegrityTest, NodeCountNotExactIsDataLoss) {
  for (int delta : {-1, +1}) {
    Messages m = MessagesFor(SmallCapture());
    m.begin.set_node_count(m.begin.node_count() + delta);
    absl::StatusOr<Capture> got = Assemble(m);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << delta << ": " << got.status();
  }
}

TEST(CaptureIntegrityTest, PathDepthAndLengthAreBounded) {
  Capture deep_ok;
  deep_ok.AddFile(PathOfDepth(kMaxPathDepth), "x");
  EXPECT_TRUE(Assemble(MessagesFor(deep_ok)).ok());

  Capture too_deep;
  too_deep.AddFile(PathOfDepth(kMaxPathDepth + 1), "x");
  absl::StatusOr<Capture> got = Assemble(MessagesFor(too_deep));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
  EXPECT_NE(got.status().message().find("segments"), std::string_view::npos) << got.status();

  Capture too_long;
  too_long.AddFile(std::string(kMaxPathBytes + 1, 'a'), "x");
  EXPECT_EQ(Assemble(MessagesFor(too_long)).status().code(), absl::StatusCode::kInvalidArgument);
}

// Before: the node limit was checked before an entry's parent folders were added, so one entry of a
// deep path could add a folder node per segment past the limit.
TEST(CaptureIntegrityTest, ParentFoldersCountAgainstTheNodeLimit) {
  AssemblyLimits limits;
  limits.max_nodes = 10;
  CaptureAssembler a(limits);
  v1::CaptureBegin b;
  b.set_capture_id("cap-1");
  b.set_node_count(10);
  b.set_content_bytes(1);
  ASSERT_TRUE(a.Begin(b).ok());
  absl::Status s = a.AddChunk(OneEntryChunk(PathOfDepth(11), "x"));  // 10 folders + the file
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

TEST(CaptureIntegrityTest, ParentFolderPathsCountAgainstTheByteLimit) {
  AssemblyLimits limits;
  limits.max_capture_bytes = 64 * 1024;
  CaptureAssembler a(limits);
  v1::CaptureBegin b;
  b.set_capture_id("cap-1");
  b.set_content_bytes(1);
  b.set_node_count(kMaxPathDepth);
  ASSERT_TRUE(a.Begin(b).ok());
  // 32 segments of 127 bytes: a 4 KiB path whose 31 parent folders hold ~64 KiB of paths between them.
  std::string path(127, 's');
  for (uint32_t i = 1; i < kMaxPathDepth; ++i) path += "/" + std::string(127, 's');
  ASSERT_LE(path.size(), kMaxPathBytes);
  absl::Status s = a.AddChunk(OneEntryChunk(path, "x"));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

TEST(CaptureIntegrityTest, ErrorValuesMustBeErrnoNames) {
  for (const std::string& bad :
       {std::string(1 << 20, 'E'), std::string("EACCES\n"), std::string("eacces"), std::string("E")}) {
    Capture c;
    c.AddError("proc/1/smaps", bad);
    absl::StatusOr<Capture> got = Assemble(MessagesFor(c));
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << bad.size() << ": " << got.status();
  }
  Capture ok;
  ok.AddError("proc/1/smaps", "ERRNO_135");
  EXPECT_TRUE(Assemble(MessagesFor(ok)).ok());
}

TEST(CaptureIntegrityTest, HeldBytesCountPathsParentsAndErrorNames) {
  Capture c;
  c.AddFile("a/bb/c", "1234");  // "a" + "a/bb" + "a/bb/c" + 4
  EXPECT_EQ(c.held_bytes(), 1u + 4u + 6u + 4u);
  c.AddFile("a/bb/c", "12");  // replaced, not added
  EXPECT_EQ(c.held_bytes(), 1u + 4u + 6u + 2u);
  c.AddError("a/e", "EIO");
  EXPECT_EQ(c.held_bytes(), 13u + 3u + 3u);
  ASSERT_TRUE(c.AppendToFile("a/bb/c", "34"));
  EXPECT_EQ(c.held_bytes(), 21u);
  c.AddDirectory("a/bb");  // already there
  EXPECT_EQ(c.held_bytes(), 21u);
}

}  // namespace
}  // namespace memfleet::wire
