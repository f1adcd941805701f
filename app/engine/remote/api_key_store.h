// ApiKeyStore: where remote endpoints' API keys are kept — the system keychain, never the INI file
// or the chat database.
#pragma once

#include <QHash>
#include <QObject>
#include <QString>

#include <functional>

/// Keys by account (an endpoint's base URL). Asynchronous, as keychains are: each call answers
/// through its callback on the calling (GUI) thread, later or at once. An error is a sentence
/// saying what failed (e.g. no keychain service on this machine); the caller shows it and goes on.
class ApiKeyStore : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;
  /// `key` is "" when none is stored (not an error).
  using ReadCallback = std::function<void(const QString& key, const QString& error)>;
  using WriteCallback = std::function<void(const QString& error)>;

  /// Reads the key stored for `account`.
  virtual void readKey(const QString& account, ReadCallback done) = 0;
  /// Stores `key` for `account`; an empty `key` deletes the stored one.
  virtual void writeKey(const QString& account, const QString& key, WriteCallback done) = 0;
};

/// The system keychain through qtkeychain (Secret Service / KWallet on Linux, the Keychain on
/// macOS, the Credential Store on Windows), service "PagedChat". Where none is reachable (no
/// D-Bus session, as in CI) every call answers with qtkeychain's error.
class KeychainApiKeyStore : public ApiKeyStore {
  Q_OBJECT

 public:
  using ApiKeyStore::ApiKeyStore;
  void readKey(const QString& account, ReadCallback done) override;
  void writeKey(const QString& account, const QString& key, WriteCallback done) override;
};

/// Keys in memory for this process only (tests; never written anywhere).
class MemoryApiKeyStore : public ApiKeyStore {
  Q_OBJECT

 public:
  using ApiKeyStore::ApiKeyStore;
  void readKey(const QString& account, ReadCallback done) override { done(keys_.value(account), QString()); }
  void writeKey(const QString& account, const QString& key, WriteCallback done) override {
    if (key.isEmpty())
      keys_.remove(account);
    else
      keys_.insert(account, key);
    done(QString());
  }

 private:
  QHash<QString, QString> keys_;
};
