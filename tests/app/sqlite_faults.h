// Disk faults under SQLite, for the chat-store tests, on any machine (no mount(), no root): the
// system calls of SQLite's unix VFS (open, write, pwrite, ftruncate, fallocate, unlink, mkdir,
// access, fchmod, ...) are replaced through sqlite3_vfs::xSetSystemCall, so that for the files
// under one folder they fail as a real disk would fail them. SQLite's own error handling then runs
// exactly as on such a disk: an open for writing that gets EROFS falls back to reading (and
// answers SQLITE_READONLY at the first write), ENOSPC answers SQLITE_FULL, EIO SQLITE_IOERR.
// The app reaches SQLite through Qt's QSQLITE driver, which uses the same (system) libsqlite3 as
// this code, so its connections see the faults too. Only SQLite is affected: files that the app
// writes itself (QFile, QSaveFile) are not.
#pragma once

#include <QString>

namespace storefault {

/// The faults of the "disk" holding one folder. One FaultyDisk at a time; the hooks stay
/// installed for the process, and do nothing once it is gone.
class FaultyDisk {
 public:
  enum class Mode {
    kHealthy,   ///< every call goes through
    kReadOnly,  ///< as a file system mounted read-only: opening for writing, creating, writing,
                ///< truncating, unlinking, making folders, fchmod/fchown and access(W_OK) fail
                ///< with EROFS
    kFull,      ///< as a full disk: a write, pwrite or fallocate that would make a file longer
                ///< fails with ENOSPC (writes over existing bytes still work)
    kIoError,   ///< as a failing disk: every write and pwrite fails with EIO (reads work)
  };

  /// Watches the files under `folder` (an absolute path; symlinks are not followed); kHealthy.
  explicit FaultyDisk(const QString& folder);
  ~FaultyDisk();
  FaultyDisk(const FaultyDisk&) = delete;
  FaultyDisk& operator=(const FaultyDisk&) = delete;

  /// From now on (also for files already open).
  void setMode(Mode mode);
  Mode mode() const;
  /// Calls that failed because of this disk since it was made (the test can check that the fault
  /// was really met).
  int faultsInjected() const;
};

}  // namespace storefault
