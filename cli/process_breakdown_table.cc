#include "cli/process_breakdown_table.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "cli/output_format.h"

namespace memfleet::cli {
namespace {

bool IsCodeCacheKey(std::string_view heap) { return heap == "jit_zygote_code_cache" || heap == "jit_app_code_cache"; }

std::string HeapsTable(const report::ProcessReport& p) {
  TextTable t({{"HEAP"},
               {"PSS KB", TextTable::kRight},
               {"SWAP PSS KB", TextTable::kRight},
               {"PRIVATE DIRTY KB", TextTable::kRight},
               {"PRIVATE CLEAN KB", TextTable::kRight}});
  report::HeapFigures total;
  const auto add = [&](std::string_view heap) {
    auto it = p.heaps->find(std::string(heap));
    if (it == p.heaps->end()) return;
    const report::HeapFigures& h = it->second;
    t.AddRow({report::HeapLabel(heap), FormatKb(h.pss_kb), FormatKb(h.swap_pss_kb), FormatKb(h.private_dirty_kb),
              FormatKb(h.private_clean_kb)});
    total.pss_kb += h.pss_kb;
    total.swap_pss_kb += h.swap_pss_kb;
    total.private_dirty_kb += h.private_dirty_kb;
    total.private_clean_kb += h.private_clean_kb;
  };
  // dumpsys' order, its memtrack rows (before Unknown) replaced by memfleet's GPU and DMA-BUF figures,
  // which are no heap and stay out of TOTAL.
  for (const char* heap : report::kHeapNames) {
    if (IsCodeCacheKey(heap) || std::string_view(heap) == "unknown") continue;
    add(heap);
  }
  t.AddRow({"GL (gl_kb)", FormatKbOrDash(p.gl_kb), "", "", ""});
  t.AddRow({"DMA-BUF (dma_kb)", FormatKbOrDash(p.dma_kb), "", "", ""});
  add("unknown");
  t.AddRow({"TOTAL (heaps)", FormatKb(total.pss_kb), FormatKb(total.swap_pss_kb), FormatKb(total.private_dirty_kb),
            FormatKb(total.private_clean_kb)});
  for (const char* heap : {"jit_zygote_code_cache", "jit_app_code_cache"}) {
    auto it = p.heaps->find(heap);
    if (it == p.heaps->end()) continue;
    t.AddRow({absl::StrCat("  of Dalvik Other: ", report::HeapLabel(heap)), FormatKb(it->second.pss_kb),
              FormatKb(it->second.swap_pss_kb), FormatKb(it->second.private_dirty_kb),
              FormatKb(it->second.private_clean_kb)});
  }
  return t.Render(2);
}

std::string SummaryTable(const report::ProcessReport& p) {
  TextTable t({{"APP SUMMARY"}, {"KB", TextTable::kRight}});
  for (const report::AppSummaryField& f : report::kAppSummaryFields) {
    t.AddRow({f.label, FormatKb((*p.app_summary).*(f.member))});
  }
  return t.Render(2);
}

std::string ExporterTable(const report::ProcessReport& p) {
  TextTable t({{"DMA-BUF EXPORTER"}, {"KB", TextTable::kRight}});
  for (const auto& [exporter, kb] : *p.dma_by_exporter_kb) t.AddRow({exporter, FormatKb(kb)});
  return t.Render(2);
}

}  // namespace

std::string RenderProcessBreakdown(const report::ProcessReport& p) {
  std::string out;
  if (p.heaps) {
    absl::StrAppend(&out, HeapsTable(p), "\n");
  } else {
    absl::StrAppend(&out, "  No heaps: this capture has no full smaps of the process (memfleet sweep --full-smaps, ",
                    "memfleet-agent --smaps full).\n");
  }
  if (p.app_summary) {
    absl::StrAppend(&out, SummaryTable(p),
                    "  (dumpsys' App Summary without the GL/EGL mtrack rows: gl_kb and dma_kb stand beside it)\n\n");
  }
  if (p.dma_by_exporter_kb && !p.dma_by_exporter_kb->empty()) absl::StrAppend(&out, ExporterTable(p), "\n");
  return out;
}

}  // namespace memfleet::cli
