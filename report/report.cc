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

bool AppSummary::operator==(const AppSummary& o) const {
  for (const AppSummaryField& f : kAppSummaryFields) {
    if (this->*f.member != o.*f.member) return false;
  }
  return true;
}

const AppSummaryField* FindAppSummaryField(std::string_view name) {
  for (const AppSummaryField& f : kAppSummaryFields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

}  // namespace memfleet::report
