// The engine's vocabulary: the capture it reads (capture/) and the report it writes (report/), named
// unqualified inside the engine. Code outside the engine names them capture:: and report::.
#ifndef MEMFLEET_ACCOUNTING_MODEL_H_
#define MEMFLEET_ACCOUNTING_MODEL_H_

#include "capture/capture.h"
#include "capture/capture_header.h"
#include "report/report.h"

namespace memfleet::accounting {

using capture::Capture;
using capture::CaptureHeader;
using capture::Node;
using capture::ParseCaptureHeader;
using report::DeviceReport;
using report::DumpsysView;
using report::Kb;
using report::Platform;
using report::PlatformName;
using report::ProcessReport;
using report::Report;

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_MODEL_H_
