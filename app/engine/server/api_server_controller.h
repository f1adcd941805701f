// ApiServerController: the app's OpenAI-compatible server toggle (Settings > Server).
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <thread>

class ApiKeyStore;
class LocalChatBackend;
class QSettings;

namespace pagedchat::openai {
class ApiServer;
class OpenAIServing;
class ServerMetrics;
}  // namespace pagedchat::openai

/// Serves the loaded model over the OpenAI API (engine/entrypoints/openai: the routes of
/// `pagedchat-cli serve`) from inside the app: the requests go to the app's engine worker
/// (EngineWorker::serverClient()), so they share engine steps with the panes' and show in the
/// engine view as "server". Off by default; on 127.0.0.1 by default; any other address needs
/// `allowNetwork` and an API key. Browsers (requests with an Origin header) are refused unless
/// their page is one of the allowed origins (none by default). The choice (on/off, host, port,
/// allowed origins) is kept in pagedchat.ini, the API key in the ApiKeyStore (the system
/// keychain). While a model loads or none is loaded the server is stopped (its requests end
/// "abort"); it starts again once one is loaded. GUI thread.
class ApiServerController : public QObject {
  Q_OBJECT
  /// The user turned it on (it runs whenever a model is loaded).
  Q_PROPERTY(bool enabled READ isEnabled NOTIFY stateChanged)
  /// Listening now.
  Q_PROPERTY(bool running READ isRunning NOTIFY stateChanged)
  /// "http://HOST:PORT/v1" while running, else "".
  Q_PROPERTY(QString address READ address NOTIFY stateChanged)
  /// Why it could not start (port in use, ...), or "".
  Q_PROPERTY(QString error READ error NOTIFY stateChanged)
  Q_PROPERTY(QString host READ host NOTIFY stateChanged)
  Q_PROPERTY(int port READ port NOTIFY stateChanged)
  Q_PROPERTY(bool hasApiKey READ hasApiKey NOTIFY stateChanged)
  /// The web pages (origins, e.g. "http://localhost:3000") whose scripts may call the server
  /// from a browser, comma-separated; "" (the default): browsers are refused.
  Q_PROPERTY(QString allowedOrigins READ allowedOriginsText NOTIFY stateChanged)

 public:
  static constexpr int kDefaultPort = 8000;

  /// `settings` and `keys` must outlive this object. Starts the server at once (once a model is
  /// loaded) when it was on in the last run.
  ApiServerController(LocalChatBackend* engine, QSettings* settings, ApiKeyStore* keys, QObject* parent = nullptr);
  /// Stops the server (its requests end "abort").
  ~ApiServerController() override;

  /// Turns the server on at `host`:`port` (0 = any free port) with `apiKey` ("" = none; clients
  /// then need no key). A host other than loopback (localhost, 127.x, ::1) needs `allowNetwork`
  /// and a key. `allowedOrigins`: the web pages allowed to call it from a browser, separated by
  /// commas or spaces (scheme://host[:port] each, or * for any); "" refuses every browser request
  /// (one with an Origin header: 403). Returns "" or why not (nothing changes then); a bind
  /// failure shows in error.
  Q_INVOKABLE QString start(const QString& host, int port, const QString& apiKey, bool allowNetwork,
                            const QString& allowedOrigins = QString());
  /// Turns the server off.
  Q_INVOKABLE void stop();

  bool isEnabled() const { return enabled_; }
  bool isRunning() const { return server_ != nullptr; }
  QString address() const;
  QString error() const { return error_; }
  QString host() const { return host_; }
  int port() const { return port_; }
  /// The port listened on (the chosen one when port() is 0); 0 while stopped.
  int boundPort() const { return boundPort_; }
  bool hasApiKey() const { return !apiKey_.isEmpty(); }
  QStringList allowedOrigins() const { return allowedOrigins_; }
  QString allowedOriginsText() const { return allowedOrigins_.join(QStringLiteral(", ")); }

  /// The origins in `text` (separated by commas or white space), or why one is not an origin
  /// (`error`; the list is then empty).
  static QStringList parseOrigins(const QString& text, QString* error);

 signals:
  void stateChanged();

 private:
  /// Starts listening if enabled and a model is loaded (sets error_ on failure).
  void listen();
  /// Stops listening and ends the server's requests (waits for its threads).
  void shutdown();
  void save();

  LocalChatBackend* engine_;
  QSettings* settings_;
  ApiKeyStore* keys_;
  bool enabled_ = false;
  QString host_ = QStringLiteral("127.0.0.1");
  int port_ = kDefaultPort;
  QString apiKey_;
  QStringList allowedOrigins_;
  QString error_;
  int boundPort_ = 0;
  std::unique_ptr<pagedchat::openai::OpenAIServing> serving_;
  std::unique_ptr<pagedchat::openai::ServerMetrics> metrics_;
  std::unique_ptr<pagedchat::openai::ApiServer> server_;
  std::thread thread_;  ///< ApiServer::listen()
};
