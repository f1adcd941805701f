// libFuzzer target for the chat history import (ChatStore::importJson, app/store/chat_store_export.cpp):
// a conversation file is checked field by field, then written in one transaction to a SQLite store
// in a temporary folder. Any input must import or throw StoreError; a conversation that imported
// must export (exportJson) to a file that imports again with the same number of messages.
// Qt Core and Sql only: the store's sources are compiled into this target (tests/fuzz/CMakeLists.txt).
#include <QCoreApplication>
#include <QTemporaryDir>

#include <cstdint>
#include <cstdlib>

#include "app/store/chat_store.h"

namespace {

ChatStore& store() {
  static int argc = 1;
  static char arg0[] = "fuzz_chat_import";
  static char* argv[] = {arg0, nullptr};
  static QCoreApplication app(argc, argv);  // QSqlDatabase loads its SQLite driver as a plugin
  static QTemporaryDir dir;
  static ChatStore s(dir.path());
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  ChatStore& s = store();
  qint64 id = 0;
  try {
    id = s.importJson(QByteArray(reinterpret_cast<const char*>(data), qsizetype(size)));
  } catch (const StoreError&) {
    return 0;  // refused with a message naming the field
  }
  const qsizetype count = s.messages(id).size();
  const qint64 again = s.importJson(s.exportJson(id));  // throws (a bug) if the export is refused
  if (s.messages(again).size() != count) std::abort();
  s.deleteConversation(id);
  s.deleteConversation(again);
  return 0;
}
