#include "app/store/store_health.h"

#include <QCoreApplication>
#include <QScopeGuard>

#include <utility>

StoreHealth::StoreHealth(ChatStore* store) : QObject(store), store_(store) {
  retryTimer_.setInterval(kRetryIntervalMs);
  connect(&retryTimer_, &QTimer::timeout, this, [this] {
    if (pending_.isEmpty() && !store_->isReadOnly() && !problemMayPass()) {
      retryTimer_.stop();  // nothing to write, and nothing shown that a write lock would end
      return;
    }
    retryNow();
  });
}

namespace {
/// Why, as a clause after "could not be saved: ".
QString reason(StoreError::Kind kind) {
  switch (kind) {
    case StoreError::Kind::kBusy:
      return StoreHealth::tr("another program is using the chat history file");
    case StoreError::Kind::kReadOnly:
      return StoreHealth::tr("the disk or the file is read-only");
    case StoreError::Kind::kDiskFull:
      return StoreHealth::tr("the disk is full");
    case StoreError::Kind::kIoError:
      return StoreHealth::tr("the disk reported an error");
    case StoreError::Kind::kCorrupt:
      return StoreHealth::tr("the file is damaged");
    case StoreError::Kind::kCannotOpen:
      return StoreHealth::tr("the file or its folder cannot be opened");
    case StoreError::Kind::kPermissionDenied:
      return StoreHealth::tr("permission denied");
    case StoreError::Kind::kTooNew:
      return StoreHealth::tr("it was written by a newer version of PagedChat");
    case StoreError::Kind::kOther:
    case StoreError::Kind::kInvalidImport:
      break;
  }
  return StoreHealth::tr("an unexpected error occurred");
}

/// A problem the user can wait out or fix outside the app (a lock, space, permissions): the
/// waiting writes are retried and the message says so.
bool transient(StoreError::Kind kind) {
  return kind == StoreError::Kind::kBusy || kind == StoreError::Kind::kReadOnly ||
         kind == StoreError::Kind::kDiskFull || kind == StoreError::Kind::kIoError ||
         kind == StoreError::Kind::kPermissionDenied;
}

/// `text` (the system's words, "Not a directory") as a clause: a capital first letter lowered
/// when the word goes on in lower case (not in "SQLite" or a path).
QString asClause(QString text) {
  if (text.size() > 1 && text[0].isUpper() && text[1].isLower()) text[0] = text[0].toLower();
  return text;
}
}  // namespace

QString StoreHealth::userMessage(const StoreError& e) {
  if (e.kind() == StoreError::Kind::kInvalidImport) return QString::fromStdString(e.detail());
  // The history could not be opened (at start, or its file or folder at all): said so, not
  // "saved" or "read", with why (the system's reason when known; "read-only" only for a
  // read-only disk or file, which is kReadOnly; permission denied is its own).
  if (e.isOpening() || e.kind() == StoreError::Kind::kCannotOpen || e.kind() == StoreError::Kind::kPermissionDenied) {
    if (e.kind() != StoreError::Kind::kCannotOpen)
      return tr("The chat history could not be opened: %1.").arg(reason(e.kind()));
    return e.reason().empty()
               ? tr("The chat history could not be opened.")
               : tr("The chat history could not be opened: %1.").arg(asClause(QString::fromStdString(e.reason())));
  }
  const QString why = reason(e.kind());
  return e.isWrite() ? tr("The chat history could not be saved: %1.").arg(why)
                     : tr("The chat history could not be read: %1.").arg(why);
}

QString StoreHealth::bannerMessage(const StoreError& e, std::optional<Kept> kept) {
  // Only a write kept for a retry is promised to be kept (a refused question is not: it stays in
  // its input box, and the caller says so).
  if (!kept || !e.isWrite() || !transient(e.kind())) return userMessage(e);
  if (*kept == Kept::kCleanUp) return userMessage(e) + QLatin1Char(' ') + tr("PagedChat tries again.");
  return userMessage(e) + QLatin1Char(' ') +
         tr("PagedChat keeps what you wrote and tries again; nothing is lost while it stays open.");
}

int StoreHealth::usersWritesWaiting() const {
  int n = 0;
  for (const Pending& p : pending_)
    if (p.kept == Kept::kUsersWrite) ++n;
  return n;
}

std::optional<StoreHealth::Kept> StoreHealth::keptNow() const {
  if (pending_.isEmpty()) return std::nullopt;
  for (const Pending& p : pending_)
    if (p.kept == Kept::kUsersWrite) return Kept::kUsersWrite;
  return Kept::kCleanUp;
}

QString StoreHealth::technicalDetail(const StoreError& e) { return QString::fromStdString(e.detail()); }

QString StoreHealth::report(const StoreError& e, const QString& key, std::function<void()> retry, Kept kept) {
  qWarning("pagedchat: %s", e.what());
  const bool waits = static_cast<bool>(retry);
  if (waits) {
    resolved(key);
    pending_.append(Pending{key, std::move(retry), kept});
  }
  shownKind_ = e.kind();
  // A kept write is tried again; another program's lock is checked for the same way, so that its
  // message goes once the lock has, even when nothing waits.
  if (waits || problemMayPass()) retryTimer_.start();
  // This write's own words when it is kept (the user's write may wait behind a clean-up).
  const QString text = bannerMessage(e, waits ? keptNow() : std::nullopt);
  dismissed_ = false;
  setProblem(text, technicalDetail(e));
  emit changed();  // pendingCount, even when the text stayed the same
  return text;
}

bool StoreHealth::problemMayPass() const {
  // Only a lock: a write-lock check (checkWritable) tells that it has gone. A full disk still takes
  // the lock (it shows only when pages are written), so its message waits for a write that works.
  return shownKind_ == StoreError::Kind::kBusy;
}

QString StoreHealth::reportReadOnly() {
  const StoreError* cause = store_->readOnlyCause();
  if (!cause) return QString();
  qWarning("pagedchat: the chat history is open for reading only: %s", cause->what());
  retryTimer_.start();
  dismissed_ = false;
  showReadOnly();
  return message_;
}

void StoreHealth::showReadOnly() {
  if (const StoreError* cause = store_->readOnlyCause())
    setProblem(tr("The chat history can only be read: the disk or the file cannot be written. Your conversations "
                  "are all here, but new messages cannot be sent or saved until it can be written again; "
                  "PagedChat checks every few seconds."),
               technicalDetail(*cause));
}

void StoreHealth::resolved(const QString& key) {
  for (qsizetype i = 0; i < pending_.size(); ++i) {
    if (pending_.at(i).key != key) continue;
    pending_.removeAt(i);
    if (pending_.isEmpty() && !store_->isReadOnly() && !problemMayPass()) retryTimer_.stop();
    emit changed();
    return;
  }
}

bool StoreHealth::isPending(const QString& key) const {
  for (const Pending& p : pending_)
    if (p.key == key) return true;
  return false;
}

bool StoreHealth::retryNow() {
  if (retrying_) return false;  // a retried write's own signals came back here
  retrying_ = true;
  const auto done = qScopeGuard([this] { retrying_ = false; });
  const bool hadProblem = !message_.isEmpty() || !pending_.isEmpty() || store_->isReadOnly() || shownKind_;
  auto restoreTimeout = [this] {
    try {
      store_->setBusyTimeout(ChatStore::kBusyTimeoutMs);
    } catch (const StoreError&) {
    }
  };
  try {
    store_->reopenForWriting();  // a read-only store first: no write can work before
    store_->setBusyTimeout(kRetryBusyTimeoutMs);
    if (pending_.isEmpty()) store_->checkWritable();
    while (!pending_.isEmpty()) {
      try {
        pending_.constFirst().retry();
      } catch (const StoreError& e) {
        if (transient(e.kind())) throw;  // still failing: it stays first
        // It can never work (its message was deleted meanwhile, say): drop it.
        qWarning("pagedchat: a waiting write was dropped: %s", e.what());
      }
      pending_.removeFirst();
      emit changed();
    }
  } catch (const StoreError& e) {
    restoreTimeout();
    if (dismissed_) return false;
    if (store_->isReadOnly()) {
      showReadOnly();  // (the failed reopen's own words would say less)
    } else if (!(shownKind_ == e.kind() && !message_.isEmpty())) {
      // A new problem. The same one keeps the words it was reported with: a refused delete's
      // must not turn into the promise of a waiting clean-up's retry.
      shownKind_ = e.kind();
      setProblem(bannerMessage(e, keptNow()), technicalDetail(e));
    }
    return false;
  }
  restoreTimeout();
  retryTimer_.stop();
  dismissed_ = false;
  shownKind_.reset();
  setProblem(QString(), QString());
  if (hadProblem) emit recovered();
  return true;
}

void StoreHealth::dismiss() {
  dismissed_ = true;
  setProblem(QString(), QString());
}

void StoreHealth::setProblem(const QString& message, const QString& detail) {
  if (message == message_ && detail == detail_) return;
  message_ = message;
  detail_ = detail;
  emit changed();
}
