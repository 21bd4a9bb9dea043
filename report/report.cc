#include "report/report.h"

namespace memfleet::report {

const char* PlatformName(Platform p) {
  switch (p) {
    case Platform::kQcom: return "qcom";
    case Platform::kMtk: return "mtk";
    case Platform::kXring: return "xring";
    case Platform::kMali: return "mali";
    case Platform::kGeneric: return "generic";
  }
  return "generic";
}

}  // namespace memfleet::report
