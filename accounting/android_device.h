// Whether a capture is of an Android device (docs/accounting.md section 3): what lets the engine estimate
// a DDR size the header does not give, since the standard sizes it rounds to are phones' sizes. A Linux
// host (`memfleet account /` on a PC, an agent with --root / there) is none, and its DDR size is unknown.
//
//   AndroidEvidence a = AndroidEvidenceOf(header, capture, report.processes);
//   if (!a.android) ...  // a.evidence is empty; say why no estimate was made
#ifndef MEMFLEET_ACCOUNTING_ANDROID_DEVICE_H_
#define MEMFLEET_ACCOUNTING_ANDROID_DEVICE_H_

#include <map>
#include <string>

#include "accounting/model.h"

namespace memfleet::accounting {

struct AndroidEvidence {
  bool android = false;
  std::string evidence;  // what showed it ("capture.json android_sdk"), empty when nothing did
};

// Android when the header records an Android build property (android_version, android_sdk,
// build_fingerprint, build_type), the capture holds getprop's output (cmd/getprop), or one of its
// processes is system_server (a capture tree written before headers carried build facts has only that).
AndroidEvidence AndroidEvidenceOf(const CaptureHeader& header, const Capture& capture,
                                  const std::map<int, ProcessReport>& processes);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_ANDROID_DEVICE_H_
