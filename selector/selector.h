// The one `--where` selector: the grammar every surface that selects devices parses (the CLI before it
// sends, the server's queries and sweeps, the dashboard's ?where=) and the matcher they all apply, so a
// term means the same thing wherever it is typed (docs/labels.md, "Queries"; the tier key: docs/accounting.md
// section 9). /metrics takes no selector: it gives every device, and a Prometheus query filters by label.
//
//   absl::StatusOr<Selector> s = Selector::Parse({"model=Pixel*", "label.run=1234"});
//   if (s->MatchesDevice({.model = "Pixel 8", .platform = "qcom"}) && s->MatchesLabels(capture_labels)) ...
//
// Grammar: each term is KEY=VALUE (split at the first '='; spaces around KEY dropped, VALUE kept as
// written). KEY is one of model, platform, soc, device_id, build — VALUE matches exactly, or as a prefix
// when it ends in '*' — or tier, the tier of the device's latest capture (kernel or dumpsys, exactly:
// docs/accounting.md section 9), or while that is unknown (no capture yet, or one stored before tiers) the
// tier its agent said in its Hello; a device of neither matches neither — or label.NAME, which
// matches captures carrying the label NAME=VALUE exactly ('*' included; capture/labels.h rules; a VALUE
// quoted as the views print it, common/label_text.h, is read without its quotes) from the
// sweep that asked for them, or agentlabel.NAME, the same for a label the agent wrote in the capture's
// header (which anything holding the device's token can write: a run's queries use label.NAME;
// docs/labels.md, "Where labels come from"). Every term must match. Refused (InvalidArgument naming the
// term): no '=', an unknown key, an empty value, a key given twice (terms are ANDed, so two values of one
// key match nothing), a platform other than qcom, mtk, xring, mali, generic, a tier other than kernel,
// dumpsys, a control byte, more than kMaxTerms terms or a term longer than kMaxTermBytes.
//
// A plain value; thread-safe for const use.
#ifndef MEMFLEET_SELECTOR_SELECTOR_H_
#define MEMFLEET_SELECTOR_SELECTOR_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/labels.h"

namespace memfleet::selector {

// The device facts the device terms look at.
struct DeviceFacts {
  std::string_view model;
  std::string_view platform;
  std::string_view soc;
  std::string_view device_id;
  std::string_view build;       // build fingerprint
  std::string_view tier;        // of its latest capture: "kernel", "dumpsys", "" unknown
  std::string_view agent_tier;  // its agent's in its Hello, the tier term's while `tier` is unknown; "" unsaid
};

class Selector {
 public:
  static constexpr size_t kMaxTerms = 32;
  static constexpr size_t kMaxTermBytes = 512;

  // No terms: everything matches.
  static absl::StatusOr<Selector> Parse(const std::vector<std::string>& terms);

  // Every device term holds for `device` (label terms are not looked at).
  bool MatchesDevice(const DeviceFacts& device) const;
  // Every label.NAME term is among a capture's `sweep_labels` and every agentlabel.NAME term among its
  // `agent_labels`.
  bool MatchesLabels(const capture::Labels& sweep_labels, const capture::Labels& agent_labels = {}) const;

  bool empty() const { return text_.empty(); }
  // Whether any label.NAME or agentlabel.NAME term is given (then the selector picks captures too).
  bool has_label_terms() const { return !labels_.empty() || !agent_labels_.empty(); }
  // The label.NAME=VALUE terms (a sweep's labels), by NAME.
  const capture::Labels& labels() const { return labels_; }
  // The agentlabel.NAME=VALUE terms (the agent's labels), by NAME.
  const capture::Labels& agent_labels() const { return agent_labels_; }
  // The terms in their canonical form ("model=Pixel*", spaces around the key dropped), as sent on the
  // wire and recorded with a sweep.
  const std::vector<std::string>& terms() const { return text_; }
  // terms() joined with " ". A value with a space is quoted (common/label_text.h), so the text names its
  // terms unambiguously and each reads back as the same term.
  std::string ToString() const;

 private:
  struct Term {
    std::string key;    // model, platform, soc, device_id, build, tier
    std::string value;  // without the trailing '*'
    bool prefix = false;
  };
  std::vector<Term> device_terms_;
  capture::Labels labels_;
  capture::Labels agent_labels_;
  std::vector<std::string> text_;
};

}  // namespace memfleet::selector

#endif  // MEMFLEET_SELECTOR_SELECTOR_H_
