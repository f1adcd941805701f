// ChatStore schema versions (PRAGMA user_version) and the upgrade path.
//
//   0  empty file
//   1  conversations(id, title, created_at, updated_at);
//      messages(id, conversation_id, role, text, finish_reason, created_at): one list per conversation
//   2  messages.parent_id (a tree: edits and regenerations are siblings; v1 rows get the previous
//      message of their conversation as parent); conversations.pinned, .deleted_at (soft delete),
//      .current_leaf_id (the branch shown); messages_fts, an FTS5 index over messages.text kept in
//      sync by triggers; the partial index conversations_live for the sidebar's pages.
//   3  messages.backend: who answered a reply ("local:<model>", "remote:<model>@<base URL>"; "" for
//      the replies stored before).
//   4  messages.role may be 'tool' (a tool's result); messages.fields: a message's further OpenAI
//      fields as JSON text (a reply's tool_calls, a result's tool_call_id and name). The table is
//      rebuilt (a CHECK constraint cannot change in place), ids kept.
//   5  attachments(message_id, idx, mime, bytes, width, height): the pictures sent with a message
//      (removed with it: ON DELETE CASCADE).
//
// An existing database older than kSchemaVersion is copied to
// "<file>.v<old>-backup-<UTC timestamp>" before anything in it changes (a rollback-journal file
// is copied byte for byte under a read lock; a WAL file with VACUUM INTO, a consistent copy with
// the WAL folded in), then upgraded in one transaction. A newer or corrupt database is refused untouched.
#include <QFile>
#include <QFileInfo>
#include <QtGlobal>

#include "app/store/chat_store.h"
#include "app/store/chat_store_sql.h"

using namespace chatstore;

namespace {

/// The triggers that keep messages_fts in step with messages.text (schema 2 on).
void createSearchTriggers(const QSqlDatabase& db, const QString& path) {
  exec(db, path,
       QStringLiteral("CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN"
                      " INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text); END"));
  exec(db, path,
       QStringLiteral("CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
                      " INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text); END"));
  exec(db, path,
       QStringLiteral("CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN"
                      " INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);"
                      " INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text); END"));
}

/// messages_fts over messages.text, its triggers, and the index built from the rows there.
void createSearchIndex(const QSqlDatabase& db, const QString& path) {
  exec(db, path,
       QStringLiteral("CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='messages', content_rowid='id',"
                      " tokenize='unicode61 remove_diacritics 2')"));
  createSearchTriggers(db, path);
  exec(db, path, QStringLiteral("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')"));
}

void migrateTo1(const QSqlDatabase& db, const QString& path) {
  exec(db, path,
       QStringLiteral("CREATE TABLE IF NOT EXISTS conversations ("
                      " id INTEGER PRIMARY KEY,"
                      " title TEXT NOT NULL,"
                      " created_at TEXT,"
                      " updated_at TEXT)"));
  exec(db, path,
       QStringLiteral("CREATE TABLE IF NOT EXISTS messages ("
                      " id INTEGER PRIMARY KEY,"
                      " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
                      " role TEXT NOT NULL CHECK(role IN ('system','user','assistant')),"
                      " text TEXT NOT NULL,"
                      " finish_reason TEXT NOT NULL DEFAULT '',"
                      " created_at TEXT)"));
  exec(db, path,
       QStringLiteral("CREATE INDEX IF NOT EXISTS messages_conversation_id ON messages(conversation_id, id)"));
}

void migrateTo2(const QSqlDatabase& db, const QString& path) {
  // The message tree. ON DELETE CASCADE: deleting a message deletes the branch below it.
  exec(db, path,
       QStringLiteral("ALTER TABLE messages ADD COLUMN parent_id INTEGER"
                      " REFERENCES messages(id) ON DELETE CASCADE"));
  // v1 conversations were lists: each message follows the previous one (ids grow with time).
  exec(db, path,
       QStringLiteral("UPDATE messages SET parent_id = (SELECT max(p.id) FROM messages p"
                      " WHERE p.conversation_id = messages.conversation_id AND p.id < messages.id)"));
  exec(db, path, QStringLiteral("CREATE INDEX messages_parent ON messages(parent_id, id)"));

  exec(db, path, QStringLiteral("ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0"));
  exec(db, path, QStringLiteral("ALTER TABLE conversations ADD COLUMN deleted_at TEXT"));
  // No foreign key: ChatStore::deleteMessage() moves the leaf to the parent itself.
  exec(db, path, QStringLiteral("ALTER TABLE conversations ADD COLUMN current_leaf_id INTEGER"));
  exec(db, path,
       QStringLiteral("UPDATE conversations SET current_leaf_id ="
                      " (SELECT max(m.id) FROM messages m WHERE m.conversation_id = conversations.id)"));
  exec(db, path,
       QStringLiteral("CREATE INDEX conversations_live ON conversations(pinned DESC, updated_at DESC, id DESC)"
                      " WHERE deleted_at IS NULL"));

  // Full-text search: an external-content FTS5 table (the text is stored once, in messages).
  // unicode61 splits on Unicode word boundaries (Hangul and Latin alike), folds case and
  // diacritics; search() queries every word as a prefix.
  createSearchIndex(db, path);

  // Blind-compare votes (ChatStore::addCompareVote): the panes as JSON text. No foreign key, so a
  // vote outlives the conversations it compared.
  exec(db, path,
       QStringLiteral("CREATE TABLE compare_votes ("
                      " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                      " created_at TEXT NOT NULL,"
                      " prompt TEXT NOT NULL,"
                      " winner_pane INTEGER NOT NULL,"
                      " panes TEXT NOT NULL)"));
}

void migrateTo3(const QSqlDatabase& db, const QString& path) {
  exec(db, path, QStringLiteral("ALTER TABLE messages ADD COLUMN backend TEXT NOT NULL DEFAULT ''"));
}

void migrateTo4(const QSqlDatabase& db, const QString& path) {
  // The role CHECK takes 'tool', which SQLite cannot change in place: the table is made anew and
  // the rows copied with their ids (https://www.sqlite.org/lang_altertable.html#otheralter).
  // parent_id names the new table, which the rename turns into "messages"; the old table's drop
  // deletes no new row. A parent row may come after its child in id order (an import): the
  // foreign keys are checked at the commit. The search index goes first (FTS5 keeps statements
  // on its content table, which would stop the drop: "database table is locked") and is built
  // again from the copied rows.
  exec(db, path, QStringLiteral("PRAGMA defer_foreign_keys = ON"));
  for (const char* trigger : {"messages_fts_insert", "messages_fts_delete", "messages_fts_update"})
    exec(db, path, QStringLiteral("DROP TRIGGER %1").arg(QLatin1String(trigger)));
  exec(db, path, QStringLiteral("DROP TABLE messages_fts"));
  exec(db, path,
       QStringLiteral("CREATE TABLE messages_v4 ("
                      " id INTEGER PRIMARY KEY,"
                      " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
                      " role TEXT NOT NULL CHECK(role IN ('system','user','assistant','tool')),"
                      " text TEXT NOT NULL,"
                      " finish_reason TEXT NOT NULL DEFAULT '',"
                      " created_at TEXT,"
                      " parent_id INTEGER REFERENCES messages_v4(id) ON DELETE CASCADE,"
                      " backend TEXT NOT NULL DEFAULT '',"
                      " fields TEXT NOT NULL DEFAULT '')"));
  exec(db, path,
       QStringLiteral("INSERT INTO messages_v4(id, conversation_id, role, text, finish_reason, created_at,"
                      " parent_id, backend) SELECT id, conversation_id, role, text, finish_reason, created_at,"
                      " parent_id, backend FROM messages ORDER BY id"));
  exec(db, path, QStringLiteral("DROP TABLE messages"));  // its indexes go with it
  exec(db, path, QStringLiteral("ALTER TABLE messages_v4 RENAME TO messages"));
  exec(db, path, QStringLiteral("CREATE INDEX messages_conversation_id ON messages(conversation_id, id)"));
  exec(db, path, QStringLiteral("CREATE INDEX messages_parent ON messages(parent_id, id)"));
  createSearchIndex(db, path);
}

void migrateTo5(const QSqlDatabase& db, const QString& path) {
  exec(db, path,
       QStringLiteral("CREATE TABLE IF NOT EXISTS attachments ("
                      " message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,"
                      " idx INTEGER NOT NULL, mime TEXT NOT NULL, bytes BLOB NOT NULL,"
                      " width INTEGER NOT NULL, height INTEGER NOT NULL, PRIMARY KEY (message_id, idx))"));
}

}  // namespace

void ChatStore::migrate() {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString userVersionSql = QStringLiteral("PRAGMA user_version");

  auto checkVersion = [&](int version) {
    if (version > kSchemaVersion)
      fail(m_path,
           QStringLiteral("the database schema version %1 is newer than this version of "
                          "PagedChat supports (%2); please update PagedChat")
               .arg(version)
               .arg(kSchemaVersion),
           QString(), StoreError::Kind::kTooNew);
    if (version < 0) fail(m_path, QStringLiteral("invalid database schema version %1").arg(version), QString());
  };

  int version = scalar(db, m_path, userVersionSql).toInt();
  checkVersion(version);  // before anything is written: a newer file stays as it is
  if (m_readOnlyCause) {
    // Reading only: the file is used as it is, so it must hold this build's schema.
    if (version != kSchemaVersion)
      fail(m_path,
           QStringLiteral("the database (schema version %1) cannot be upgraded to version %2: it cannot be written")
               .arg(version)
               .arg(kSchemaVersion),
           QStringLiteral("the file or its disk is read-only"), StoreError::Kind::kReadOnly, /*write=*/true);
    return;
  }

  // WAL is persistent in the file; the result row names the mode actually in effect (some file
  // systems cannot do WAL, in which case SQLite keeps the rollback journal, which is still safe).
  // It changes the file's header, so an older file gets it only after its backup is written.
  auto enableWal = [&] { scalar(db, m_path, QStringLiteral("PRAGMA journal_mode = WAL")); };
  if (version == kSchemaVersion) {
    enableWal();
    return;
  }

  if (version >= 1) {      // version 0: a new, empty file: nothing to keep
    checkIntegrity();      // (again, for a big file): never upgrade a damaged database
    writeBackup(version);  // the file as it was, before any change (the journal mode included)
  }
  enableWal();

  WriteTransaction tx(db, m_path);
  version = scalar(db, m_path, userVersionSql).toInt();  // another process may have migrated
  checkVersion(version);
  if (version == kSchemaVersion) return;  // tx rolls back (nothing written)

  while (version < kSchemaVersion) {
    switch (version) {
      case 0:
        migrateTo1(db, m_path);
        break;
      case 1:
        migrateTo2(db, m_path);
        break;
      case 2:
        migrateTo3(db, m_path);
        break;
      case 3:
        migrateTo4(db, m_path);
        break;
      case 4:
        migrateTo5(db, m_path);
        break;
      default:
        fail(m_path, QStringLiteral("no migration from schema version %1").arg(version), QString());
    }
    ++version;
  }
  // PRAGMA does not take bound parameters; version is an int we computed.
  exec(db, m_path, QStringLiteral("PRAGMA user_version = %1").arg(version));
  tx.commit();
}

void ChatStore::writeBackup(int fromVersion) {
  const QSqlDatabase db = openConnection(m_connectionName, m_path);
  const QString stamp = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd'T'HHmmss'Z'"));
  QString backup = QStringLiteral("%1.v%2-backup-%3").arg(m_path).arg(fromVersion).arg(stamp);
  for (int n = 2; QFileInfo::exists(backup); ++n)  // two upgrades within one second
    backup = QStringLiteral("%1.v%2-backup-%3-%4").arg(m_path).arg(fromVersion).arg(stamp).arg(n);
  const QString mode = scalar(db, m_path, QStringLiteral("PRAGMA journal_mode")).toString();
  if (mode.compare(QLatin1String("wal"), Qt::CaseInsensitive) != 0) {
    // Rollback journal: the file alone is the database. A read transaction (a SHARED lock, taken
    // by the first read; it also rolls back a hot journal) keeps writers out while the bytes are
    // copied, so the backup is exactly the file as it was.
    exec(db, m_path, QStringLiteral("BEGIN"));
    scalar(db, m_path, QStringLiteral("SELECT count(*) FROM sqlite_master"));
    QFile::remove(backup);
    const bool copied = QFile::copy(m_path, backup);
    exec(db, m_path, QStringLiteral("COMMIT"));
    if (!copied) {
      QFile::remove(backup);
      fail(m_path,
           QStringLiteral("cannot write the backup copy %1 before the upgrade").arg(QDir::toNativeSeparators(backup)),
           QString(), StoreError::Kind::kOther, /*write=*/true);
    }
  } else {
    // WAL: part of the database may live in the -wal file; fold it in (best effort), then
    // VACUUM INTO writes a consistent copy of the database as this connection sees it.
    exec(db, m_path, QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)"));
    exec(db, m_path, QStringLiteral("VACUUM INTO ?"), {backup});
  }
  m_backupPath = backup;
  qInfo("pagedchat: upgrading the chat database from schema version %d to %d; backup copy: %s", fromVersion,
        kSchemaVersion, qUtf8Printable(QDir::toNativeSeparators(backup)));
}
