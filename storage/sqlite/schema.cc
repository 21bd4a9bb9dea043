#include "storage/sqlite/schema.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/sqlite/migration_functions.h"

namespace memfleet::storage {
namespace {

// Version 1: devices, raw captures and their reports.
// Times are RFC 3339 UTC text in one canonical form (sqlite_store.cc NormalizeTimestamp), so ORDER BY and
// range comparisons on them are chronological. Figures are INTEGER kB and NULL when the engine could not
// compute them — never 0. In `captures`, raw_blob is the last column on purpose: SQLite stores a row as
// one payload, and reading a column placed after a large blob walks the blob's overflow pages.
constexpr char kMigration1[] = R"sql(
CREATE TABLE devices (
  device_id         TEXT PRIMARY KEY NOT NULL,
  model             TEXT NOT NULL DEFAULT '',
  soc               TEXT NOT NULL DEFAULT '',
  build_fingerprint TEXT NOT NULL DEFAULT '',
  kernel            TEXT NOT NULL DEFAULT '',
  agent_version     TEXT NOT NULL DEFAULT '',
  page_size         INTEGER NOT NULL DEFAULT 0,
  platform          TEXT NOT NULL DEFAULT '',
  last_seen_at      TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE captures (
  capture_id  TEXT PRIMARY KEY NOT NULL,
  device_id   TEXT NOT NULL,
  captured_at TEXT NOT NULL,
  received_at TEXT NOT NULL DEFAULT '',
  sweep_id    TEXT NOT NULL DEFAULT '',
  raw_codec   TEXT NOT NULL DEFAULT '',
  raw_bytes   INTEGER NOT NULL DEFAULT 0,
  report_json TEXT NOT NULL DEFAULT '',
  raw_blob    BLOB NOT NULL
) STRICT;

CREATE TABLE device_reports (
  capture_id         TEXT PRIMARY KEY NOT NULL REFERENCES captures (capture_id) ON DELETE CASCADE,
  device_id          TEXT NOT NULL,
  captured_at        TEXT NOT NULL,
  platform           TEXT NOT NULL,
  ddr_kb             INTEGER,
  ddr_estimated      INTEGER NOT NULL DEFAULT 0,
  mem_total_kb       INTEGER,
  gcma_kb            INTEGER,
  static_reserved_kb INTEGER,
  kernel_cma_kb      INTEGER,
  kernel_kb          INTEGER,
  processes_kb       INTEGER,
  total_kb           INTEGER
) STRICT;

CREATE TABLE process_reports (
  capture_id             TEXT NOT NULL REFERENCES captures (capture_id) ON DELETE CASCADE,
  device_id              TEXT NOT NULL,
  captured_at            TEXT NOT NULL,
  pid                    INTEGER NOT NULL,
  name                   TEXT NOT NULL,
  oom_score_adj          INTEGER,
  cached                 INTEGER NOT NULL DEFAULT 0,
  pss_kb                 INTEGER,
  swap_pss_kb            INTEGER,
  gfxdev_kb              INTEGER,
  gl_kb                  INTEGER,
  dma_kb                 INTEGER,
  native_graphics_kb     INTEGER,
  native_graphics_source TEXT NOT NULL DEFAULT 'none',
  non_graphics_kb        INTEGER,
  graphics_dma_kb        INTEGER,
  total_kb               INTEGER,
  PRIMARY KEY (capture_id, pid)
) STRICT;
)sql";

// Version 2: sweeps (one-off captures of a selected set of devices) and each device's state in them.
constexpr char kMigration2[] = R"sql(
CREATE TABLE sweeps (
  sweep_id    TEXT PRIMARY KEY NOT NULL,
  started_at  TEXT NOT NULL DEFAULT '',
  selector    TEXT NOT NULL DEFAULT '',
  finished_at TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE sweep_devices (
  sweep_id  TEXT NOT NULL REFERENCES sweeps (sweep_id) ON DELETE CASCADE,
  device_id TEXT NOT NULL,
  state     TEXT NOT NULL,
  PRIMARY KEY (sweep_id, device_id)
) STRICT;
)sql";

// Version 3: the indexes of the hot queries.
// - A process trend (device, process name, since) is one range of process_reports_by_device_name_time,
//   already in (captured_at, pid) order: no sort, no scan of other devices' or processes' rows.
// - The latest report of a device is the last entry of its range in device_reports_by_device_time /
//   captures_by_device_time; capture_id is in the index to break captured_at ties without a table read.
constexpr char kMigration3[] = R"sql(
CREATE INDEX process_reports_by_device_name_time ON process_reports (device_id, name, captured_at, pid);
CREATE INDEX device_reports_by_device_time ON device_reports (device_id, captured_at, capture_id);
CREATE INDEX captures_by_device_time ON captures (device_id, captured_at, capture_id);
)sql";

// Version 4: baselines (docs/baselines.md). Every import is a new version, never an update, so
// a check can always be re-run against the baseline it used; the file is kept verbatim (its comments
// and order are the lab's). The sweep index serves `memfleet baseline check --sweep ID`.
constexpr char kMigration4[] = R"sql(
CREATE TABLE baselines (
  version     INTEGER PRIMARY KEY NOT NULL,
  name        TEXT NOT NULL,
  imported_at TEXT NOT NULL,
  raw_text    TEXT NOT NULL
) STRICT;
CREATE INDEX captures_by_sweep ON captures (sweep_id, device_id, captured_at, capture_id);
)sql";

// Version 5: access tokens (docs/security.md). Only the SHA-256 of a token is stored: the
// secret is printed once by `memfleet-server token add`. A revoked token keeps its row (revoked_at set)
// so that revoking the last token cannot turn authentication off, and its name stays taken.
constexpr char kMigration5[] = R"sql(
CREATE TABLE tokens (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('agent', 'read', 'admin')),
  device_id TEXT NOT NULL DEFAULT '',
  sha256 TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT NOT NULL DEFAULT ''
) STRICT;
)sql";

// Version 6: the process trend reads its index only (docs/performance.md). With the figures and
// capture_id in the index, a trend is one contiguous index range; before, each point was also a lookup
// of its table row, scattered among every other process's rows (on the 100-device benchmark database a
// 1-year trend of 52,560 points took 113 ms; now 21-28 ms, the index range alone ~4.6 ms). Costs ~46
// bytes per process row; docs/performance.md ("Queries", "Storage") has the numbers. Same index name, so
// plans and tests that name it keep working.
constexpr char kMigration6[] = R"sql(
DROP INDEX process_reports_by_device_name_time;
CREATE INDEX process_reports_by_device_name_time ON process_reports (device_id, name, captured_at, pid,
  capture_id, total_kb, pss_kb, swap_pss_kb, gfxdev_kb, gl_kb, dma_kb, native_graphics_kb, non_graphics_kb,
  graphics_dma_kb);
)sql";

// Version 7: captures an agent's full spool dropped before they reached the server
// (docs/reliability.md, "Spool full"), as the agents report them in Hello: the running total per device,
// so the loss is visible in `memfleet devices` and never silent.
constexpr char kMigration7[] = R"sql(
ALTER TABLE devices ADD COLUMN dropped_captures INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 8: the build each capture was taken on (`memfleet regressions`), from its capture.json,
// so a device upgraded from A to B keeps its A reports as A's; NULL for captures stored before (they fall
// back to the device's current build). ADD COLUMN puts it after raw_blob, where reading it from the table
// would walk the blob's overflow pages: the index holds it, and the per-(device, build) latest-report
// query reads it from there (one index range per pair, like captures_by_device_time per device).
constexpr char kMigration8[] = R"sql(
ALTER TABLE captures ADD COLUMN build_fingerprint TEXT;
CREATE INDEX captures_by_device_build_time ON captures (device_id, build_fingerprint, captured_at, capture_id);
)sql";

// Version 9: delta storage of raw captures (docs/performance.md, "Storage"). A capture stored with
// codec zstd-delta+proto names here the capture whose decompressed blob is its zstd dictionary (the
// keyframe: always a whole zstd+proto capture of the same device); NULL for a whole capture.
constexpr char kMigration9[] = R"sql(
ALTER TABLE captures ADD COLUMN raw_base TEXT REFERENCES captures (capture_id);
)sql";

// Version 10: each device's clock against the server's (seconds, device minus server) at its latest Hello,
// shown by `memfleet devices`; NULL when the agent sent no time. A device whose clock is far ahead would
// otherwise only show up as captures the server refuses (server/ingest/clock_skew.h).
constexpr char kMigration10[] = R"sql(
ALTER TABLE devices ADD COLUMN clock_skew_s INTEGER;
)sql";

// Version 11: the Android facts an agent reads with getprop, its access level and SELinux mode, from its
// latest Hello ('' when it did not say), shown by `memfleet devices`.
constexpr char kMigration11[] = R"sql(
ALTER TABLE devices ADD COLUMN manufacturer TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN build_type TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN abi TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN android_sdk TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN access TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN selinux TEXT NOT NULL DEFAULT '';
)sql";

// Version 12: times in milliseconds (storage/timestamp.h). A whole-second time "…:SSZ" would sort after
// "…:SS.500Z" of the same second ('Z' > '.'), so every stored time is rewritten in the new form
// "…:SS.000Z" and all of them compare as text again. Empty times ('' = not set) stay empty.
constexpr char kMigration12[] = R"sql(
UPDATE devices SET last_seen_at = substr(last_seen_at, 1, 19) || '.000Z' WHERE length(last_seen_at) = 20;
UPDATE captures SET captured_at = substr(captured_at, 1, 19) || '.000Z' WHERE length(captured_at) = 20;
UPDATE captures SET received_at = substr(received_at, 1, 19) || '.000Z' WHERE length(received_at) = 20;
UPDATE device_reports SET captured_at = substr(captured_at, 1, 19) || '.000Z' WHERE length(captured_at) = 20;
UPDATE process_reports SET captured_at = substr(captured_at, 1, 19) || '.000Z' WHERE length(captured_at) = 20;
UPDATE sweeps SET started_at = substr(started_at, 1, 19) || '.000Z' WHERE length(started_at) = 20;
UPDATE sweeps SET finished_at = substr(finished_at, 1, 19) || '.000Z' WHERE length(finished_at) = 20;
UPDATE baselines SET imported_at = substr(imported_at, 1, 19) || '.000Z' WHERE length(imported_at) = 20;
UPDATE tokens SET created_at = substr(created_at, 1, 19) || '.000Z' WHERE length(created_at) = 20;
UPDATE tokens SET revoked_at = substr(revoked_at, 1, 19) || '.000Z' WHERE length(revoked_at) = 20;
)sql";

// Version 13: labels of captures (docs/labels.md): key=value pairs a lab queries a test run by. The
// (key, value, capture_id) index answers "the captures carrying run=1234" by one index range; the primary
// key answers "the labels of this capture" (and "has it any", which retention asks before deleting).
constexpr char kMigration13[] = R"sql(
CREATE TABLE capture_labels (
  capture_id TEXT NOT NULL REFERENCES captures (capture_id) ON DELETE CASCADE,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (capture_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX capture_labels_by_key_value ON capture_labels (key, value, capture_id);
)sql";

// Version 14: reports stored compressed (storage/report_codec.h, docs/performance.md "Storage"). The JSON
// moves from captures.report_json (kept, '' from now on) into device_reports, one row per capture with no
// blob before it, as a zstd frame with the built-in report dictionary: ~11 kB a report becomes ~0.5-1.2
// kB. Every stored report is rewritten here by memfleet_compress_report (registered on the migrating
// connection), in the same transaction as the version bump. captures_by_raw_base serves the foreign-key
// check of every deleted capture (retention, server/history/retention.h): without it, each delete scans captures
// for deltas that name it. device_retention: how far each device's history is thinned, so that a trend
// over it can say so (RetentionMarks).
constexpr char kMigration14[] = R"sql(
ALTER TABLE device_reports ADD COLUMN report_zstd BLOB;
UPDATE device_reports SET report_zstd = memfleet_compress_report(
  (SELECT c.report_json FROM captures AS c WHERE c.capture_id = device_reports.capture_id));
UPDATE captures SET report_json = '' WHERE report_json != '';
CREATE INDEX captures_by_raw_base ON captures (raw_base);
CREATE TABLE device_retention (
  device_id     TEXT PRIMARY KEY NOT NULL,
  hourly_before TEXT NOT NULL DEFAULT '',
  daily_before  TEXT NOT NULL DEFAULT ''
) STRICT;
)sql";

// Version 15: process rows that cost what the queries read (docs/performance.md "Bytes per stored
// capture"). Before, each row held its device id, process name, capture id and time as text three times
// over (the table, the covering trend index and the (capture_id, pid) key): ~400 bytes a row. Now:
// - process_samples IS the trend index: a WITHOUT ROWID table clustered on (device_no, name_no,
//   captured_ms, pid, capture_no) with the nine figures, so a trend is one range of it, in time order, and
//   there is no second copy. The numbers are small integers (device_numbers, process_names); captured_ms
//   is the capture's time in Unix milliseconds. oom_score_adj, cached and native_graphics_source are gone:
//   no query read them (they stay in the report JSON).
// - device_reports is rebuilt with an integer capture_no (its rowid, stable: an INTEGER PRIMARY KEY survives
//   VACUUM) that the process rows name instead of the capture id; a trend reads the capture id and time back
//   from it by rowid. The compressed report moves to report_blobs (same capture_no), so that those rows stay
//   narrow (~90 bytes, not ~800) and a trend's probes touch few pages. Deleting a capture cascades captures ->
//   device_reports -> process_samples and report_blobs, the former through process_samples_by_capture, which
//   also answers "this capture's process named N".
// - captures_by_sweep keeps only sweep captures (a partial index): a periodic capture has no sweep and was
//   an index entry no query reads.
// Written in one transaction with the version bump, like every migration.
constexpr char kMigration15[] = R"sql(
CREATE TABLE device_numbers (
  device_no INTEGER PRIMARY KEY,
  device_id TEXT NOT NULL UNIQUE
) STRICT;
INSERT INTO device_numbers (device_id) SELECT DISTINCT device_id FROM device_reports ORDER BY device_id;
CREATE TABLE process_names (
  name_no INTEGER PRIMARY KEY,
  name    TEXT NOT NULL UNIQUE
) STRICT;
INSERT INTO process_names (name) SELECT DISTINCT name FROM process_reports ORDER BY name;

CREATE TABLE device_reports_v15 (
  capture_no         INTEGER PRIMARY KEY,
  capture_id         TEXT NOT NULL UNIQUE REFERENCES captures (capture_id) ON DELETE CASCADE,
  device_id          TEXT NOT NULL,
  captured_at        TEXT NOT NULL,
  platform           TEXT NOT NULL,
  ddr_kb             INTEGER,
  ddr_estimated      INTEGER NOT NULL DEFAULT 0,
  mem_total_kb       INTEGER,
  gcma_kb            INTEGER,
  static_reserved_kb INTEGER,
  kernel_cma_kb      INTEGER,
  kernel_kb          INTEGER,
  processes_kb       INTEGER,
  total_kb           INTEGER
) STRICT;
INSERT INTO device_reports_v15 (capture_id, device_id, captured_at, platform, ddr_kb, ddr_estimated, mem_total_kb,
  gcma_kb, static_reserved_kb, kernel_cma_kb, kernel_kb, processes_kb, total_kb)
  SELECT capture_id, device_id, captured_at, platform, ddr_kb, ddr_estimated, mem_total_kb, gcma_kb,
  static_reserved_kb, kernel_cma_kb, kernel_kb, processes_kb, total_kb FROM device_reports
  ORDER BY device_id, captured_at, capture_id;
CREATE TABLE report_blobs (
  capture_no  INTEGER PRIMARY KEY REFERENCES device_reports_v15 (capture_no) ON DELETE CASCADE,
  report_zstd BLOB NOT NULL
) STRICT;
INSERT INTO report_blobs (capture_no, report_zstd) SELECT r.capture_no, o.report_zstd FROM device_reports_v15 AS r
  JOIN device_reports AS o ON o.capture_id = r.capture_id WHERE o.report_zstd IS NOT NULL;
DROP TABLE device_reports;
ALTER TABLE device_reports_v15 RENAME TO device_reports;
CREATE INDEX device_reports_by_device_time ON device_reports (device_id, captured_at, capture_id);

CREATE TABLE process_samples (
  device_no          INTEGER NOT NULL,
  name_no            INTEGER NOT NULL,
  captured_ms        INTEGER NOT NULL,
  pid                INTEGER NOT NULL,
  capture_no         INTEGER NOT NULL REFERENCES device_reports (capture_no) ON DELETE CASCADE,
  total_kb           INTEGER,
  pss_kb             INTEGER,
  swap_pss_kb        INTEGER,
  gfxdev_kb          INTEGER,
  gl_kb              INTEGER,
  dma_kb             INTEGER,
  native_graphics_kb INTEGER,
  non_graphics_kb    INTEGER,
  graphics_dma_kb    INTEGER,
  PRIMARY KEY (device_no, name_no, captured_ms, pid, capture_no)
) STRICT, WITHOUT ROWID;
INSERT INTO process_samples (device_no, name_no, captured_ms, pid, capture_no, total_kb, pss_kb, swap_pss_kb,
  gfxdev_kb, gl_kb, dma_kb, native_graphics_kb, non_graphics_kb, graphics_dma_kb)
  SELECT d.device_no, n.name_no, CAST(strftime('%s', substr(p.captured_at, 1, 16)) AS INTEGER) * 1000 +
  CAST(substr(p.captured_at, 18, 2) AS INTEGER) * 1000 + CAST(substr(p.captured_at, 21, 3) AS INTEGER), p.pid, r.capture_no, p.total_kb, p.pss_kb, p.swap_pss_kb,
  p.gfxdev_kb, p.gl_kb, p.dma_kb, p.native_graphics_kb, p.non_graphics_kb, p.graphics_dma_kb
  FROM process_reports AS p JOIN device_reports AS r ON r.capture_id = p.capture_id
  JOIN device_numbers AS d ON d.device_id = p.device_id JOIN process_names AS n ON n.name = p.name;
DROP TABLE process_reports;
CREATE INDEX process_samples_by_capture ON process_samples (capture_no, name_no);
DROP INDEX captures_by_sweep;
CREATE INDEX captures_by_sweep ON captures (sweep_id, device_id, captured_at, capture_id) WHERE sweep_id != '';
)sql";

// Version 16: a delta capture's report is stored against its keyframe's report (the capture its raw blob
// is a delta of) as a zstd prefix, not against the built-in dictionary: two reports of one device a few
// minutes apart differ in a few figures (docs/performance.md "Bytes per stored capture"). base_no names
// the base's capture_no; NULL is a dictionary frame, as every report was until now. A base is always a
// keyframe (a whole capture), whose own report is a dictionary frame, so reading a report decompresses at
// most two frames. The base cannot go while its dependants stay: it is their raw_base, which the keyframe
// check of captures.raw_base keeps. A report that does not decompress (or whose base does not) stays as it
// was.
// Also: process_samples_by_capture goes (~25 bytes a process row). A capture's rows are found by the
// primary key, (device_no, name_no, captured_ms) over the names its device ever had (device_process_names,
// one row per device and name), plus capture_no; so the foreign key from process_samples to device_reports,
// whose ON DELETE CASCADE needed that index, goes too (the table is rebuilt without it) and the store
// deletes a capture's process rows itself, before the capture.
// And: the capture id leaves the three (device, time) indexes (~45 of their ~100 bytes an entry). It only
// broke ties on captured_at, which the statements still order by (ORDER BY captured_at, capture_id): a
// tie is now sorted from the rows (capture_id is their first column), a few rows per device at most.
// Written in one transaction with the version bump, like every migration.
constexpr char kMigration16[] = R"sql(
DROP INDEX device_reports_by_device_time;
CREATE INDEX device_reports_by_device_time ON device_reports (device_id, captured_at);
DROP INDEX captures_by_device_time;
CREATE INDEX captures_by_device_time ON captures (device_id, captured_at);
DROP INDEX captures_by_device_build_time;
CREATE INDEX captures_by_device_build_time ON captures (device_id, build_fingerprint, captured_at);
ALTER TABLE report_blobs ADD COLUMN base_no INTEGER;
UPDATE report_blobs SET base_no = (SELECT kr.capture_no FROM device_reports AS r
  JOIN captures AS c ON c.capture_id = r.capture_id
  JOIN captures AS k ON k.capture_id = c.raw_base AND k.raw_base IS NULL
  JOIN device_reports AS kr ON kr.capture_id = k.capture_id
  JOIN report_blobs AS kb ON kb.capture_no = kr.capture_no
  WHERE r.capture_no = report_blobs.capture_no);
UPDATE report_blobs SET report_zstd = COALESCE(memfleet_rebase_report(report_zstd,
  (SELECT kb.report_zstd FROM report_blobs AS kb WHERE kb.capture_no = report_blobs.base_no)), report_zstd),
  base_no = CASE WHEN memfleet_rebase_report(report_zstd,
  (SELECT kb.report_zstd FROM report_blobs AS kb WHERE kb.capture_no = report_blobs.base_no)) IS NULL THEN NULL
  ELSE base_no END
  WHERE base_no IS NOT NULL;

CREATE TABLE device_process_names (
  device_no INTEGER NOT NULL,
  name_no   INTEGER NOT NULL,
  PRIMARY KEY (device_no, name_no)
) STRICT, WITHOUT ROWID;
INSERT INTO device_process_names (device_no, name_no) SELECT DISTINCT device_no, name_no FROM process_samples;
CREATE TABLE process_samples_v16 (
  device_no          INTEGER NOT NULL,
  name_no            INTEGER NOT NULL,
  captured_ms        INTEGER NOT NULL,
  pid                INTEGER NOT NULL,
  capture_no         INTEGER NOT NULL,
  total_kb           INTEGER,
  pss_kb             INTEGER,
  swap_pss_kb        INTEGER,
  gfxdev_kb          INTEGER,
  gl_kb              INTEGER,
  dma_kb             INTEGER,
  native_graphics_kb INTEGER,
  non_graphics_kb    INTEGER,
  graphics_dma_kb    INTEGER,
  PRIMARY KEY (device_no, name_no, captured_ms, pid, capture_no)
) STRICT, WITHOUT ROWID;
INSERT INTO process_samples_v16 SELECT device_no, name_no, captured_ms, pid, capture_no, total_kb, pss_kb,
  swap_pss_kb, gfxdev_kb, gl_kb, dma_kb, native_graphics_kb, non_graphics_kb, graphics_dma_kb
  FROM process_samples ORDER BY device_no, name_no, captured_ms, pid, capture_no;
DROP TABLE process_samples;
ALTER TABLE process_samples_v16 RENAME TO process_samples;
)sql";

// Version 17: where each label came from (docs/labels.md): 'sweep', given by the server from the sweep
// that asked the device for the capture, or 'agent', written by the agent in the capture's header. A run's
// queries (`--where label.K=V`, `report --label`) match the sweep's only, so an agent cannot put its
// captures into another team's run; `agentlabel.K=V` asks for the agent's. The source joins the
// (key, value) index, so each query is still one index range per label. Labels stored before cannot tell:
// those of a capture whose sweep had asked its device (sweep_devices names it, not as offline) count as the
// sweep's — as they were merged on the capture then, an agent's label there does too —, all others as the
// agent's.
constexpr char kMigration17[] = R"sql(
ALTER TABLE capture_labels ADD COLUMN source TEXT NOT NULL DEFAULT 'agent' CHECK (source IN ('sweep', 'agent'));
UPDATE capture_labels SET source = 'sweep' WHERE capture_id IN (SELECT c.capture_id FROM captures AS c
  JOIN sweep_devices AS s ON s.sweep_id = c.sweep_id AND s.device_id = c.device_id
  WHERE c.sweep_id != '' AND s.state != 'offline');
DROP INDEX capture_labels_by_key_value;
CREATE INDEX capture_labels_by_key_value ON capture_labels (key, value, source, capture_id);
)sql";

// Version 18: devices.retired_at, when `memfleet devices retire` took the device out of the fleet's views
// ('' while it is active; storage/records.h).
constexpr char kMigration18[] = R"sql(
ALTER TABLE devices ADD COLUMN retired_at TEXT NOT NULL DEFAULT '';
)sql";

// Version 19: a capture's process figures as one block in its device_reports row (storage/process_block.h,
// docs/performance.md "Bytes per stored capture"), as the store keeps them on PostgreSQL too
// (storage/postgres/pg_schema.cc), where a row per process cost ~190 bytes of tuple header and index entry
// against ~20 in a block. Every query that read process_samples reads the blocks of the reports it
// visits: a trend is the device's range of device_reports_by_device_time; a capture's rows go with its
// report row, so device_process_names (which a delete probed) and device_numbers go too.
// memfleet_process_block (storage/sqlite/migration_functions.h, registered on the migrating connection)
// writes each capture's block from its rows, in the same transaction as the version bump.
constexpr char kMigration19[] = R"sql(
CREATE TEMP TABLE memfleet_blocks (capture_no INTEGER PRIMARY KEY, n INTEGER NOT NULL, block BLOB NOT NULL);
INSERT INTO memfleet_blocks (capture_no, n, block) SELECT capture_no, COUNT(*), memfleet_process_block(name_no, pid,
  total_kb, pss_kb, swap_pss_kb, gfxdev_kb, gl_kb, dma_kb, native_graphics_kb, non_graphics_kb, graphics_dma_kb)
  FROM process_samples GROUP BY capture_no;
ALTER TABLE device_reports ADD COLUMN process_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE device_reports ADD COLUMN processes BLOB;
UPDATE device_reports SET process_count = b.n, processes = b.block FROM memfleet_blocks AS b
  WHERE b.capture_no = device_reports.capture_no;
DROP TABLE memfleet_blocks;
DROP TABLE process_samples;
DROP TABLE device_process_names;
DROP TABLE device_numbers;
)sql";

// Version 20: the tier of each capture's figures (docs/accounting.md section 9), from the report the engine
// made of it at ingest: device_reports.tier is 'kernel' or 'dumpsys', NULL for a report stored before
// (unknown here: its JSON says, and `memfleet-server --reaccount` stores it). devices.tier is the tier of the
// device's latest report (kept like devices.platform), which `memfleet devices` shows and `--where tier=`
// selects on; devices.agent_tier the tier its agent said in its latest Hello ('' when it did not say).
constexpr char kMigration20[] = R"sql(
ALTER TABLE device_reports ADD COLUMN tier TEXT CHECK (tier IN ('kernel', 'dumpsys'));
ALTER TABLE devices ADD COLUMN tier TEXT CHECK (tier IN ('kernel', 'dumpsys'));
ALTER TABLE devices ADD COLUMN agent_tier TEXT NOT NULL DEFAULT '';
)sql";

// Version 21: sweeps.server_id, the server running the sweep (its --server-id; '' for a server alone with
// its database, and for the sweeps recorded before). A server that starts closes the sweeps left running by
// itself or by a server no longer alive, never those of another live server on the same database (PostgreSQL
// version 9 adds it there).
constexpr char kMigration21[] = R"sql(
ALTER TABLE sweeps ADD COLUMN server_id TEXT NOT NULL DEFAULT '';
)sql";

// Version 22: captures_swept_by_device, each device's sweep captures in time order (a partial index: sweep
// captures only, a few bytes each). A history's sweep marks are one range of it; a probe of captures per
// point read every capture row of the history (most of a year's trend), and an index that starts with
// the sweep costs a probe per sweep the fleet ever ran (PostgreSQL version 10 adds it there).
constexpr char kMigration22[] = R"sql(
CREATE INDEX captures_swept_by_device ON captures (device_id, captured_at, capture_id, sweep_id) WHERE sweep_id != '';
)sql";

absl::StatusOr<bool> TableExists(SqliteDb& db, const char* name) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1"));
  MEMFLEET_RETURN_IF_ERROR(st.BindText(1, name));
  MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st.Step());
  return r == StepResult::kRow;
}

absl::StatusOr<bool> HasAnyTable(SqliteDb& db) {
  MEMFLEET_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' LIMIT 1"));
  MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st.Step());
  return r == StepResult::kRow;
}

absl::Status TooNew(int version) {
  return absl::FailedPreconditionError(absl::StrCat(
      "database schema version ", version, " is newer than this memfleet build supports (", LatestSchemaVersion(),
      "): the file was written by a newer memfleet; run that version (databases cannot be downgraded)"));
}

// Applies the next migration if one is missing. Returns false when the database is already latest.
absl::StatusOr<bool> MigrateOneStep(SqliteDb& db) {
  MEMFLEET_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, /*immediate=*/true));
  // Read inside the write transaction: another process may have migrated since we looked.
  MEMFLEET_ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  const int latest = LatestSchemaVersion();
  if (version > latest) return TooNew(version);
  if (version == latest) return false;
  if (version == 0) {
    MEMFLEET_ASSIGN_OR_RETURN(bool any_table, HasAnyTable(db));
    if (any_table) {
      return absl::FailedPreconditionError(
          "the file is an SQLite database with tables but no schema_version table: not a memfleet database");
    }
    MEMFLEET_RETURN_IF_ERROR(db.Exec("CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT"));
    MEMFLEET_RETURN_IF_ERROR(db.Exec("INSERT INTO schema_version (version) VALUES (0)"));
  }
  absl::Status applied = db.Exec(Migrations()[static_cast<size_t>(version)]);
  if (!applied.ok()) {
    return absl::Status(applied.code(),
                        absl::StrCat("migration to schema version ", version + 1, " failed: ", applied.message()));
  }
  MEMFLEET_ASSIGN_OR_RETURN(Statement bump, db.Prepare("UPDATE schema_version SET version = ?1"));
  MEMFLEET_RETURN_IF_ERROR(bump.BindInt64(1, version + 1));
  MEMFLEET_RETURN_IF_ERROR(bump.StepDone());
  bump = Statement();  // finalize before COMMIT
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return true;
}

}  // namespace

const std::vector<std::string>& Migrations() {
  static const std::vector<std::string>* const kMigrations = new std::vector<std::string>{
      kMigration1,  kMigration2,  kMigration3,  kMigration4,  kMigration5,  kMigration6,  kMigration7,  kMigration8,
      kMigration9,  kMigration10, kMigration11, kMigration12, kMigration13, kMigration14, kMigration15, kMigration16,
      kMigration17, kMigration18, kMigration19, kMigration20, kMigration21, kMigration22};
  return *kMigrations;
}

int LatestSchemaVersion() { return static_cast<int>(Migrations().size()); }

absl::StatusOr<int> ReadSchemaVersion(SqliteDb& db) {
  MEMFLEET_ASSIGN_OR_RETURN(bool exists, TableExists(db, "schema_version"));
  if (!exists) return 0;
  MEMFLEET_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT COUNT(*), MAX(version) FROM schema_version"));
  MEMFLEET_ASSIGN_OR_RETURN(StepResult r, st.Step());
  if (r != StepResult::kRow || st.ColumnInt64(0) != 1 || st.ColumnIsNull(1)) {
    return absl::DataLossError("table schema_version must hold exactly one row; the database was edited by hand");
  }
  const int64_t version = st.ColumnInt64(1);
  if (version < 0 || version > 1'000'000) {
    return absl::DataLossError(absl::StrCat("schema_version holds an impossible version ", version));
  }
  return static_cast<int>(version);
}

absl::Status MigrateToLatest(SqliteDb& db) {
  MEMFLEET_RETURN_IF_ERROR(RegisterMigrationFunctions(db));  // kMigration14, 16, 19
  while (true) {
    MEMFLEET_ASSIGN_OR_RETURN(bool migrated, MigrateOneStep(db));
    if (!migrated) return absl::OkStatus();
  }
}

absl::Status CheckSchemaIsLatest(SqliteDb& db) {
  MEMFLEET_ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  if (version > LatestSchemaVersion()) return TooNew(version);
  if (version < LatestSchemaVersion()) {
    return absl::FailedPreconditionError(absl::StrCat("database schema version ", version,
                                                      " is older than this memfleet build (", LatestSchemaVersion(),
                                                      "): open it read-write once to upgrade it"));
  }
  return absl::OkStatus();
}

}  // namespace memfleet::storage
