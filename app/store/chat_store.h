// ChatStore: conversations and messages in one SQLite file (Qt SQL, QSQLITE driver).
// WAL journal, foreign keys on, schema versioned with PRAGMA user_version (see
// chat_store_migrations.cpp for the versions). Implementation split by topic:
//   chat_store_open.cpp        opening (read-write, else read-only), integrity check, closing
//   chat_store.cpp             conversations, messages
//   chat_store_migrations.cpp  schema versions, upgrade with a backup copy
//   chat_store_tree.cpp        message tree: shown branch, siblings, leaves
//   chat_store_search.cpp      full-text search (FTS5)
//   chat_store_export.cpp      export to Markdown / JSON, import JSON
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QJsonArray>
#include <QList>
#include <QObject>
#include <QString>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "app/store/image_attachment.h"
#include "app/store/message_role.h"
#include "engine/finish_reason.h"

class StoreHealth;

/// One conversation row.
struct ConversationRecord {
  qint64 id = 0;
  QString title;
  QDateTime createdAt;       ///< UTC
  QDateTime updatedAt;       ///< UTC; bumped on every new message or text update
  bool pinned = false;       ///< pinned conversations come first in the list
  qint64 currentLeafId = 0;  ///< last message of the branch shown (0 = none / empty)
  QDateTime deletedAt;       ///< UTC; set while the conversation is soft-deleted (undo possible)
};

/// One message row (role: who wrote it). Messages form a tree per
/// conversation: parentId is the message this one answers or follows (0 = a first message).
struct MessageRecord {
  qint64 id = 0;
  qint64 conversationId = 0;
  MessageRole role = MessageRole::kUser;
  QString text;
  /// Unset while streaming, for an interrupted reply and for user messages (stored as "").
  std::optional<pagedchat::FinishReason> finishReason;
  QDateTime createdAt;  ///< UTC
  qint64 parentId = 0;  ///< 0 for a root message
  /// Who answered (assistant messages): "local:<model name>" or "remote:<model>@<base URL>"
  /// (ChatBackend::backendLabel()); "" for user messages and replies stored before schema 3.
  QString backend{};
  /// The message's further OpenAI fields as a JSON object's text, "" for none: an assistant
  /// reply's {"tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]}, a
  /// tool result's {"tool_call_id", "name"} (schema 4). The chat template reads them.
  QString fields{};
  /// The pictures sent with the message, in order (user messages; schema 5).
  QList<ImageAttachment> attachments{};
  int siblingIndex = 0;  ///< position among the messages with the same parent (oldest = 0); branch() only
  int siblingCount = 1;  ///< how many messages share the parent (1 = no alternatives); branch() only
};

/// One full-text search result.
struct SearchHit {
  qint64 messageId = 0;
  qint64 conversationId = 0;
  QString conversationTitle;
  MessageRole role = MessageRole::kUser;
  /// A short excerpt around the match as rich text (HTML-escaped, matches in <b>...</b>).
  QString snippetHtml;
};

/// Error from the store; what() holds SQLite's message, the failing statement and the database
/// path (or, for an import, what is wrong with the file): for logs. kind() and isWrite() say what
/// failed in terms a user can act on (app/store/store_health.h words them), detail() is the technical
/// part without any SQL text.
class StoreError : public std::runtime_error {
 public:
  /// What went wrong, grouped by what the user can do about it (SQLite's primary result codes).
  enum class Kind {
    kOther,             ///< anything else: a bug, a constraint, an id that does not exist
    kBusy,              ///< another connection or program holds the lock (SQLITE_BUSY, SQLITE_LOCKED)
    kReadOnly,          ///< the file or its file system cannot be written (SQLITE_READONLY, SQLITE_PERM)
    kDiskFull,          ///< no space left on the device (SQLITE_FULL)
    kIoError,           ///< the operating system failed a read or write (SQLITE_IOERR)
    kCorrupt,           ///< the file is damaged or is not a database (SQLITE_CORRUPT, SQLITE_NOTADB)
    kCannotOpen,        ///< the file or its folder cannot be opened or created (SQLITE_CANTOPEN)
    kPermissionDenied,  ///< the system refused access to the file or its folder at opening (EACCES, EPERM)
    kTooNew,            ///< written by a newer PagedChat (PRAGMA user_version above kSchemaVersion)
    kInvalidImport,     ///< importJson(): the file is not a conversation export; what() says why
  };
  /// `what` for logs; `write`: the failing operation was a write (else a read); `detail`: the
  /// technical reason without SQL (defaults to `what`); `reason`: why the file or its folder
  /// could not be opened, in a few plain words (the system's: "Not a directory"), if known.
  explicit StoreError(const std::string& what, Kind kind = Kind::kOther, bool write = false,
                      std::string detail = std::string(), std::string reason = std::string())
      : std::runtime_error(what),
        m_kind(kind),
        m_write(write),
        m_detail(detail.empty() ? what : std::move(detail)),
        m_reason(std::move(reason)) {}
  Kind kind() const { return m_kind; }
  bool isWrite() const { return m_write; }
  /// SQLite's message and result code and the database file, or the import problem; no SQL text.
  const std::string& detail() const { return m_detail; }
  /// Why an open failed, in a few plain words (often the system's), or "" when not known.
  const std::string& reason() const { return m_reason; }
  /// The error stopped the chat history from opening (ChatStore's constructor threw it).
  bool isOpening() const { return m_opening; }
  void setOpening(bool opening) { m_opening = opening; }

 private:
  Kind m_kind;
  bool m_write;
  std::string m_detail;
  std::string m_reason;
  bool m_opening = false;
};

/// All methods run on the calling (GUI) thread and are short single statements or transactions.
/// Errors (locked, corrupt or unwritable database) throw StoreError with SQLite's message and the
/// file path; nothing already committed is lost. Opening runs PRAGMA quick_check on files up to
/// 32 MB (and on any file before a schema upgrade); in a bigger file, damage fails the statement
/// that meets it.
class ChatStore : public QObject {
  Q_OBJECT
 public:
  /// The schema version this build writes (PRAGMA user_version).
  static constexpr int kSchemaVersion = 5;
  /// How long a statement waits for another connection's lock before failing (kBusy).
  static constexpr int kBusyTimeoutMs = 2000;
  /// JSON export format name and version (the "format" / "version" fields).
  static constexpr const char* kJsonFormat = "pagedchat-conversation";
  static constexpr int kJsonFormatVersion = 1;

  /// Opens (creating when missing) `<dataDir>/pagedchat.sqlite3`, upgrading an older schema after
  /// writing a backup copy next to it (backupPath()). A database newer than this build knows, or
  /// a corrupt one, throws StoreError and is left untouched.
  ///
  /// An existing file that cannot be written (a read-only disk or file) opens read-only instead:
  /// isReadOnly(), every read works, every write throws StoreError kReadOnly, and
  /// reopenForWriting() switches back once it can be written. Such a file must hold the current
  /// schema (an older one throws kReadOnly: it cannot be upgraded). A file closed cleanly (no
  /// -wal) is opened with SQLite's immutable=1 when the -shm cannot be created; a -wal left by a
  /// crash is never skipped: without its -shm on a read-only disk the open throws kCannotOpen
  /// rather than show older history (https://www.sqlite.org/wal.html#readonly,
  /// https://www.sqlite.org/uri.html#uriimmutable).
  explicit ChatStore(const QString& dataDir, QObject* parent = nullptr);
  ~ChatStore() override;

  QString databasePath() const;
  /// The backup copy written before this open upgraded the schema; empty when none was needed.
  QString backupPath() const { return m_backupPath; }
  /// Closes the connection (further calls throw). Safe to call twice.
  void close();
  /// Where the store's users report failures in plain language and leave writes to be retried
  /// (app/store/store_health.h); owned by the store.
  StoreHealth* health() const { return m_health; }
  /// Sets how long statements wait for another connection's lock (PRAGMA busy_timeout).
  void setBusyTimeout(int ms);
  /// Takes the write lock and lets it go (BEGIN IMMEDIATE; ROLLBACK): throws StoreError while
  /// another program holds it or the file cannot be written.
  void checkWritable();
  /// True while the database could only be opened for reading (see the constructor).
  bool isReadOnly() const { return m_readOnlyCause.has_value(); }
  /// Why the store is read-only: the failed read-write open (kReadOnly or kCannotOpen, a write);
  /// nullptr while it is writable.
  const StoreError* readOnlyCause() const { return m_readOnlyCause ? &*m_readOnlyCause : nullptr; }
  /// While isReadOnly(): opens the file for writing again. Throws StoreError (and stays
  /// read-only) while it still cannot be written; isReadOnly() is false once this returned.
  /// Does nothing on a writable store.
  void reopenForWriting();

  // --- conversations -------------------------------------------------------------------------
  qint64 createConversation(const QString& title);
  void renameConversation(qint64 id, const QString& title);
  void deleteConversation(qint64 id);  ///< deletes at once, with its messages
  /// Live (not soft-deleted) conversations: pinned first, then newest updatedAt first; `limit` < 0
  /// = all. Paging with offset/limit (the sidebar loads a page at a time).
  QList<ConversationRecord> conversations(int offset = 0, int limit = -1) const;
  /// Number of live conversations.
  int conversationCount() const;
  /// One conversation (also a soft-deleted one). Throws StoreError when there is none.
  ConversationRecord conversation(qint64 id) const;
  void setPinned(qint64 id, bool pinned);
  /// Soft delete: hides the conversation (deleted_at = now) until restoreConversation() or a purge.
  void softDeleteConversation(qint64 id);
  /// Undoes softDeleteConversation().
  void restoreConversation(qint64 id);
  /// Deletes for good the soft-deleted conversations deleted at or before `cutoff` (default: all).
  /// Returns how many went.
  int purgeDeletedConversations(const QDateTime& cutoff = QDateTime());

  // --- messages --------------------------------------------------------------------------------
  /// Parent value for addMessage(): "after the last message of the shown branch".
  static constexpr qint64 kAppendToBranch = -1;
  /// Inserts and commits a message under `parentId` (0 = a root message; kAppendToBranch = after
  /// the conversation's current leaf) and makes it the conversation's current leaf; returns its id.
  /// `backend`: who answers (MessageRecord::backend); `fields`: MessageRecord::fields;
  /// `attachments`: its pictures (MessageRecord::attachments), stored in the same transaction.
  qint64 addMessage(qint64 conversationId, MessageRole role, const QString& text,
                    std::optional<pagedchat::FinishReason> finishReason = std::nullopt,
                    qint64 parentId = kAppendToBranch, const QString& backend = QString(),
                    const QString& fields = QString(), const QList<ImageAttachment>& attachments = {});
  /// Replaces the text (and finish reason) of a message; committed on return.
  void updateMessage(qint64 messageId, const QString& text,
                     std::optional<pagedchat::FinishReason> finishReason = std::nullopt);
  /// Replaces a message's further fields (MessageRecord::fields: a reply's tool calls, found when
  /// it finished); committed on return.
  void setMessageFields(qint64 messageId, const QString& fields);
  /// Deletes one message and the messages below it (a turn the engine refused); when the shown
  /// branch went with it, its parent becomes the current leaf. Unknown ids are ignored.
  void deleteMessage(qint64 messageId);
  /// Every message of the conversation (all branches), oldest first.
  QList<MessageRecord> messages(qint64 conversationId) const;

  // --- message tree (chat_store_tree.cpp) -------------------------------------------------------
  /// The shown branch: root -> current leaf, oldest first, with siblingIndex/siblingCount.
  QList<MessageRecord> branch(qint64 conversationId) const;
  /// The path root -> `leafId` (with sibling info); empty for an unknown id.
  QList<MessageRecord> pathTo(qint64 leafId) const;
  /// Messages with the same parent as `messageId` (itself included), oldest first.
  QList<MessageRecord> siblings(qint64 messageId) const;
  /// The leaf reached from `messageId` by always taking the newest child.
  qint64 newestLeafUnder(qint64 messageId) const;
  /// Makes `leafId` (a message of `conversationId`, or 0) the end of the shown branch.
  void setCurrentLeaf(qint64 conversationId, qint64 leafId);

  // --- search (chat_store_search.cpp) -----------------------------------------------------------
  /// Messages of live conversations containing every word of `text` (each word also as a prefix:
  /// "hel" finds "hello"), newest first, at most `limit`. Any text is accepted: quotes and FTS5
  /// operators are taken literally. Empty text gives no results.
  QList<SearchHit> search(const QString& text, int limit = 50) const;
  /// The FTS5 MATCH expression search() uses for `text`: each word as a quoted prefix phrase.
  static QString ftsQuery(const QString& text);

  // --- export / import (chat_store_export.cpp) -------------------------------------------------
  /// The shown branch of a conversation as Markdown (title heading, one section per message).
  QString exportMarkdown(qint64 conversationId) const;
  /// The whole conversation (every branch) as JSON: {"format": kJsonFormat, "version": 1,
  /// "title", "createdAt", "updatedAt", "pinned", "currentLeafId", "messages": [{"id",
  /// "parentId", "role", "text", "finishReason", "createdAt", "backend" (when known), "fields" (an
  /// object, when the message has any)}]}; ids are local to the file.
  QByteArray exportJson(qint64 conversationId) const;
  /// Imports a conversation written by exportJson() as a new conversation; returns its id. Anything
  /// else (malformed JSON or UTF-8, another format or version, missing fields, fields of the wrong
  /// type, an empty title, a finishReason other than ""/stop/length/abort or on a non-assistant
  /// message, a date that is not ISO 8601 or lies more than kImportFutureToleranceSecs in the
  /// future, text with NUL characters or unpaired surrogates) throws StoreError naming the field,
  /// and nothing is imported (one transaction). Dates may be missing or "" (= the import time).
  qint64 importJson(const QByteArray& json);

  /// How far in the future an imported date may lie (clock differences between machines); a
  /// later date is refused rather than changed.
  static constexpr int kImportFutureToleranceSecs = 3600;

  /// Stores a blind-compare vote (app/store/chat_store_votes.cpp): the prompt sent to all panes, the
  /// winning pane's index (-1 = tie) and per pane {conversationId, messageId, label, settings{...},
  /// text}. Returns the vote's id. Throws StoreError (also for fewer than two panes or winnerPane
  /// out of range).
  qint64 addCompareVote(const QString& prompt, int winnerPane, const QJsonArray& panes);
  /// Every stored vote, oldest first: {id, createdAt (ISO UTC), prompt, winnerPane, panes}.
  QJsonArray compareVotes() const;

 private:
  /// How openDatabase() opens the file. kReadWrite creates it when missing; kReopen (switching
  /// back to writing) needs the very file opened before (never a new one where a disk went away).
  enum class Access { kReadWrite, kReopen, kReadOnly };
  /// Opens m_path (in `dataDir`) on a new connection; throws StoreError. kReadOnly: SQLite's
  /// mode=ro, else immutable=1 when no -wal holds transactions.
  void openDatabase(const QString& dataDir, Access access);
  /// openDatabase() for writing (`access`: kReadWrite or kReopen), falling back to reading
  /// (m_readOnlyCause set) when the file or its disk cannot be written; then migrate().
  void open(Access access);
  /// Sets m_readOnlyCause when a connection opened for writing cannot write after all: SQLite
  /// opened it read-only, or it cannot take the write lock for that reason (a read-only -shm).
  void probeWritable();
  /// Closes and removes the Qt SQL connection `name` ("" = none).
  static void closeConnection(const QString& name);
  /// True when SQLite opened the connection read-only although writing was asked for (the file
  /// is not writable but its -shm is there: https://www.sqlite.org/c3ref/db_readonly.html).
  bool connectionIsReadOnly() const;
  /// The connection's sqlite3 handle (the same libsqlite3 Qt's QSQLITE plugin uses), or nullptr.
  struct sqlite3* nativeHandle() const;
  void migrate();
  /// PRAGMA quick_check; throws StoreError listing the first problems.
  void checkIntegrity();
  void writeBackup(int fromVersion);
  QString nextTimestamp();  ///< ISO-8601 UTC with ms, strictly increasing within this instance
  QList<MessageRecord> readMessages(const QString& sql, const QVariantList& binds) const;

  QString m_dataDir;         ///< the folder given to the constructor
  QString m_path;            ///< <dataDir>/pagedchat.sqlite3
  QString m_connectionName;  ///< unique QSqlDatabase connection name; empty once closed
  QString m_backupPath;      ///< written by this open's migration, if any
  QDateTime m_lastStamp;     ///< last timestamp handed out by nextTimestamp()
  StoreHealth* m_health = nullptr;
  std::optional<StoreError> m_readOnlyCause;  ///< set while the store can only read
  /// The file this store opened (st_dev, st_ino): kReopen refuses another one at that path.
  std::optional<std::pair<quint64, quint64>> m_fileId;
};
