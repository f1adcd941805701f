#include "app/engine/server/api_server_controller.h"

#include <QPointer>
#include <QRegularExpression>
#include <QSettings>
#include <QUrl>

#include <exception>

#include "app/engine/engine_worker.h"
#include "app/engine/local_chat_backend.h"
#include "app/engine/remote/api_key_store.h"
#include "engine/async_engine_client.h"
#include "engine/entrypoints/openai/api_server.h"
#include "engine/entrypoints/openai/metrics.h"
#include "engine/entrypoints/openai/serving.h"

namespace {
const QString kEnabledKey = QStringLiteral("server/enabled");
const QString kHostKey = QStringLiteral("server/host");
const QString kPortKey = QStringLiteral("server/port");
const QString kOriginsKey = QStringLiteral("server/allowedOrigins");
/// The keychain account of the server's own API key.
const QString kKeyAccount = QStringLiteral("pagedchat-server");
}  // namespace

ApiServerController::ApiServerController(LocalChatBackend* engine, QSettings* settings, ApiKeyStore* keys,
                                         QObject* parent)
    : QObject(parent), engine_(engine), settings_(settings), keys_(keys) {
  host_ = settings_->value(kHostKey, host_).toString();
  port_ = qBound(0, settings_->value(kPortKey, port_).toInt(), 65535);
  QString originsError;
  allowedOrigins_ = parseOrigins(settings_->value(kOriginsKey).toStringList().join(QLatin1Char(' ')), &originsError);
  // The model goes (replaced, unloaded): stop first, so the server never reads a freed engine.
  connect(
      engine_, &LocalChatBackend::aboutToReplaceModel, this, [this] { shutdown(); }, Qt::DirectConnection);
  connect(engine_, &LocalChatBackend::modelLoadFinished, this, [this](bool ok) {
    if (ok) listen();
  });
  if (settings_->value(kEnabledKey, false).toBool()) {
    keys_->readKey(kKeyAccount, [self = QPointer<ApiServerController>(this)](const QString& key, const QString& error) {
      if (!self) return;
      self->apiKey_ = key;
      const bool loopback = pagedchat::openai::is_loopback_host(self->host_.toStdString());
      if (!loopback && key.isEmpty()) {  // never on the network without its key
        self->error_ = error.isEmpty() ? tr("The server was not started: %1 needs an API key.").arg(self->host_)
                                       : tr("The server was not started: %1").arg(error);
        emit self->stateChanged();
        return;
      }
      self->enabled_ = true;
      self->listen();
    });
  }
}

ApiServerController::~ApiServerController() { shutdown(); }

QString ApiServerController::address() const {
  if (!server_) return {};
  const QString host = host_.contains(QLatin1Char(':')) ? QStringLiteral("[%1]").arg(host_) : host_;
  return QStringLiteral("http://%1:%2/v1").arg(host).arg(boundPort_);
}

QStringList ApiServerController::parseOrigins(const QString& text, QString* error) {
  error->clear();
  static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
  QStringList origins;
  for (const QString& word : text.split(separators, Qt::SkipEmptyParts)) {
    QString origin = word;
    while (origin.endsWith(QLatin1Char('/'))) origin.chop(1);  // a browser's Origin has no trailing '/'
    const QUrl url(origin, QUrl::StrictMode);
    // What a browser sends in Origin: scheme://host[:port], nothing after.
    const bool isOrigin = origin == QLatin1String("*") ||
                          (url.isValid() && !url.scheme().isEmpty() && !url.host().isEmpty() && url.path().isEmpty() &&
                           !url.hasQuery() && !url.hasFragment() && url.userInfo().isEmpty());
    if (!isOrigin) {
      *error = tr("'%1' is not a web page's origin: write scheme://host[:port], e.g. http://localhost:3000, or * for "
                  "any page.")
                   .arg(word);
      return {};
    }
    if (!origins.contains(origin)) origins.append(origin);
  }
  return origins;
}

QString ApiServerController::start(const QString& host, int port, const QString& apiKey, bool allowNetwork,
                                   const QString& allowedOrigins) {
  const QString h = host.trimmed();
  if (h.isEmpty()) return tr("Enter the address to listen on, e.g. 127.0.0.1.");
  if (port < 0 || port > 65535) return tr("The port must be between 0 and 65535.");
  QString originsError;
  const QStringList origins = parseOrigins(allowedOrigins, &originsError);
  if (!originsError.isEmpty()) return originsError;
  if (!pagedchat::openai::is_loopback_host(h.toStdString())) {
    if (!allowNetwork)
      return tr("%1 can be reached from other machines: tick \"Allow other machines\" to serve there.").arg(h);
    if (apiKey.isEmpty()) return tr("Serving to other machines needs an API key.");
  }
  shutdown();
  enabled_ = true;
  host_ = h;
  port_ = port;
  apiKey_ = apiKey;
  allowedOrigins_ = origins;
  save();
  keys_->writeKey(kKeyAccount, apiKey, [](const QString&) {});  // unsaved key: asked again next time
  listen();
  return {};
}

void ApiServerController::stop() {
  enabled_ = false;
  shutdown();
  error_.clear();
  save();
  emit stateChanged();
}

void ApiServerController::save() {
  settings_->setValue(kEnabledKey, enabled_);
  settings_->setValue(kHostKey, host_);
  settings_->setValue(kPortKey, port_);
  settings_->setValue(kOriginsKey, allowedOrigins_);
}

void ApiServerController::listen() {
  if (!enabled_ || server_ || !engine_->isReady()) {
    emit stateChanged();
    return;
  }
  pagedchat::AsyncEngineClient& client = *engine_->worker()->serverClient();
  error_.clear();
  try {
    // The file or folder name, as pagedchat-cli serve names it (never the path: clients see it).
    const std::string name = pagedchat::openai::default_served_model_name(engine_->modelPath().toStdString());
    serving_ = std::make_unique<pagedchat::openai::OpenAIServing>(client, name, engine_->chatTemplate().toStdString());
    metrics_ = std::make_unique<pagedchat::openai::ServerMetrics>(name);
    pagedchat::openai::ServerConfig config;
    config.host = host_.toStdString();
    config.port = port_;
    config.api_key = apiKey_.toStdString();
    for (const QString& origin : allowedOrigins_) config.allowed_origins.push_back(origin.toStdString());
    server_ = std::make_unique<pagedchat::openai::ApiServer>(config);
    boundPort_ = server_->bind();
  } catch (const std::exception& e) {
    error_ = tr("The server could not start on %1:%2: %3").arg(host_).arg(port_).arg(QString::fromStdString(e.what()));
    server_.reset();
    serving_.reset();
    metrics_.reset();
    boundPort_ = 0;
    emit stateChanged();
    return;
  }
  pagedchat::openai::ServerMetrics* metrics = metrics_.get();
  client.set_output_observer([metrics](const pagedchat::RequestOutput& out) { metrics->observe(out); });
  server_->set_serving(&client, serving_.get(), metrics_.get());
  pagedchat::openai::ApiServer* server = server_.get();
  thread_ = std::thread([server] { server->listen(); });
  emit stateChanged();
}

void ApiServerController::shutdown() {
  if (!server_) return;
  pagedchat::AsyncEngineClient& client = *engine_->worker()->serverClient();
  client.abort_all();  // first: the answers in progress end now, not when their generations would
  server_->stop();     // aborts what is still starting, closes the connections, joins their threads
  thread_.join();
  client.set_output_observer(nullptr);
  server_.reset();
  serving_.reset();
  metrics_.reset();
  boundPort_ = 0;
  emit stateChanged();
}
