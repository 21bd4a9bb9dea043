// JsonTextWriter (report/json_text_writer.h) writes what nlohmann::json's compact dump writes for the same
// values, byte for byte: escapes, invalid UTF-8 replaced, separators and the integer extremes.
#include "report/json_text_writer.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace memfleet::report {
namespace {

using nlohmann::json;

std::string Dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

TEST(JsonTextWriterTest, StringsAreEscapedAndInvalidUtf8ReplacedAsTheLibraryDoes) {
  static constexpr char kWithNul[] = "nul\0and \x01 \x1f controls";
  const std::vector<std::string> texts = {
      "",
      "surfaceflinger",
      "/system/bin/surfaceflinger",
      "a \"quoted\" back\\slash",
      std::string(kWithNul, sizeof(kWithNul) - 1),
      "line\nbreak\ttab\rreturn\bback\fform",
      "del \x7f kept",
      "UTF-8: \xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80",
      "invalid: \xff\xfe then text",
      "cut short: \xe6\xbc",
      "overlong: \xc0\xaf",
  };
  for (const std::string& text : texts) {
    std::string out;
    JsonTextWriter w(out);
    w.String(text);
    EXPECT_EQ(out, Dump(json(text))) << "text of " << text.size() << " bytes";
  }
}

TEST(JsonTextWriterTest, NestedObjectsAndArraysAreSeparatedAsTheLibraryDumpsThem) {
  std::string out;
  JsonTextWriter w(out);
  w.BeginObject();
  w.Key("a");
  w.BeginArray();
  w.Int(1);
  w.BeginObject();
  w.EndObject();
  w.BeginArray();
  w.EndArray();
  w.String("x");
  w.Null();
  w.EndArray();
  w.Key("b");
  w.BeginObject();
  w.Key("min");
  w.Int(std::numeric_limits<int64_t>::min());
  w.Key("max");
  w.UInt(std::numeric_limits<uint64_t>::max());
  w.Key("t");
  w.Bool(true);
  w.Key("f");
  w.Bool(false);
  w.Key("none");
  w.OptionalInt(std::nullopt);
  w.Key("some");
  w.OptionalInt(-1000);
  w.EndObject();
  w.Key("c");
  w.BeginObject();
  w.EndObject();
  w.EndObject();
  json expected = json::object();
  expected["a"] = json::array({1, json::object(), json::array(), "x", nullptr});
  json b = json::object();
  b["min"] = std::numeric_limits<int64_t>::min();
  b["max"] = std::numeric_limits<uint64_t>::max();
  b["t"] = true;
  b["f"] = false;
  b["none"] = nullptr;
  b["some"] = -1000;
  // nlohmann sorts an object's keys; the writer keeps the caller's order, which here is not sorted in "b".
  std::string expected_text = R"({"a":[1,{},[],"x",null],"b":{"min":-9223372036854775808,"max":18446744073709551615,)"
                              R"("t":true,"f":false,"none":null,"some":-1000},"c":{}})";
  EXPECT_EQ(out, expected_text);
  expected["b"] = b;
  expected["c"] = json::object();
  EXPECT_EQ(json::parse(out), expected);
}

}  // namespace
}  // namespace memfleet::report
