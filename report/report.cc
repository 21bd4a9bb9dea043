#include "report/report.h"

#include <string>
#include <utility>

namespace memfleet::report {

const char* PlatformName(Platform p) {
  switch (p) {
    case Platform::kQcom:
      return "qcom";
    case Platform::kMtk:
      return "mtk";
    case Platform::kXring:
      return "xring";
    case Platform::kMali:
      return "mali";
    case Platform::kGeneric:
      return "generic";
  }
  return "generic";
}

bool AppSummary::operator==(const AppSummary& o) const {
  for (const AppSummaryField& f : kAppSummaryFields) {
    if (this->*f.member != o.*f.member) return false;
  }
  return true;
}

std::string HeapLabel(std::string_view heap) {
  static constexpr std::pair<std::string_view, std::string_view> kLabels[] = {
      {"native", "Native Heap"},
      {"dalvik", "Dalvik Heap"},
      {"dalvik_other", "Dalvik Other"},
      {"stack", "Stack"},
      {"cursor", "Cursor"},
      {"ashmem", "Ashmem"},
      {"gfx_dev", "Gfx dev"},
      {"other_dev", "Other dev"},
      {"so", ".so mmap"},
      {"jar", ".jar mmap"},
      {"apk", ".apk mmap"},
      {"ttf", ".ttf mmap"},
      {"dex", ".dex mmap"},
      {"oat", ".oat mmap"},
      {"art", ".art mmap"},
      {"other_mmap", "Other mmap"},
      {"unknown", "Unknown"},
      {"jit_zygote_code_cache", "JIT zygote code cache"},
      {"jit_app_code_cache", "JIT app code cache"}};
  for (const auto& [name, label] : kLabels) {
    if (heap == name) return std::string(label);
  }
  return std::string(heap);
}

AppSummary& AppSummary::operator+=(const AppSummary& o) {
  for (const AppSummaryField& f : kAppSummaryFields) this->*f.member += o.*f.member;
  return *this;
}

const AppSummaryField* FindAppSummaryField(std::string_view name) {
  for (const AppSummaryField& f : kAppSummaryFields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

}  // namespace memfleet::report
