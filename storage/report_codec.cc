#include "storage/report_codec.h"

#include <zstd.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "report/report_json.h"

namespace memfleet::storage {
namespace report_codec_internal {
extern const unsigned char kReportDictionary[];
extern const size_t kReportDictionarySize;
}  // namespace report_codec_internal

namespace {

// Level 3, as the raw captures: a report is compressed on the ack path (~11 kB, tens of µs).
constexpr int kReportCompressionLevel = 3;
// A report against its keyframe's report: level 1. Most of such a report is its base's text between
// changed numbers, which zstd's fast strategy (level 1) matches better than level 3's double-fast one:
// with every figure moving, its frames are 19% smaller, and it is a third faster (bench/storage_benchmark.cc,
// BM_ReportAgainstBase). The frames are most of what a capture keeps past the raw window.
constexpr int kReportDeltaCompressionLevel = 1;

// Digested once and shared: ZSTD_CDict/ZSTD_DDict are read-only after creation and thread-safe to use.
const ZSTD_CDict* CompressionDictionary() {
  static const ZSTD_CDict* const kDict = ZSTD_createCDict(
      report_codec_internal::kReportDictionary, report_codec_internal::kReportDictionarySize, kReportCompressionLevel);
  return kDict;
}

const ZSTD_DDict* DecompressionDictionary() {
  static const ZSTD_DDict* const kDict =
      ZSTD_createDDict(report_codec_internal::kReportDictionary, report_codec_internal::kReportDictionarySize);
  return kDict;
}

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// This thread's contexts, kept from one report to the next and reset to defaults for each. A new
// context allocates its tables and clears them for every ~11 kB report, which cost several times the
// compression itself on the ingest path; a reused one keeps its tables and zstd skips the clearing
// (docs/performance.md, "Storage"). The price: a thread that has compressed a report keeps about 0.5 MB,
// one that has read one about 120 kB, until it ends. Null when zstd cannot allocate: the callers' error
// paths take it.
ZSTD_CCtx* ThreadCompressor() {
  thread_local const std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx(ZSTD_createCCtx());
  if (cctx != nullptr) ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_and_parameters);
  return cctx.get();
}

ZSTD_DCtx* ThreadDecompressor() {
  thread_local const std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  if (dctx != nullptr) ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_and_parameters);
  return dctx.get();
}

absl::Status Corrupt(absl::string_view why) {
  return absl::DataLossError(absl::StrCat("stored report does not decompress: ", why));
}

// The frame's content size, checked against the largest report before anything is allocated.
absl::StatusOr<size_t> CheckedContentSize(std::string_view blob) {
  const unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) return Corrupt("not a zstd frame");
  if (size == ZSTD_CONTENTSIZE_UNKNOWN) return Corrupt("the frame does not say its size");
  if (size > report::kMaxReportJsonBytes) return Corrupt(absl::StrCat("it claims ", size, " bytes"));
  return static_cast<size_t>(size);
}

}  // namespace

std::string CompressReportJsonAgainst(std::string_view json, std::string_view base_json) {
  ZSTD_CCtx* cctx = ThreadCompressor();
  if (cctx == nullptr) return std::string();
  std::string out(ZSTD_compressBound(json.size()), '\0');
  size_t n = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kReportDeltaCompressionLevel);
  // 4 bytes of checksum: a frame read against another base than its own (a damaged or replaced base)
  // fails instead of giving other bytes.
  if (!ZSTD_isError(n)) n = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  if (!ZSTD_isError(n)) n = ZSTD_CCtx_refPrefix(cctx, base_json.data(), base_json.size());
  if (!ZSTD_isError(n)) n = ZSTD_compress2(cctx, out.data(), out.size(), json.data(), json.size());
  out.resize(ZSTD_isError(n) ? 0 : n);  // as CompressReportJson: an empty blob fails at the first read
  return out;
}

absl::StatusOr<std::string> DecompressReportJsonAgainst(std::string_view blob, std::string_view base_json) {
  MEMFLEET_ASSIGN_OR_RETURN(size_t size, CheckedContentSize(blob));
  const unsigned dict_id = ZSTD_getDictID_fromFrame(blob.data(), blob.size());
  if (dict_id != 0)
    return Corrupt(absl::StrCat("a frame of dictionary ", dict_id, " where one against a base report belongs"));
  ZSTD_DCtx* dctx = ThreadDecompressor();
  if (dctx == nullptr) return absl::ResourceExhaustedError("stored report: cannot allocate a zstd decoder");
  std::string out(size, '\0');
  size_t n = ZSTD_DCtx_refPrefix(dctx, base_json.data(), base_json.size());
  if (!ZSTD_isError(n)) n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), blob.data(), blob.size());
  if (ZSTD_isError(n)) return Corrupt(ZSTD_getErrorName(n));
  if (n != out.size()) return Corrupt("it is shorter than its frame says");
  return out;
}

std::string CompressReportJson(std::string_view json) {
  ZSTD_CCtx* cctx = ThreadCompressor();
  if (cctx == nullptr) return std::string();
  std::string out(ZSTD_compressBound(json.size()), '\0');
  size_t n = ZSTD_compress_usingCDict(cctx, out.data(), out.size(), json.data(), json.size(), CompressionDictionary());
  // Compressing into a buffer of ZSTD_compressBound cannot fail but for memory; an empty blob then
  // fails loudly at the first read instead of storing something wrong.
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

absl::StatusOr<std::string> DecompressReportJson(std::string_view blob) {
  MEMFLEET_ASSIGN_OR_RETURN(size_t size, CheckedContentSize(blob));
  const unsigned dict_id = ZSTD_getDictID_fromFrame(blob.data(), blob.size());
  if (dict_id != 0 && dict_id != kReportDictionaryId) {
    return Corrupt(absl::StrCat("it was compressed with dictionary ", dict_id, ", which this memfleet does not have"));
  }
  ZSTD_DCtx* dctx = ThreadDecompressor();
  if (dctx == nullptr) return absl::ResourceExhaustedError("stored report: cannot allocate a zstd decoder");
  std::string out(size, '\0');
  size_t n = dict_id == 0 ? ZSTD_decompressDCtx(dctx, out.data(), out.size(), blob.data(), blob.size())
                          : ZSTD_decompress_usingDDict(dctx, out.data(), out.size(), blob.data(), blob.size(),
                                                       DecompressionDictionary());
  if (ZSTD_isError(n)) return Corrupt(ZSTD_getErrorName(n));
  if (n != out.size()) return Corrupt("it is shorter than its frame says");
  return out;
}

}  // namespace memfleet::storage
