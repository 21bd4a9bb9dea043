// libFuzzer target: DecodeProcessBlock and ProcessSamplesNamed (storage/process_block.h), which read a
// capture's stored process figures — bytes of the database, which a damaged disk or a hand edit can make
// anything. They must not crash, over-allocate or hit UB; and a block they accept, encoded again, must
// decode to the same samples.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "storage/process_block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using memfleet::storage::ProcessSample;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<ProcessSample>> samples = memfleet::storage::DecodeProcessBlock(input);
  (void)memfleet::storage::ProcessSamplesNamed(input, 3);
  if (!samples.ok()) return 0;
  absl::StatusOr<std::vector<ProcessSample>> again =
      memfleet::storage::DecodeProcessBlock(memfleet::storage::EncodeProcessBlock(*samples));
  if (!again.ok() || again->size() != samples->size()) std::abort();
  for (size_t i = 0; i < samples->size(); ++i) {
    const ProcessSample& a = (*samples)[i];
    const ProcessSample& b = (*again)[i];
    if (a.name_no != b.name_no || a.pid != b.pid || a.figures != b.figures) std::abort();
  }
  return 0;
}
