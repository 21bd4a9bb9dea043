// The agent's per-capture and per-node byte caps on hostile trees of sparse files: the capture stays under
// --max-capture-mb whatever the tree holds, and every node the caps kept out is an error node that says
// why (ECAPTURE_FULL, EFBIG), so the report names it instead of the capture being refused or lost.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "agent/reader/rooted_dir.h"
#include "common/scoped_fd.h"
#include "gtest/gtest.h"
#include "proto/capture_codec.h"
#include "tests/support/sparse_tree.h"
#include "tests/support/temp_dir.h"

namespace memfleet::agent {
namespace {

using capture::Capture;
using capture::Node;

// Passes every call to a real capture tree and remembers the byte budget each node read was given.
class BudgetRecordingFs : public RootFs {
 public:
  explicit BudgetRecordingFs(RootFs& inner) : inner_(inner) {}
  NodeRead ReadAtMost(std::string_view path, size_t max_bytes) override {
    budgets_[std::string(path)] = max_bytes;
    return inner_.ReadAtMost(path, max_bytes);
  }
  NodeRead WriteThenRead(std::string_view path, std::string_view request, std::string_view arg) override {
    return inner_.WriteThenRead(path, request, arg);
  }
  DirList List(std::string_view path) override { return inner_.List(path); }
  bool IsDirectory(std::string_view path) override { return inner_.IsDirectory(path); }
  NodeRead RunCommand(std::string_view name, std::string_view arg) override { return inner_.RunCommand(name, arg); }
  const std::map<std::string, size_t>& budgets() const { return budgets_; }

 private:
  RootFs& inner_;
  std::map<std::string, size_t> budgets_;
};

// Where the read offset of a file ends after ReadFdToEnd with `max_bytes`: how much of it was read.
off_t BytesReadOf(const std::string& file, size_t size_hint, size_t max_bytes, NodeRead* result) {
  ScopedFd fd(open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return -1;
  *result = ReadFdToEnd(fd.get(), size_hint, max_bytes);
  return lseek(fd.get(), 0, SEEK_CUR);
}

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

// The agent holds no more of a node than it could keep: the read of a node bigger than what is left of the
// capture is given that remainder as its budget and stops there, and the node is recorded as capture-full
// as before.
TEST(CaptureCapsTest, ANodeOverTheRemainingCaptureIsReadOnlyUpToWhatRemains) {
  testing::TempDir dir("capture_caps");
  ASSERT_FALSE(dir.path().empty());
  ASSERT_TRUE(testing::WriteSparseSmapsTree(dir, {101, 102, 103, 104}, 20'000'000));
  CaptureTreeFs tree(dir.path());
  BudgetRecordingFs fs(tree);
  CollectOptions options;
  options.max_capture_bytes = uint64_t{64} << 20;  // 67,108,864: three smaps of 20,000,000 fit, not four
  absl::StatusOr<Capture> c = CollectCapture(fs, options);
  ASSERT_TRUE(c.ok()) << c.status();

  const Node* full = c->Find("proc/104/smaps");
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(full->content, kCaptureFullErrno);
  // Its budget was what the three smaps left of the cap (a little under 7,108,864 after the small nodes and
  // paths), not the node cap (64 MiB) nor the agent's 256 MiB.
  ASSERT_EQ(fs.budgets().count("proc/104/smaps"), 1u);
  const size_t budget = fs.budgets().at("proc/104/smaps");
  EXPECT_LT(budget, size_t{67'108'864 - 3 * 20'000'000});
  EXPECT_GT(budget, size_t{67'108'864 - 3 * 20'000'000 - 65536});
  // The first smaps was read with the whole capture ahead of it: the node cap bounds it.
  EXPECT_LE(fs.budgets().at("proc/101/smaps"), kDefaultMaxNodeBytes);
  EXPECT_GT(fs.budgets().at("proc/101/smaps"), size_t{60'000'000});
}

// The read itself stops one byte past the budget, whether the file says its size (a capture tree) or
// not (procfs and sysfs report 0): that byte is how it knows the node is bigger.
TEST(CaptureCapsTest, AReadStopsOneBytePastItsBudget) {
  testing::TempDir dir("capture_caps");
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.Write("big", std::string(1 << 20, 'x'));
  NodeRead r;
  EXPECT_EQ(BytesReadOf(file, size_t{1} << 20, 1000, &r), 1001);
  EXPECT_EQ(r.errno_name, "EFBIG");
  EXPECT_TRUE(r.content.empty());
  EXPECT_EQ(BytesReadOf(file, 0, 100'000, &r), 100'001);  // past several buffer doublings from 16 KiB
  EXPECT_EQ(r.errno_name, "EFBIG");
  // Exactly the budget is not over it.
  EXPECT_EQ(BytesReadOf(file, 0, size_t{1} << 20, &r), off_t{1} << 20);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.content.size(), size_t{1} << 20);
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
