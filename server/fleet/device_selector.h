// DeviceSelector: the CLI's `--where key=value` terms (model=, platform=, soc=, device_id=, build=),
// parsed once and matched against device records; every term must match. A value ending in '*' matches
// as a prefix ("device_id=sim-*"); otherwise values match exactly (case-sensitive).
// `label.KEY=VALUE` terms select captures, not devices: Matches ignores them and each caller applies
// labels() to the captures it reads (docs/labels.md); they match exactly, '*' included. `label.` matches
// only labels the server gave a capture (its sweep's): a run's queries must not take in captures whose
// agent merely wrote the run's label into its own header. `agentlabel.KEY=VALUE` matches those instead.
//
//   absl::StatusOr<DeviceSelector> s = DeviceSelector::Parse({"model=Pixel 8", "platform=qcom"});
//   if (s->Matches(record)) ...
//
// A plain value; thread-safe for const use.
#ifndef MEMFLEET_SERVER_FLEET_DEVICE_SELECTOR_H_
#define MEMFLEET_SERVER_FLEET_DEVICE_SELECTOR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/labels.h"
#include "storage/store.h"

namespace memfleet::server {

class DeviceSelector {
 public:
  static constexpr size_t kMaxTerms = 32;
  static constexpr size_t kMaxTermBytes = 512;

  // InvalidArgument naming the offending term: not "key=value", an unknown key, an empty value, too many
  // or too long terms. No terms: every device matches.
  static absl::StatusOr<DeviceSelector> Parse(const std::vector<std::string>& terms);

  // The device terms only.
  bool Matches(const storage::DeviceRecord& device) const;
  bool empty() const { return terms_.empty() && labels_.empty(); }
  // The label.KEY=VALUE (sweep) and agentlabel.KEY=VALUE (agent) terms, by key; a capture must carry all
  // of them, each from its source.
  const storage::LabelSet& labels() const { return labels_; }
  // The terms, joined with " " (as recorded with a sweep).
  std::string ToString() const;

 private:
  struct Term {
    std::string key;    // canonical: model, platform, soc, device_id, build
    std::string value;  // without the trailing '*'
    bool prefix = false;
  };
  std::vector<Term> terms_;
  storage::LabelSet labels_;
  std::vector<std::string> text_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_FLEET_DEVICE_SELECTOR_H_
