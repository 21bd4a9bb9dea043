// The Prometheus text exposition format 0.0.4, as memfleet writes it: metric families with their HELP and
// TYPE lines, samples with escaped label values. A family's samples are written together, as the format
// requires.
//
//   ExpositionWriter out;
//   out.Family("memfleet_device_up", "gauge", "1 while the device's agent is connected.");
//   out.Sample("memfleet_device_up", {{"device_id", id}}, 1);
//   std::string text = out.Take();
//
// Device text is hostile: label values are escaped (backslash, double quote, newline), bytes that are not
// UTF-8 become U+FFFD, so no name can end a label or a line, and the other controls and the bidi
// formatting characters (common/untrusted_text.h IsUnsafeCodePoint) are written as the CLI's tables show
// them ("\u202e"), so no name can reverse what a dashboard draws. Not thread-safe (one writer per render).
#ifndef MEMFLEET_SERVER_HTTP_METRICS_EXPOSITION_H_
#define MEMFLEET_SERVER_HTTP_METRICS_EXPOSITION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memfleet::metrics {

// The Content-Type of the format.
inline constexpr char kExpositionContentType[] = "text/plain; version=0.0.4; charset=utf-8";

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

// A label value as the format writes it between its quotes.
std::string EscapeLabelValue(std::string_view value);
// A sample value: integers as they are; other numbers with at most `max_decimals` decimals, trailing
// zeros dropped.
std::string FormatSampleValue(double value, int max_decimals = 6);

class ExpositionWriter {
 public:
  // `type`: "gauge", "counter" or "histogram". The HELP text is escaped (backslash, newline).
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, int64_t value);
  void Sample(std::string_view name, const Labels& labels, double value);
  // Consumes the text written so far.
  std::string Take() { return std::move(text_); }

 private:
  void SampleText(std::string_view name, const Labels& labels, std::string_view value);
  std::string text_;
};

}  // namespace memfleet::metrics

#endif  // MEMFLEET_SERVER_HTTP_METRICS_EXPOSITION_H_
