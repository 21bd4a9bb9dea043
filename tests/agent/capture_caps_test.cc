// The agent's per-capture and per-node byte caps on hostile trees of sparse files: the capture stays under
// --max-capture-mb whatever the tree holds, and every node the caps kept out is an error node that says
// why (ECAPTURE_FULL, EFBIG), so the report names it instead of the capture being refused or lost.
#include <cstdint>
#include <string>
#include <vector>

#include "agent/capture_tree_fs.h"
#include "agent/collector.h"
#include "gtest/gtest.h"
#include "proto/capture_codec.h"
#include "tests/support/sparse_tree.h"
#include "tests/support/temp_dir.h"

namespace memfleet::agent {
namespace {

using capture::Capture;
using capture::Node;

TEST(CaptureCapsTest, NodesBeyondTheCaptureCapAreRecordedAsCaptureFull) {
  testing::TempDir dir("capture_caps");
  ASSERT_FALSE(dir.path().empty());
  // Six smaps of 20 MB under a 64 MiB cap: three fit (in pid order), three do not.
  ASSERT_TRUE(testing::WriteSparseSmapsTree(dir, {101, 102, 103, 104, 105, 106}, 20'000'000));
  CaptureTreeFs fs(dir.path());
  CollectOptions options;
  options.max_capture_bytes = uint64_t{64} << 20;
  absl::StatusOr<Capture> c = CollectCapture(fs, options);
  ASSERT_TRUE(c.ok()) << c.status();

  EXPECT_LE(c->held_bytes(), options.max_capture_bytes);
  for (int pid : {101, 102, 103}) {
    const Node* n = c->Find("proc/" + std::to_string(pid) + "/smaps");
    ASSERT_NE(n, nullptr) << pid;
    EXPECT_TRUE(n->is_file()) << pid;
    EXPECT_EQ(n->content.size(), 20'000'000u) << pid;
  }
  for (int pid : {104, 105, 106}) {
    const Node* n = c->Find("proc/" + std::to_string(pid) + "/smaps");
    ASSERT_NE(n, nullptr) << pid;
    EXPECT_TRUE(n->is_error()) << pid;
    EXPECT_EQ(n->content, kCaptureFullErrno) << pid;
  }
  // Small nodes after the full ones still fit and are kept.
  EXPECT_NE(c->FileContent("proc/106/oom_score_adj"), nullptr);
  EXPECT_NE(c->FileContent("proc/meminfo"), nullptr);
  EXPECT_NE(c->FileContent("capture.json"), nullptr);
}

TEST(CaptureCapsTest, ANodeOverTheNodeCapIsEfbigByDefault) {
  testing::TempDir dir("capture_caps");
  ASSERT_FALSE(dir.path().empty());
  // One byte over the default --max-node-mb (the server's default --max-node-mb): the server would refuse
  // the whole capture for it.
  ASSERT_TRUE(testing::WriteSparseSmapsTree(dir, {101}, (off_t{64} << 20) + 1));
  CaptureTreeFs fs(dir.path());
  absl::StatusOr<Capture> c = CollectCapture(fs, CollectOptions{});
  ASSERT_TRUE(c.ok()) << c.status();
  const Node* n = c->Find("proc/101/smaps");
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->is_error());
  EXPECT_EQ(n->content, "EFBIG");
  EXPECT_LT(c->held_bytes(), 1u << 20);
}

// What the caps let through, a server with the same limits takes (the defaults are the same on both
// sides), and the spooled form decodes.
TEST(CaptureCapsTest, ACappedCaptureAssemblesUnderTheSameServerLimits) {
  wire::AssemblyLimits server_defaults;
  EXPECT_EQ(server_defaults.max_capture_bytes, kDefaultMaxCaptureBytes);
  EXPECT_EQ(server_defaults.max_node_bytes, kDefaultMaxNodeBytes);

  testing::TempDir dir("capture_caps");
  ASSERT_FALSE(dir.path().empty());
  ASSERT_TRUE(testing::WriteSparseSmapsTree(dir, {101, 102, 103, 104, 105, 106}, 10'000'000));
  CaptureTreeFs fs(dir.path());
  CollectOptions options;
  options.max_capture_bytes = uint64_t{32} << 20;  // three of the six fit
  absl::StatusOr<Capture> c = CollectCapture(fs, options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_LE(c->held_bytes(), options.max_capture_bytes);
  EXPECT_EQ(c->Find("proc/106/smaps")->content, kCaptureFullErrno);

  std::string blob = wire::EncodeStoredCapture(*c, "sparse-1-x", "sparse-1", "2026-11-30T08:00:00Z");
  absl::StatusOr<Capture> spooled = wire::DecodeStoredCapture(wire::kStoredCodec, blob);
  ASSERT_TRUE(spooled.ok()) << spooled.status();

  wire::AssemblyLimits limits;
  limits.max_capture_bytes = options.max_capture_bytes;
  wire::CaptureAssembler assembler(limits);
  v1::CaptureBegin begin;
  begin.set_capture_id("sparse-1-x");
  begin.set_node_count(wire::NodeCount(*spooled));
  begin.set_content_bytes(spooled->ContentBytes());
  ASSERT_TRUE(assembler.Begin(begin).ok());
  std::vector<v1::CaptureChunk> chunks = wire::ChunkCapture(*spooled, "sparse-1-x", 4 << 20);
  for (const v1::CaptureChunk& chunk : chunks) ASSERT_TRUE(assembler.AddChunk(chunk).ok());
  v1::CaptureEnd end;
  end.set_capture_id("sparse-1-x");
  end.set_chunk_count(static_cast<uint32_t>(chunks.size()));
  absl::StatusOr<Capture> assembled = assembler.Finish(end);
  EXPECT_TRUE(assembled.ok()) << assembled.status();
}

}  // namespace
}  // namespace memfleet::agent
