// Opening the chat database at start-up, setting a damaged one aside.
#pragma once

#include <QString>

#include <memory>

#include "app/store/chat_store.h"

/// What openChatStore() did about a damaged database.
struct StoreRecovery {
  QString keptCopy;  ///< where the damaged file now is ("" = nothing was damaged)
  QString message;   ///< plain-language notice for the window ("" = none)
  QString detail;    ///< the technical error that showed the damage
};

/// Opens the ChatStore in `dataDir`. When the database is damaged or is not a database
/// (StoreError::Kind::kCorrupt), it is kept, renamed with its -wal and -shm files to
/// `pagedchat.sqlite3.corrupt-<UTC time>` beside it, a fresh empty database is opened in its
/// place, and `recovery` says so. Any other error (locked, unwritable folder, a newer
/// PagedChat's file) throws StoreError and leaves the file as it is; so does a damaged file
/// that cannot be moved.
std::unique_ptr<ChatStore> openChatStore(const QString& dataDir, StoreRecovery* recovery);
