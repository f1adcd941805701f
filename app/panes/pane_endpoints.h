// PaneEndpoints: which panes talk to a remote endpoint, and those endpoints' API keys.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantMap>

class ApiKeyStore;
class PaneListModel;

/// The app's side of remote panes (QML: app.endpoints): sets a pane's endpoint (base URL, model,
/// API key) or gives it back to the local engine, lists an endpoint's models for the settings
/// popup, and keeps each endpoint's API key in an ApiKeyStore (the system keychain in the app),
/// keyed by base URL — never in pagedchat.ini or the chat database. When the key store fails (no
/// keychain service), keychainError says so and a key typed in is used until the app quits.
class PaneEndpoints : public QObject {
  Q_OBJECT
  /// The key store's last failure ("" once it worked again).
  Q_PROPERTY(QString keychainError READ keychainError NOTIFY keychainErrorChanged)

 public:
  /// `keys` must outlive this object.
  PaneEndpoints(PaneListModel* panes, ApiKeyStore* keys, QObject* parent = nullptr);

  /// Pane `pane` sends to `baseUrl` (e.g. http://gpu-box:8000/v1) with `model`. With `setKey`,
  /// `apiKey` is stored for that URL ("" deletes the stored key) and used; without it the stored
  /// key (if any) is read and used. Returns "" or why the URL is refused (nothing changes then).
  Q_INVOKABLE QString useRemote(int pane, const QString& baseUrl, const QString& model, const QString& apiKey,
                                bool setKey);
  /// Pane `pane` goes back to the local engine.
  Q_INVOKABLE void useLocal(int pane);
  /// Asks `baseUrl` for its models (GET /models) with `apiKey`, or the stored key when it is "";
  /// answers with modelsListed().
  Q_INVOKABLE void listModels(const QString& baseUrl, const QString& apiKey);
  /// Whether a key is stored for `baseUrl`; answers with keyKnown().
  Q_INVOKABLE void checkStoredKey(const QString& baseUrl);
  /// A warning when an API key sent to `baseUrl` would cross the network unencrypted: plain
  /// http:// to a host other than this computer (localhost, 127.x, ::1); "" for https:// and
  /// loopback (or a URL that is not one).
  Q_INVOKABLE QString plainTextKeyWarning(const QString& baseUrl) const;

  /// A pane's endpoint as pagedchat.ini keeps it: {url, model}, or {} for the local engine.
  QVariantMap savedForm(int pane) const;
  /// Restores pane `pane` from savedForm()'s map (the key read from the store).
  void restore(int pane, const QVariantMap& saved);

  QString keychainError() const { return keychainError_; }

 signals:
  void modelsListed(const QString& baseUrl, const QStringList& models, const QString& error);
  void keyKnown(const QString& baseUrl, bool stored);
  void keychainErrorChanged();

 private:
  /// Reads the stored key of `url` and then points pane `pane` at it (unless it was changed meanwhile).
  void applyWithStoredKey(int pane, const QString& url, const QString& model);
  void setKeychainError(const QString& error);

  PaneListModel* panes_;
  ApiKeyStore* keys_;
  QString keychainError_;
};
