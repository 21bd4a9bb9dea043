// `memfleet trend` over a history retention has thinned (RenderTrend, cli/commands/trend_command.h): the
// JSON says from when the points are one an hour and one a day, the table says it in words, and a trend
// whose points are all younger than the marks says nothing of them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands/trend_command.h"
#include "nlohmann/json.hpp"

namespace memfleet::cli {
namespace {

using nlohmann::json;

v1::ProcessHistoryResponse History(const std::vector<std::string>& times) {
  v1::ProcessHistoryResponse history;
  for (const std::string& t : times) {
    v1::HistoryPoint* p = history.add_points();
    p->set_captured_at(t);
    p->set_pid(100);
    p->set_value_kb(1000);
    p->set_value_known(true);
  }
  history.set_hourly_before("2026-05-01T00:00:00.000Z");
  history.set_daily_before("2026-02-01T00:00:00.000Z");
  return history;
}

TrendArgs Args() {
  TrendArgs args;
  args.device_id = "phone-1";
  args.process_name = "system_server";
  return args;
}

TEST(TrendResolutionTest, AYearLongTrendSaysWhereItIsHourlyAndDaily) {
  const v1::ProcessHistoryResponse history =
      History({"2026-01-10T00:00:00.000Z", "2026-03-01T05:00:00.000Z", "2026-06-01T00:05:00.000Z"});
  json out = json::parse(RenderTrend(Args(), history, OutputFormat::kJson));
  EXPECT_EQ(out["thinned"]["hourly_before"], "2026-05-01T00:00:00.000Z");
  EXPECT_EQ(out["thinned"]["daily_before"], "2026-02-01T00:00:00.000Z");
  const std::string text = RenderTrend(Args(), history, OutputFormat::kTable);
  EXPECT_NE(text.find("resolution: one capture an hour before 2026-05-01T00:00:00.000Z, one a day before "
                      "2026-02-01T00:00:00.000Z"),
            std::string::npos)
      << text;
}

TEST(TrendResolutionTest, ATrendStartingAfterTheDailyMarkIsOnlyHourlyBeforeTheHourlyOne) {
  const v1::ProcessHistoryResponse history = History({"2026-03-01T05:00:00.000Z", "2026-06-01T00:05:00.000Z"});
  json out = json::parse(RenderTrend(Args(), history, OutputFormat::kJson));
  EXPECT_EQ(out["thinned"]["hourly_before"], "2026-05-01T00:00:00.000Z");
  EXPECT_TRUE(out["thinned"]["daily_before"].is_null());
  const std::string text = RenderTrend(Args(), history, OutputFormat::kTable);
  EXPECT_NE(text.find("one capture an hour before 2026-05-01T00:00:00.000Z (retention)"), std::string::npos) << text;
}

TEST(TrendResolutionTest, ATrendYoungerThanEveryMarkIsFullResolutionAndSaysNothing) {
  const v1::ProcessHistoryResponse history = History({"2026-06-01T00:05:00.000Z", "2026-06-01T00:10:00.000Z"});
  json out = json::parse(RenderTrend(Args(), history, OutputFormat::kJson));
  EXPECT_TRUE(out["thinned"].is_null());
  EXPECT_EQ(RenderTrend(Args(), history, OutputFormat::kTable).find("resolution"), std::string::npos);
}

}  // namespace
}  // namespace memfleet::cli
