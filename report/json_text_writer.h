// JsonTextWriter: compact JSON appended to a string as it is written, with no document in between, for
// the report the server writes on every capture (report_json.cc). Its text is nlohmann::json's dump(-1)
// of the same values, byte for byte, when the caller writes each object's keys in sorted order (as
// nlohmann's objects keep them): strings escaped as nlohmann escapes them, invalid UTF-8 replaced.
//
//   std::string out;
//   JsonTextWriter w(out);
//   w.BeginObject(); w.Key("a"); w.Int(1); w.Key("b"); w.BeginArray(); w.String("x"); w.EndArray(); w.EndObject();
//   // out == R"({"a":1,"b":["x"]})"
#ifndef MEMFLEET_REPORT_JSON_TEXT_WRITER_H_
#define MEMFLEET_REPORT_JSON_TEXT_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memfleet::report {

class JsonTextWriter {
 public:
  explicit JsonTextWriter(std::string& out) : out_(out) {}

  void BeginObject() { Open('{'); }
  void EndObject() { out_.push_back('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { out_.push_back(']'); }
  // A member's key; its value follows.
  void Key(std::string_view key);
  void String(std::string_view text);
  void Int(int64_t value);
  void UInt(uint64_t value);
  void Bool(bool value);
  void Null();
  void OptionalInt(const std::optional<int64_t>& value) { value ? Int(*value) : Null(); }

 private:
  // A value's separator: a comma after the previous element of an array; none after a key or an opening.
  void Separate();
  void AppendQuoted(std::string_view text);
  void Open(char bracket) {
    Separate();
    out_.push_back(bracket);
  }

  std::string& out_;
  bool after_key_ = false;
};

}  // namespace memfleet::report

#endif  // MEMFLEET_REPORT_JSON_TEXT_WRITER_H_
