// --where validation, and the other flag checks made before any request is sent (fleet metrics).
#include "cli/device_selector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands/fleet_command.h"

namespace memfleet::cli {
namespace {

TEST(ParseWhereTest, KnownKeysPassThrough) {
  absl::StatusOr<v1::DeviceSelector> s =
      ParseWhere({"model=Pixel 8 Pro", "platform=qcom", "soc=sm8450", "device_id=sim-qcom-505", "build=google/x:14/y"});
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->where_size(), 5);
  // Spaces inside a value are kept, the value quoted as the selector's text writes it (the server reads it back).
  EXPECT_EQ(s->where(0), "model=\"Pixel 8 Pro\"");
  EXPECT_EQ(s->where(4), "build=google/x:14/y");
  EXPECT_EQ(ParseWhere({}).value().where_size(), 0);
  EXPECT_EQ(ParseWhere({" model =x"}).value().where(0), "model=x");        // spaces around the key dropped
  EXPECT_EQ(ParseWhere({"model=a=b"}).value().where(0), "model=a=b");      // only the first '=' splits
  EXPECT_EQ(ParseWhere({"platform=q*"}).value().where(0), "platform=q*");  // a prefix is not checked as a name
}

TEST(ParseWhereTest, UsageErrorsNameTheTermAndTheFix) {
  struct Case {
    std::vector<std::string> terms;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{{{"qcom"}, "KEY=VALUE"},
                                         {{"vendor=qcom"}, "unknown key \"vendor\""},
                                         {{"model="}, "give a value"},
                                         {{"=x"}, "unknown key"},
                                         {{"platform=qualcomm"}, "qcom, mtk, xring, mali, generic"},
                                         {{"model=a", "model=b"}, "given twice"}}) {
    absl::StatusOr<v1::DeviceSelector> s = ParseWhere(c.terms);
    ASSERT_FALSE(s.ok()) << c.terms[0];
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(c.says), std::string::npos) << s.status().message();
  }
}

TEST(MakeFleetRequestTest, DefaultsAndProcessMetrics) {
  FleetArgs args;
  absl::StatusOr<v1::FleetRequest> r = MakeFleetRequest(args);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->metric(), "device.total_kb");
  EXPECT_EQ(r->group_by(), "model");
  args.metric = "process.gl_kb";
  args.process_name = "/system/bin/surfaceflinger";
  args.group_by = "platform";
  args.where = {"soc=sm8450"};
  r = MakeFleetRequest(args);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->process_name(), "/system/bin/surfaceflinger");
  EXPECT_EQ(r->selector().where(0), "soc=sm8450");
}

TEST(ParseWhereTest, LabelTermsAreCheckedAndMatchExactly) {
  absl::StatusOr<v1::DeviceSelector> s = ParseWhere({"label.run=12*", "model=Pixel*", "label.suite=camera"});
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->where_size(), 3);
  EXPECT_EQ(s->where(0), "label.run=12*");
  for (const char* bad : {"label.Run=1", "label.=1", "label.run=", "label.run=a\x1b", "labels=1"}) {
    EXPECT_EQ(ParseWhere({bad}).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseWhere({"label.run=1", "label.run=2"}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseWhereTest, AgentLabelTermsAreCheckedLikeLabelTermsAndKeptApartFromThem) {
  absl::StatusOr<v1::DeviceSelector> s = ParseWhere({"label.run=R1", "agentlabel.run=R0", "agentlabel.rack=7"});
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->where_size(), 3);
  EXPECT_EQ(s->where(1), "agentlabel.run=R0");
  for (const char* bad : {"agentlabel.Run=1", "agentlabel.=1", "agentlabel.run=", "agentlabel.run=a\x1b"}) {
    EXPECT_EQ(ParseWhere({bad}).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseWhere({"agentlabel.run=1", "agentlabel.run=2"}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AddLabelFlagsTest, FlagsBecomeLabelsOrAUsageError) {
  v1::SweepRequest request;
  ASSERT_TRUE(AddLabelFlags({"run=1234", "suite=camera"}, request.mutable_labels()).ok());
  ASSERT_EQ(request.labels_size(), 2);
  EXPECT_EQ(request.labels(0).key(), "run");
  EXPECT_EQ(request.labels(0).value(), "1234");
  absl::Status twice = AddLabelFlags({"run=1", "run=2"}, request.mutable_labels());
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(twice.message()).rfind("--label: ", 0), 0u) << twice.message();
  absl::Status agent = AddLabelFlags({"rack"}, request.mutable_labels(), "--agent-label");
  EXPECT_EQ(std::string(agent.message()).rfind("--agent-label: ", 0), 0u) << agent.message();
}

TEST(MakeFleetRequestTest, BadFlagsAreUsageErrors) {
  auto error = [](FleetArgs args) { return std::string(MakeFleetRequest(args).status().message()); };
  FleetArgs a;
  a.metric = "total_kb";
  EXPECT_NE(error(a).find("device.<figure>"), std::string::npos);
  a.metric = "device.";
  EXPECT_NE(error(a).find("device.<figure>"), std::string::npos);
  a.metric = "process.total_kb";
  EXPECT_NE(error(a).find("--process NAME"), std::string::npos);
  a.metric = "device.total_kb";
  a.process_name = "x";
  EXPECT_NE(error(a).find("did you mean --metric process.total_kb"), std::string::npos);
  FleetArgs g;
  g.group_by = "colour";
  EXPECT_NE(error(g).find("model, platform, soc or build"), std::string::npos);
  FleetArgs w;
  w.where = {"colour=red"};
  EXPECT_EQ(MakeFleetRequest(w).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::cli
