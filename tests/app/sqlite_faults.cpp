#include "sqlite_faults.h"

#include <QByteArray>
#include <QDir>
#include <QFile>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace storefault {
namespace {

// The state the hooks read. Guarded by `mutex` (SQLite may call from several threads).
struct State {
  std::mutex mutex;
  bool active = false;
  std::string folder;  // with a trailing '/'
  FaultyDisk::Mode mode = FaultyDisk::Mode::kHealthy;
  std::set<int> fds;  // descriptors of files under `folder`, opened through SQLite
  std::atomic<int> faults{0};
};
State& state() {
  static State s;
  return s;
}

// The system calls SQLite had before the hooks (xGetSystemCall), by name.
using OpenFn = int (*)(const char*, int, int);
using CloseFn = int (*)(int);
using AccessFn = int (*)(const char*, int);
using WriteFn = ssize_t (*)(int, const void*, size_t);
using PwriteFn = ssize_t (*)(int, const void*, size_t, off_t);
using Pwrite64Fn = ssize_t (*)(int, const void*, size_t, off64_t);
using FtruncateFn = int (*)(int, off_t);
using FallocateFn = int (*)(int, off_t, off_t);
using PathFn = int (*)(const char*);
using MkdirFn = int (*)(const char*, mode_t);
using FchmodFn = int (*)(int, mode_t);
using FchownFn = int (*)(int, uid_t, gid_t);

struct Real {
  OpenFn open = nullptr;
  CloseFn close = nullptr;
  AccessFn access = nullptr;
  WriteFn write = nullptr;
  PwriteFn pwrite = nullptr;
  Pwrite64Fn pwrite64 = nullptr;
  FtruncateFn ftruncate = nullptr;
  FallocateFn fallocate = nullptr;
  PathFn unlink = nullptr, rmdir = nullptr;
  MkdirFn mkdir = nullptr;
  FchmodFn fchmod = nullptr;
  FchownFn fchown = nullptr;
};
Real g_real;

bool underFolder(const char* path) {
  State& s = state();
  return s.active && path && std::string(path).rfind(s.folder, 0) == 0;
}

// The mode for a call on `path` (kHealthy when it is not under the folder).
FaultyDisk::Mode modeForPath(const char* path) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return underFolder(path) ? s.mode : FaultyDisk::Mode::kHealthy;
}
FaultyDisk::Mode modeForFd(int fd) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.active && s.fds.count(fd) ? s.mode : FaultyDisk::Mode::kHealthy;
}

int fail(int error) {
  ++state().faults;
  errno = error;
  return -1;
}

// True when writing `n` bytes at `offset` of `fd` would make the file longer.
bool grows(int fd, off64_t offset, size_t n) {
  struct stat st {};
  return ::fstat(fd, &st) != 0 || offset + off64_t(n) > st.st_size;
}

// The fault (an errno) for a write of n bytes at offset, or 0.
int writeFault(int fd, off64_t offset, size_t n) {
  switch (modeForFd(fd)) {
    case FaultyDisk::Mode::kReadOnly:
      return EROFS;
    case FaultyDisk::Mode::kFull:
      return grows(fd, offset, n) ? ENOSPC : 0;
    case FaultyDisk::Mode::kIoError:
      return EIO;
    case FaultyDisk::Mode::kHealthy:
      break;
  }
  return 0;
}

int hookOpen(const char* path, int flags, int mode) {
  const bool writing = (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
  if (writing && modeForPath(path) == FaultyDisk::Mode::kReadOnly) return fail(EROFS);
  const int fd = g_real.open(path, flags, mode);
  if (fd >= 0) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (underFolder(path))
      s.fds.insert(fd);
    else
      s.fds.erase(fd);
  }
  return fd;
}
int hookClose(int fd) {
  {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.fds.erase(fd);
  }
  return g_real.close(fd);
}
int hookAccess(const char* path, int how) {
  if ((how & W_OK) && modeForPath(path) == FaultyDisk::Mode::kReadOnly) return fail(EROFS);
  return g_real.access(path, how);
}
ssize_t hookWrite(int fd, const void* buf, size_t n) {
  if (const int e = writeFault(fd, ::lseek64(fd, 0, SEEK_CUR), n)) return fail(e);
  return g_real.write(fd, buf, n);
}
ssize_t hookPwrite(int fd, const void* buf, size_t n, off_t offset) {
  if (const int e = writeFault(fd, offset, n)) return fail(e);
  return g_real.pwrite(fd, buf, n, offset);
}
ssize_t hookPwrite64(int fd, const void* buf, size_t n, off64_t offset) {
  if (const int e = writeFault(fd, offset, n)) return fail(e);
  return g_real.pwrite64(fd, buf, n, offset);
}
int hookFtruncate(int fd, off_t length) {
  if (modeForFd(fd) == FaultyDisk::Mode::kReadOnly) return fail(EROFS);
  if (modeForFd(fd) == FaultyDisk::Mode::kIoError) return fail(EIO);
  return g_real.ftruncate(fd, length);
}
int hookFallocate(int fd, off_t offset, off_t length) {
  // posix_fallocate's convention: the error is returned, errno is not set.
  if (const int e = writeFault(fd, offset, size_t(length))) {
    ++state().faults;
    return e;
  }
  return g_real.fallocate(fd, offset, length);
}
int hookUnlink(const char* path) {
  if (modeForPath(path) == FaultyDisk::Mode::kReadOnly) return fail(EROFS);
  return g_real.unlink(path);
}
int hookRmdir(const char* path) {
  if (modeForPath(path) == FaultyDisk::Mode::kReadOnly) return fail(EROFS);
  return g_real.rmdir(path);
}
int hookMkdir(const char* path, mode_t mode) {
  if (modeForPath(path) == FaultyDisk::Mode::kReadOnly) return fail(EROFS);
  return g_real.mkdir(path, mode);
}
int hookFchmod(int fd, mode_t mode) {
  if (modeForFd(fd) == FaultyDisk::Mode::kReadOnly) return fail(EROFS);
  return g_real.fchmod(fd, mode);
}
int hookFchown(int fd, uid_t uid, gid_t gid) {
  if (modeForFd(fd) == FaultyDisk::Mode::kReadOnly) return fail(EROFS);
  return g_real.fchown(fd, uid, gid);
}

// Replaces SQLite's call `name` by `hook`, keeping the original in `real`; fails the test
// program loudly when SQLite has no such call (a build without it would test nothing).
template <typename Fn>
void replace(sqlite3_vfs* vfs, const char* name, Fn hook, Fn& real, bool required) {
  const sqlite3_syscall_ptr current = vfs->xGetSystemCall(vfs, name);
  if (!current) {
    if (!required) return;
    std::fprintf(stderr, "sqlite_faults: SQLite's unix VFS has no system call '%s'\n", name);
    std::abort();
  }
  real = reinterpret_cast<Fn>(current);
  vfs->xSetSystemCall(vfs, name, reinterpret_cast<sqlite3_syscall_ptr>(hook));
}

void installOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    sqlite3_initialize();
    sqlite3_vfs* vfs = sqlite3_vfs_find("unix");
    if (!vfs || vfs->iVersion < 3 || !vfs->xSetSystemCall) {
      std::fprintf(stderr, "sqlite_faults: no unix VFS with xSetSystemCall in this SQLite\n");
      std::abort();
    }
    replace(vfs, "open", &hookOpen, g_real.open, true);
    replace(vfs, "close", &hookClose, g_real.close, true);
    replace(vfs, "access", &hookAccess, g_real.access, true);
    replace(vfs, "write", &hookWrite, g_real.write, true);
    replace(vfs, "pwrite", &hookPwrite, g_real.pwrite, false);
    replace(vfs, "pwrite64", &hookPwrite64, g_real.pwrite64, false);
    replace(vfs, "ftruncate", &hookFtruncate, g_real.ftruncate, true);
    replace(vfs, "fallocate", &hookFallocate, g_real.fallocate, false);
    replace(vfs, "unlink", &hookUnlink, g_real.unlink, true);
    replace(vfs, "rmdir", &hookRmdir, g_real.rmdir, true);
    replace(vfs, "mkdir", &hookMkdir, g_real.mkdir, true);
    replace(vfs, "fchmod", &hookFchmod, g_real.fchmod, true);
    replace(vfs, "fchown", &hookFchown, g_real.fchown, false);
  });
}

}  // namespace

FaultyDisk::FaultyDisk(const QString& folder) {
  installOnce();
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.folder = QFile::encodeName(QDir::cleanPath(QDir(folder).absolutePath())).toStdString() + "/";
  s.mode = Mode::kHealthy;
  s.fds.clear();
  s.faults = 0;
  s.active = true;
}

FaultyDisk::~FaultyDisk() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.active = false;
  s.mode = Mode::kHealthy;
  s.fds.clear();
}

void FaultyDisk::setMode(Mode mode) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.mode = mode;
}

FaultyDisk::Mode FaultyDisk::mode() const {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.mode;
}

int FaultyDisk::faultsInjected() const { return state().faults; }

}  // namespace storefault
