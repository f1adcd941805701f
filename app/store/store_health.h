// StoreHealth: chat-history errors as the user sees them, and the writes waiting to be retried.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <optional>

#include "app/store/chat_store.h"

/// What went wrong with the chat database, in plain language ("The chat history could not be
/// saved: the disk is full."), with the technical detail (SQLite's message and code, the file)
/// kept apart for a "Details" click, and the writes that failed kept to be tried again: every
/// kRetryIntervalMs while any is waiting (and while another program's lock is shown: its message
/// goes once the lock has), and at once on retryNow() (the banner's Retry button).
/// Nothing the user wrote is dropped while the app runs: a write that keeps failing stays here
/// until it works. Owned by its ChatStore (ChatStore::health()); GUI thread only.
class StoreHealth : public QObject {
  Q_OBJECT
  /// The newest problem in plain language ("" = none, or dismissed).
  Q_PROPERTY(QString message READ message NOTIFY changed)
  /// Its technical detail: SQLite's message and result code, the database file.
  Q_PROPERTY(QString detail READ detail NOTIFY changed)
  /// How many failed writes wait to be tried again.
  Q_PROPERTY(int pendingCount READ pendingCount NOTIFY changed)

 public:
  /// How often waiting writes are tried again on their own.
  static constexpr int kRetryIntervalMs = 3000;
  /// The busy timeout of a retry: a database still locked by another program fails fast instead
  /// of holding the window for the store's usual busy timeout.
  static constexpr int kRetryBusyTimeoutMs = 100;

  /// What a waiting write holds: what the user wrote (a reply, a rename, a pin), or the app's
  /// own clean-up (the purge of deleted conversations), which is retried without the promise
  /// that "what you wrote" is kept.
  enum class Kept { kUsersWrite, kCleanUp };

  explicit StoreHealth(ChatStore* store);

  /// The plain-language sentence for `e`: what failed for the user (saving or reading the chat
  /// history, importing a file, opening the history) and why, never SQL.
  static QString userMessage(const StoreError& e);
  /// userMessage(e), and when a failed write waits here to be retried (`kept`; nullopt: none) and
  /// the problem may pass, that it is tried again, with the promise that nothing is lost for a
  /// write of the user's: the banner's sentence.
  static QString bannerMessage(const StoreError& e, std::optional<Kept> kept);
  /// The technical part of `e` (no SQL text): shown under "Details".
  static QString technicalDetail(const StoreError& e);

  /// A store call failed: message/detail say so. With a `retry` (which runs the write again and
  /// throws StoreError while it still fails), the write waits under `key` (a later report of the
  /// same key replaces it) to be tried again; `kept` says whose write it is. Returns the message.
  QString report(const StoreError& e, const QString& key = QString(), std::function<void()> retry = {},
                 Kept kept = Kept::kUsersWrite);
  /// The store opened read-only (ChatStore::isReadOnly()): says so ("The chat history can only
  /// be read ...", with the failed open as detail) and tries every kRetryIntervalMs, and on
  /// retryNow(), to open it for writing again. Does nothing on a writable store. Returns the message.
  QString reportReadOnly();
  /// The write waiting under `key` was done another way (a later save of the same reply): forget it.
  void resolved(const QString& key);
  /// True while a write waits under `key`.
  bool isPending(const QString& key) const;
  /// Tries every waiting write now, oldest first (stopping at the first that still fails), after
  /// opening a read-only store for writing (ChatStore::reopenForWriting()); with none waiting,
  /// checks that the database takes a write lock again. Clears the message once
  /// everything is saved; returns true then.
  Q_INVOKABLE bool retryNow();
  /// Hides the message (the banner's close button); waiting writes stay and are still retried.
  Q_INVOKABLE void dismiss();

  QString message() const { return message_; }
  QString detail() const { return detail_; }
  int pendingCount() const { return static_cast<int>(pending_.size()); }
  /// How many of the waiting writes are the user's (Kept::kUsersWrite): lost if the app quits now.
  int usersWritesWaiting() const;

 signals:
  void changed();
  /// Every waiting write has been saved (after a problem).
  void recovered();

 private:
  struct Pending {
    QString key;
    std::function<void()> retry;
    Kept kept;
  };
  /// What the waiting writes hold: kUsersWrite when any is the user's; nullopt when none waits.
  std::optional<Kept> keptNow() const;
  /// The last reported problem is one a write-lock check finds gone: another program's lock.
  bool problemMayPass() const;
  void setProblem(const QString& message, const QString& detail);
  /// The read-only message of reportReadOnly() (nothing while the store is writable).
  void showReadOnly();

  ChatStore* store_;
  QString message_;
  QString detail_;
  QList<Pending> pending_;                     ///< oldest first
  std::optional<StoreError::Kind> shownKind_;  ///< the kind of the last reported problem, until a retry works
  bool dismissed_ = false;
  bool retrying_ = false;  ///< the user closed the message: timed retries do not bring it back
  QTimer retryTimer_;
};
