#include "agent/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_log.h"
#include "common/scoped_dir.h"
#include "common/scoped_fd.h"

namespace memfleet::agent {
namespace {

constexpr char kMagic[] = "MFSPOOL1";
constexpr size_t kMagicBytes = 8;
constexpr char kSuffix[] = ".cap";
constexpr char kTmpSuffix[] = ".tmp";
constexpr uint32_t kMaxMetaBytes = 16 << 10;
// magic + meta length + blob length + crc
constexpr uint64_t kFramingBytes = kMagicBytes + 4 + 8 + 4;

std::string ErrnoText(int err) { return absl::StrCat(strerror(err), " (errno ", err, ")"); }

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetLE(std::string_view in, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  return v;
}

uint32_t Crc32(std::string_view data) {
  return static_cast<uint32_t>(
      crc32_z(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
}

std::string EncodeMeta(const std::string& capture_id, const std::string& captured_at, const std::string& sweep_id) {
  std::string meta;
  for (const std::string* s : {&capture_id, &captured_at, &sweep_id}) {
    PutU32(meta, static_cast<uint32_t>(s->size()));
    meta.append(*s);
  }
  return meta;
}

// The meta fields, or an error naming what is wrong.
absl::Status DecodeMeta(std::string_view meta, Spool::Entry* entry) {
  std::string* fields[] = {&entry->capture_id, &entry->captured_at, &entry->sweep_id};
  size_t pos = 0;
  for (std::string* field : fields) {
    if (meta.size() - pos < 4) return absl::DataLossError("truncated header");
    uint64_t len = GetLE(meta, pos, 4);
    pos += 4;
    if (len > meta.size() - pos) return absl::DataLossError("header field overruns the header");
    field->assign(meta.substr(pos, len));
    pos += len;
  }
  if (pos != meta.size()) return absl::DataLossError("trailing bytes in the header");
  if (entry->capture_id.empty()) return absl::DataLossError("empty capture id");
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("cannot write ", path, ": ", ErrnoText(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// tmp + fsync + rename + fsync(dir), all relative to the spool's descriptor: after a crash the file is
// either the old one or the new one, whole. The tmp name is created afresh (O_EXCL, O_NOFOLLOW): whatever
// lay there — a stale tmp, a planted symlink — is unlinked, never written through.
absl::Status WriteFileAtomically(int dir_fd, const std::string& dir, const std::string& name, std::string_view data) {
  std::string tmp = name + kTmpSuffix;
  std::string tmp_path = absl::StrCat(dir, "/", tmp);
  if (unlinkat(dir_fd, tmp.c_str(), 0) != 0 && errno != ENOENT) {
    return absl::InternalError(absl::StrCat("cannot remove the stale ", tmp_path, ": ", ErrnoText(errno)));
  }
  ScopedFd fd(openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("cannot create ", tmp_path, ": ", ErrnoText(errno)));
  absl::Status s = WriteAll(fd.get(), data, tmp_path);
  if (s.ok() && fsync(fd.get()) != 0) {
    s = absl::InternalError(absl::StrCat("cannot sync ", tmp_path, ": ", ErrnoText(errno)));
  }
  if (close(fd.release()) != 0 && s.ok()) {
    s = absl::InternalError(absl::StrCat("cannot close ", tmp_path, ": ", ErrnoText(errno)));
  }
  if (s.ok() && renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    s = absl::InternalError(absl::StrCat("cannot rename ", tmp_path, ": ", ErrnoText(errno)));
  }
  if (!s.ok()) {
    unlinkat(dir_fd, tmp.c_str(), 0);
    return s;
  }
  fsync(dir_fd);
  return absl::OkStatus();
}

// Why the entry `st` (from lstat) is not a spool file of this agent's, or "" when it is one: the agent
// sends what it finds under its device's token, so it reads only regular files it wrote itself.
std::string ForeignEntryReason(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "a symlink (not followed)";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_uid != geteuid())
    return absl::StrCat("owned by uid ", st.st_uid, ", not by this agent (uid ", geteuid(), ")");
  return "";
}

// Reads at most `max_bytes` of the spool file `name`; *file_size gets its size. Refuses (DataLoss) what
// ForeignEntryReason refuses, and never blocks on a FIFO.
absl::StatusOr<std::string> ReadPrefix(int dir_fd, const std::string& dir, const std::string& name, uint64_t max_bytes,
                                       uint64_t* file_size) {
  ScopedFd fd(openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) {
    if (errno == ELOOP) return absl::DataLossError("a symlink (not followed)");
    return absl::InternalError(absl::StrCat("cannot open ", dir, "/", name, ": ", ErrnoText(errno)));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return absl::DataLossError(absl::StrCat("cannot stat: ", ErrnoText(errno)));
  if (std::string reason = ForeignEntryReason(st); !reason.empty()) return absl::DataLossError(reason);
  *file_size = static_cast<uint64_t>(st.st_size);
  std::string out(static_cast<size_t>(std::min<uint64_t>(*file_size, max_bytes)), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = read(fd.get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

// mkdir -p with mode 0700 for every folder it creates; folders that exist are left as they are.
absl::Status MakePrivateDirs(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string prefix = dir.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("cannot create the spool folder ", dir, ": ", prefix, ": ", ErrnoText(errno)));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

// A descriptor of the spool folder, refused unless it is a real folder (not a symlink) owned by this
// agent's uid and writable by nobody else: another user who could write there could plant captures the
// agent would send under its device's token, or symlinks it would write through.
absl::StatusOr<ScopedFd> OpenPrivateDir(const std::string& dir) {
  if (absl::Status s = MakePrivateDirs(dir); !s.ok()) return s;
  ScopedFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    struct stat st {};
    if (lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("the spool folder ", dir,
                       " is a symlink; give the folder itself (--spool), a link could lead the "
                       "agent's writes anywhere"));
    }
    return absl::InternalError(absl::StrCat("cannot open the spool folder ", dir, ": ", ErrnoText(err)));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    return absl::InternalError(absl::StrCat("cannot stat the spool folder ", dir, ": ", ErrnoText(errno)));
  }
  if (st.st_uid != geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the spool folder ", dir, " is owned by uid ", st.st_uid, ", not by this agent (uid ", geteuid(),
        "): its owner could plant captures or symlinks in it. Remove it, or give a folder of your own (--spool)"));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return absl::FailedPreconditionError(
        absl::StrCat("the spool folder ", dir, " is writable by its group or by others (mode ", mode,
                     "): they could plant captures or symlinks in it. chmod 700 it, or give another folder (--spool)"));
  }
  return fd;
}

// Checks the framing of a spool file from its first bytes and size; fills `entry` (not size/order).
// Returns the offset of the blob and its length.
absl::Status ParseFraming(std::string_view head, uint64_t file_size, Spool::Entry* entry, uint64_t* blob_offset,
                          uint64_t* blob_len) {
  if (file_size < kFramingBytes || head.size() < kMagicBytes + 4) return absl::DataLossError("truncated file");
  if (head.substr(0, kMagicBytes) != std::string_view(kMagic, kMagicBytes)) return absl::DataLossError("bad magic");
  uint64_t meta_len = GetLE(head, kMagicBytes, 4);
  if (meta_len > kMaxMetaBytes) return absl::DataLossError("oversized header");
  uint64_t meta_end = kMagicBytes + 4 + meta_len;
  if (head.size() < meta_end + 8) return absl::DataLossError("truncated header");
  absl::Status s = DecodeMeta(head.substr(kMagicBytes + 4, meta_len), entry);
  if (!s.ok()) return s;
  *blob_len = GetLE(head, meta_end, 8);
  *blob_offset = meta_end + 8;
  // Overflow-safe form of file_size != blob_offset + blob_len + 4.
  if (file_size < *blob_offset + 4 || file_size - *blob_offset - 4 != *blob_len) {
    return absl::DataLossError("file size does not match its header (truncated?)");
  }
  return absl::OkStatus();
}

bool ParseOrderName(std::string_view name, uint64_t* order) {
  constexpr size_t kDigits = 20;
  if (name.size() != kDigits + strlen(kSuffix) || name.substr(kDigits) != kSuffix) return false;
  std::string_view digits = name.substr(0, kDigits);
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  return absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), order) && *order > 0;
}

uint64_t ReadCounter(int dir_fd, const std::string& dir, const std::string& name) {
  std::string path = absl::StrCat(dir, "/", name);
  uint64_t size = 0;
  absl::StatusOr<std::string> text = ReadPrefix(dir_fd, dir, name, 64, &size);
  if (!text.ok()) {
    if (!absl::IsInternal(text.status())) {  // exists, but is not ours to trust
      LogLine(absl::StrCat("spool: ignoring the counter file ", path, ": ", text.status().message()));
    }
    return 0;
  }
  std::string_view t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
  uint64_t v = 0;
  if (!absl::SimpleAtoi(absl::string_view(t.data(), t.size()), &v)) {
    LogLine(absl::StrCat("spool: ignoring unreadable counter file ", path));
    return 0;
  }
  return v;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(Options options) {
  if (options.dir.empty()) return absl::InvalidArgumentError("spool folder not set");
  while (options.dir.size() > 1 && options.dir.back() == '/') options.dir.pop_back();
  absl::StatusOr<ScopedFd> dir_fd = OpenPrivateDir(options.dir);
  if (!dir_fd.ok()) return dir_fd.status();
  std::unique_ptr<Spool> spool(new Spool(std::move(options), *std::move(dir_fd)));
  absl::Status s = spool->Scan();
  if (!s.ok()) return s;
  return spool;
}

std::string Spool::FileName(uint64_t order) {
  char name[32];
  snprintf(name, sizeof(name), "%020llu", static_cast<unsigned long long>(order));
  return absl::StrCat(name, kSuffix);
}

std::string Spool::FilePath(uint64_t order) const { return absl::StrCat(options_.dir, "/", FileName(order)); }

absl::Status Spool::Scan() {
  absl::MutexLock lock(&mu_);
  // A descriptor of its own: fdopendir takes it over, and its offset is not the spool's.
  std::vector<std::string> names;
  {
    ScopedDir listing(ScopedFd(openat(dir_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
    if (!listing.valid()) {
      return absl::InternalError(
          absl::StrCat("cannot list the spool folder ", options_.dir, ": ", ErrnoText(listing.error())));
    }
    while (struct dirent* e = readdir(listing.get())) names.emplace_back(e->d_name);
  }

  dropped_ = ReadCounter(dir_fd_.get(), options_.dir, "dropped");
  sequence_ = ReadCounter(dir_fd_.get(), options_.dir, "sequence");
  uint64_t lost = 0;
  for (const std::string& name : names) {
    std::string path = absl::StrCat(options_.dir, "/", name);
    if (name.size() > strlen(kTmpSuffix) &&
        name.compare(name.size() - strlen(kTmpSuffix), std::string::npos, kTmpSuffix) == 0) {
      // A write that a crash interrupted: the capture never made it into the spool. (unlinkat removes
      // a symlink itself, never its target.)
      unlinkat(dir_fd_.get(), name.c_str(), 0);
      continue;
    }
    uint64_t order = 0;
    if (!ParseOrderName(name, &order)) continue;
    struct stat st {};
    if (fstatat(dir_fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (std::string reason = ForeignEntryReason(st); !reason.empty()) {
      // Not a capture this agent spooled: neither sent nor deleted, and not counted as one of its drops.
      LogLine(absl::StrCat("spool: ignoring ", path, ": ", reason));
      continue;
    }
    uint64_t file_size = 0;
    Entry entry;
    uint64_t blob_offset = 0, blob_len = 0;
    absl::StatusOr<std::string> head =
        ReadPrefix(dir_fd_.get(), options_.dir, name, kMagicBytes + 4 + kMaxMetaBytes + 8, &file_size);
    absl::Status s = head.ok() ? ParseFraming(*head, file_size, &entry, &blob_offset, &blob_len) : head.status();
    if (s.ok() && order_of_.count(entry.capture_id) > 0) s = absl::DataLossError("duplicate capture id");
    if (!s.ok()) {
      LogLine(absl::StrCat("spool: skipping corrupt file ", path, " (", s.message(), "); deleted, counted as dropped"));
      unlinkat(dir_fd_.get(), name.c_str(), 0);
      ++lost;
      continue;
    }
    entry.size_bytes = file_size;
    entry.order = order;
    next_order_ = std::max(next_order_, order + 1);
    total_bytes_ += file_size;
    order_of_[entry.capture_id] = order;
    by_order_[order] = std::move(entry);
  }
  if (lost > 0) CountDroppedLocked(lost);
  return absl::OkStatus();
}

absl::Status Spool::Put(const std::string& capture_id, const std::string& captured_at, const std::string& sweep_id,
                        std::string_view blob) {
  if (capture_id.empty()) return absl::InvalidArgumentError("capture without an id");
  std::string meta = EncodeMeta(capture_id, captured_at, sweep_id);
  if (meta.size() > kMaxMetaBytes) return absl::InvalidArgumentError("capture id, time or sweep id too long");
  uint64_t file_size = kFramingBytes + meta.size() + blob.size();

  absl::MutexLock lock(&mu_);
  auto existing = order_of_.find(capture_id);
  if (existing != order_of_.end()) RemoveLocked(existing->second);
  if (file_size > options_.max_bytes) {
    CountDroppedLocked(1);
    return absl::ResourceExhaustedError(absl::StrCat("capture ", capture_id, " (", file_size,
                                                     " bytes) is larger than the whole spool (", options_.max_bytes,
                                                     " bytes); raise --spool-max-mb"));
  }
  EvictForLocked(file_size);

  std::string data;
  data.reserve(static_cast<size_t>(file_size));
  data.append(kMagic, kMagicBytes);
  PutU32(data, static_cast<uint32_t>(meta.size()));
  data.append(meta);
  PutU64(data, blob.size());
  data.append(blob.data(), blob.size());
  PutU32(data, Crc32(std::string_view(data).substr(kMagicBytes)));

  uint64_t order = next_order_++;
  absl::Status s = WriteFileAtomically(dir_fd_.get(), options_.dir, FileName(order), data);
  if (!s.ok()) {
    CountDroppedLocked(1);
    return s;
  }
  Entry entry{capture_id, captured_at, sweep_id, file_size, order};
  total_bytes_ += file_size;
  order_of_[capture_id] = order;
  by_order_[order] = std::move(entry);
  return absl::OkStatus();
}

void Spool::EvictForLocked(uint64_t file_size) {
  uint64_t evicted = 0;
  while (!by_order_.empty() && total_bytes_ + file_size > options_.max_bytes) {
    auto oldest = by_order_.begin();
    const std::string id = oldest->second.capture_id;
    RemoveLocked(oldest->first);
    if (in_flight_.erase(id) > 0) {
      LogLine(absl::StrCat("spool full: deleting the oldest capture ", id,
                           " while it is sent; dropped only if the server does not ack it"));
      deleted_in_flight_.insert(id);
      continue;
    }
    LogLine(absl::StrCat("spool full: dropping the oldest capture ", id));
    ++evicted;
  }
  if (evicted > 0) CountDroppedLocked(evicted);
}

std::vector<Spool::Entry> Spool::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<Entry> out;
  out.reserve(by_order_.size());
  for (const auto& [order, entry] : by_order_) out.push_back(entry);
  return out;
}

bool Spool::Contains(const std::string& capture_id) const {
  absl::MutexLock lock(&mu_);
  return order_of_.count(capture_id) > 0;
}

absl::StatusOr<Spool::Loaded> Spool::Load(const std::string& capture_id) {
  absl::MutexLock lock(&mu_);
  auto it = order_of_.find(capture_id);
  if (it == order_of_.end()) return absl::NotFoundError(absl::StrCat("capture ", capture_id, " is not spooled"));
  uint64_t order = it->second;
  std::string path = FilePath(order);
  uint64_t file_size = 0;
  absl::StatusOr<std::string> data =
      ReadPrefix(dir_fd_.get(), options_.dir, FileName(order), by_order_[order].size_bytes + 1, &file_size);
  Loaded loaded;
  uint64_t blob_offset = 0, blob_len = 0;
  absl::Status s = data.ok() ? ParseFraming(*data, file_size, &loaded.entry, &blob_offset, &blob_len) : data.status();
  if (s.ok() && data->size() != file_size) s = absl::DataLossError("file changed while read");
  if (s.ok() && loaded.entry.capture_id != capture_id) s = absl::DataLossError("file holds another capture");
  if (s.ok()) {
    uint32_t stored_crc = static_cast<uint32_t>(GetLE(*data, data->size() - 4, 4));
    std::string_view covered = std::string_view(*data).substr(kMagicBytes, data->size() - kMagicBytes - 4);
    if (Crc32(covered) != stored_crc) s = absl::DataLossError("checksum mismatch");
  }
  if (!s.ok()) {
    LogLine(absl::StrCat("spool: capture ", capture_id, " in ", path, " is unreadable (", s.message(),
                         "); deleted, counted as dropped"));
    RemoveLocked(order);
    CountDroppedLocked(1);
    return absl::DataLossError(absl::StrCat("spooled capture ", capture_id, ": ", s.message()));
  }
  loaded.entry.size_bytes = file_size;
  loaded.entry.order = order;
  loaded.blob = data->substr(static_cast<size_t>(blob_offset), static_cast<size_t>(blob_len));
  return loaded;
}

absl::Status Spool::Remove(const std::string& capture_id) {
  absl::MutexLock lock(&mu_);
  in_flight_.erase(capture_id);
  deleted_in_flight_.erase(capture_id);  // acked (or refused for good): not lost to the full spool
  auto it = order_of_.find(capture_id);
  if (it != order_of_.end()) RemoveLocked(it->second);
  return absl::OkStatus();
}

void Spool::Discard(const std::string& capture_id) {
  absl::MutexLock lock(&mu_);
  in_flight_.erase(capture_id);
  if (deleted_in_flight_.erase(capture_id) > 0) {
    CountDroppedLocked(1);
    return;
  }
  auto it = order_of_.find(capture_id);
  if (it == order_of_.end()) return;
  RemoveLocked(it->second);
  CountDroppedLocked(1);
}

void Spool::MarkInFlight(const std::string& capture_id) {
  absl::MutexLock lock(&mu_);
  if (order_of_.count(capture_id) > 0) in_flight_.insert(capture_id);
}

void Spool::SendFailed(const std::string& capture_id) {
  absl::MutexLock lock(&mu_);
  in_flight_.erase(capture_id);
  if (deleted_in_flight_.erase(capture_id) == 0) return;
  LogLine(absl::StrCat("spool full: dropping the oldest capture ", capture_id,
                       " (deleted while it was sent, and not acked)"));
  CountDroppedLocked(1);
}

void Spool::RemoveLocked(uint64_t order) {
  auto it = by_order_.find(order);
  if (it == by_order_.end()) return;
  if (unlinkat(dir_fd_.get(), FileName(order).c_str(), 0) != 0 && errno != ENOENT) {
    LogLine(absl::StrCat("spool: cannot delete ", FilePath(order), ": ", ErrnoText(errno)));
  }
  total_bytes_ -= std::min(total_bytes_, it->second.size_bytes);
  order_of_.erase(it->second.capture_id);
  by_order_.erase(it);
}

uint64_t Spool::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

void Spool::ClearDropped(uint64_t reported) {
  absl::MutexLock lock(&mu_);
  uint64_t before = dropped_;
  dropped_ -= std::min(dropped_, reported);
  if (dropped_ != before) PersistCounterLocked("dropped", dropped_);
}

void Spool::CountDroppedLocked(uint64_t n) {
  dropped_ += n;
  PersistCounterLocked("dropped", dropped_);
}

uint64_t Spool::NextSequence() {
  absl::MutexLock lock(&mu_);
  ++sequence_;
  PersistCounterLocked("sequence", sequence_);
  return sequence_;
}

void Spool::PersistCounterLocked(const char* name, uint64_t value) {
  absl::Status s = WriteFileAtomically(dir_fd_.get(), options_.dir, name, absl::StrCat(value, "\n"));
  if (!s.ok()) LogLine(absl::StrCat("spool: cannot persist the ", name, " counter: ", s.message()));
}

size_t Spool::count() const {
  absl::MutexLock lock(&mu_);
  return by_order_.size();
}

uint64_t Spool::total_bytes() const {
  absl::MutexLock lock(&mu_);
  return total_bytes_;
}

}  // namespace memfleet::agent
