// The label rules (docs/labels.md) as every boundary applies them, and the "labels" field of capture.json.
#include "capture/labels.h"

#include <string>
#include <vector>

#include "capture/capture_header.h"
#include "common/label_text.h"
#include "gtest/gtest.h"

namespace memfleet::capture {
namespace {

constexpr char kHeaderStart[] = R"({"format": 1, "device_id": "d", "captured_at": "2026-12-01T10:00:00Z")";

TEST(LabelsTest, GoodLabelsPass) {
  EXPECT_TRUE(CheckLabel("run", "1234").ok());
  EXPECT_TRUE(CheckLabel("test_plan2", "camera / night mode = on").ok());
  EXPECT_TRUE(CheckLabel(std::string(kMaxLabelKeyBytes, 'k'), std::string(kMaxLabelValueBytes, '~')).ok());
}

TEST(LabelsTest, KeysAreLowercaseIdentifiersOfAtMost32Bytes) {
  for (const std::string& key : {std::string(""), std::string("Run"), std::string("1run"), std::string("_run"),
                                 std::string("run-id"), std::string("run.id"), std::string("run id"),
                                 std::string(kMaxLabelKeyBytes + 1, 'k'), std::string("r\xc3\xa9")}) {
    absl::Status s = CheckLabel(key, "1");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_NE(s.message().find("label key"), std::string::npos) << s.message();
  }
}

TEST(LabelsTest, ValuesArePrintableAsciiOf1To128Bytes) {
  for (const std::string& value : {std::string(""), std::string(kMaxLabelValueBytes + 1, 'v'), std::string("a\nb"),
                                   std::string("a\tb"), std::string("\x1b[31m"), std::string("a\x7f"),
                                   std::string("\xe2\x80\xae"
                                               "evil"),
                                   std::string("a\0b", 3)}) {
    absl::Status s = CheckLabel("run", value);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << value;
    // The message never repeats a control byte it refused.
    for (char c : s.message()) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << s.message();
  }
}

TEST(LabelsTest, FlagsParseSplitAtTheFirstEquals) {
  absl::StatusOr<Labels> labels = ParseLabelFlags({"run=1234", "suite=camera", "expr=a=b"});
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(*labels, (Labels{{"run", "1234"}, {"suite", "camera"}, {"expr", "a=b"}}));
  EXPECT_EQ(LabelsText(*labels), "expr=a=b run=1234 suite=camera");
}

// A value with a space is printed quoted (common/label_text.h); the flag reads that text back to the
// same value, and a value typed without quotes is taken as written.
TEST(LabelsTest, AQuotedValueAsPrintedReadsBack) {
  const Labels labels = {{"note", "say \"hi\" \\o/"}, {"suite", "camera smoke"}};
  const std::string text = LabelsText(labels);
  EXPECT_EQ(text, "note=\"say \\\"hi\\\" \\\\o/\" suite=\"camera smoke\"");
  absl::StatusOr<Labels> back = ParseLabelFlags({"note=\"say \\\"hi\\\" \\\\o/\"", "suite=\"camera smoke\""});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, labels);
  absl::StatusOr<Labels> unquoted = ParseLabelFlags({"suite=camera smoke", "path=a\\b"});
  ASSERT_TRUE(unquoted.ok()) << unquoted.status();
  EXPECT_EQ(*unquoted, (Labels{{"suite", "camera smoke"}, {"path", "a\\b"}}));
  // A value that starts with a quote is quoted on output, so it too reads back as itself.
  const Labels literal = {{"note", "\"draft"}};
  EXPECT_EQ(LabelsText(literal), "note=\"\\\"draft\"");
  absl::StatusOr<Labels> literal_back = ParseLabelFlags({LabelsText(literal)});
  ASSERT_TRUE(literal_back.ok()) << literal_back.status();
  EXPECT_EQ(*literal_back, literal);
}

TEST(LabelsTest, AQuoteThatIsNotClosedOrBadlyEscapedIsRefused) {
  for (const char* text : {"suite=\"camera smoke", "suite=\"camera\" smoke", "suite=\"a\\b\"", "suite=\""}) {
    absl::Status s = ParseLabelFlags({text}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("quoted"), std::string::npos) << s.message();
  }
  // An empty quoted value is an empty value, which the rules refuse.
  EXPECT_EQ(ParseLabelFlags({"suite=\"\""}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LabelsTest, BadFlagsAreRefused) {
  EXPECT_EQ(ParseLabelFlags({"run"}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLabelFlags({"=1"}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLabelFlags({"run="}).status().code(), absl::StatusCode::kInvalidArgument);
  absl::Status twice = ParseLabelFlags({"run=1", "run=2"}).status();
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(twice.message().find("twice"), std::string::npos) << twice.message();
  std::vector<std::string> many;
  for (size_t i = 0; i <= kMaxLabels; ++i) many.push_back("k" + std::to_string(i) + "=v");
  EXPECT_EQ(ParseLabelFlags(many).status().code(), absl::StatusCode::kInvalidArgument);
  many.pop_back();
  EXPECT_TRUE(ParseLabelFlags(many).ok());
}

TEST(LabelsTest, HeaderLabelsAreRead) {
  absl::StatusOr<CaptureHeader> h =
      ParseCaptureHeader(std::string(kHeaderStart) + R"(, "labels": {"rack": "7", "run": "1234"}})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->labels, (Labels{{"rack", "7"}, {"run", "1234"}}));
  EXPECT_FALSE(h->labels_problem.has_value());
  EXPECT_EQ(h->facts.count("labels"), 0u);
}

// Bad labels do not fail the header (the engine still reads the capture): they are left out with a reason.
TEST(LabelsTest, BadHeaderLabelsAreLeftOutWithAReason) {
  std::string too_many = R"({)";
  for (size_t i = 0; i <= kMaxLabels; ++i)
    too_many += (i ? ", " : "") + std::string("\"k") + std::to_string(i) + "\": \"v\"";
  too_many += "}";
  for (const std::string& labels :
       {std::string(R"("run=1")"), std::string(R"(["run", "1"])"), std::string(R"({"run": 1234})"),
        std::string(R"({"Run": "1"})"), std::string(R"({"run": "a\u001bb"})"), too_many}) {
    absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(std::string(kHeaderStart) + ", \"labels\": " + labels + "}");
    ASSERT_TRUE(h.ok()) << labels << ": " << h.status();
    EXPECT_TRUE(h->labels.empty()) << labels;
    ASSERT_TRUE(h->labels_problem.has_value()) << labels;
    EXPECT_EQ(h->labels_problem->rfind("capture.json: \"labels\"", 0), 0u) << *h->labels_problem;
  }
}

}  // namespace
}  // namespace memfleet::capture
