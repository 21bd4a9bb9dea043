// The SQL functions SQLite's schema migrations (schema.cc) rewrite stored rows with, registered on the
// migrating connection:
//   memfleet_compress_report(text) -> blob                 version 14: a report's JSON into a dictionary frame
//   memfleet_rebase_report(blob, base blob) -> blob        version 16: two dictionary frames into the first one
//                                                          compressed against the second's JSON; NULL when either
//                                                          does not decompress (storage/report_codec.h)
//   memfleet_process_block(name_no, pid, total_kb, pss_kb, swap_pss_kb, gfxdev_kb, gl_kb, dma_kb,
//                          native_graphics_kb, non_graphics_kb, graphics_dma_kb) -> blob
//                                                          version 17, an aggregate: a capture's process rows as
//                                                          one block (storage/process_block.h)
//
//   MEMFLEET_RETURN_IF_ERROR(RegisterMigrationFunctions(db));
#ifndef MEMFLEET_STORAGE_SQLITE_MIGRATION_FUNCTIONS_H_
#define MEMFLEET_STORAGE_SQLITE_MIGRATION_FUNCTIONS_H_

#include "absl/status/status.h"
#include "storage/sqlite/sqlite_db.h"

namespace memfleet::storage {

absl::Status RegisterMigrationFunctions(SqliteDb& db);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_SQLITE_MIGRATION_FUNCTIONS_H_
