#include "core/store/store_integrity.h"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace voxcol::store {

namespace {

constexpr char kFormatKey[] = "m:format";
constexpr char kMarkFile[] = "VOXCOL_DURABLE_VERSION";

// Writes all of `data` to `fd`; false on any error.
bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

bool SyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string DamagedStoreAdvice() {
  return "nothing was served from it. Restore the data directory from a checkpoint (voxcol "
         "checkpoint; docs/operations.md, Backup) or rebuild it from a replica; "
         "docs/reliability.md lists what each damaged file means";
}

absl::Status CheckFormat(rocksdb::DB& db, const std::string& dir) {
  std::string value;
  rocksdb::Status s = db.Get(rocksdb::ReadOptions(), kFormatKey, &value);
  if (s.IsNotFound()) {
    rocksdb::WriteOptions write;
    write.sync = true;
    s = db.Put(write, kFormatKey, std::to_string(kStoreFormat));
    if (s.ok()) return absl::OkStatus();
  }
  if (!s.ok()) {
    return absl::DataLossError(absl::StrCat("store ", dir, ": cannot read or record its format: ",
                                            s.ToString(), "; ", DamagedStoreAdvice()));
  }
  uint32_t format = 0;
  if (!absl::SimpleAtoi(value, &format) || format == 0) {
    return absl::DataLossError(absl::StrCat("store ", dir, ": unreadable format record '", value,
                                            "'; ", DamagedStoreAdvice()));
  }
  if (format > kStoreFormat) {
    return absl::FailedPreconditionError(
        absl::StrCat("store ", dir, " has on-disk format ", format,
                     ", newer than this voxcol_server reads (", kStoreFormat,
                     "): it was written by a later release; run that release or a newer one "
                     "(a store is never converted back)"));
  }
  return absl::OkStatus();
}

absl::Status VerifyTables(rocksdb::DB& db, const std::string& dir) {
  rocksdb::Status s = db.VerifyChecksum();
  if (s.ok()) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("store ", dir, " is damaged: ", s.ToString(), "; ", DamagedStoreAdvice()));
}

DurableVersionMark::DurableVersionMark(std::string dir)
    : dir_(std::move(dir)), path_(dir_ + "/" + kMarkFile) {}

absl::Status DurableVersionMark::Check(uint64_t stored) const {
  std::ifstream in(path_);
  if (!in) return absl::OkStatus();
  std::stringstream text;
  text << in.rdbuf();
  uint64_t marked = 0;
  const std::string content = text.str();
  absl::string_view line = content;
  if (!absl::ConsumePrefix(&line, "version=") || !absl::ConsumeSuffix(&line, "\n") ||
      !absl::SimpleAtoi(line, &marked)) {
    return absl::DataLossError(absl::StrCat(
        path_, " is unreadable; the store cannot show that it still has every acknowledged edit. ",
        "If the store's own files are intact (they opened), delete this file to accept them as "
        "they are; otherwise ",
        DamagedStoreAdvice()));
  }
  if (stored >= marked) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "store ", dir_, " recovered world version ", stored, " but version ", marked,
      " was durable before (", path_,
      "): acknowledged edits are missing (a truncated or damaged MANIFEST or log file, a deleted "
      "table file, or older files put in place); ",
      DamagedStoreAdvice()));
}

absl::Status DurableVersionMark::Write(uint64_t version) const {
  const std::string temp = path_ + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot write ", temp));
  const bool written = WriteAll(fd, absl::StrCat("version=", version, "\n")) && ::fsync(fd) == 0;
  ::close(fd);
  if (!written || std::rename(temp.c_str(), path_.c_str()) != 0 ||
      !SyncPath(dir_, O_RDONLY | O_DIRECTORY)) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path_));
  }
  return absl::OkStatus();
}

}  // namespace voxcol::store
