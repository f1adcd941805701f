#include "app/panes/pane_endpoints.h"

#include <QHostAddress>
#include <QPointer>
#include <QUrl>

#include "app/engine/remote/api_key_store.h"
#include "app/engine/remote/remote_backend.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"

namespace {
/// The account a key is stored under: the base URL without a trailing '/'.
QString accountOf(const QString& baseUrl) {
  QString url = baseUrl.trimmed();
  while (url.endsWith(QLatin1Char('/'))) url.chop(1);
  return url;
}
}  // namespace

QString PaneEndpoints::plainTextKeyWarning(const QString& baseUrl) const {
  const QUrl url(baseUrl.trimmed());
  if (!url.isValid() || url.scheme().compare(QLatin1String("http"), Qt::CaseInsensitive) != 0) return {};
  const QString host = url.host();
  if (host.isEmpty()) return {};
  // This computer: the key never leaves it.
  const bool loopback = host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0 ||
                        host.endsWith(QLatin1String(".localhost"), Qt::CaseInsensitive) ||
                        QHostAddress(host).isLoopback();
  if (loopback) return {};
  return tr("This URL is plain http: the API key and the conversation travel unencrypted to %1, readable by "
            "anyone on the way. Use https:// unless the network is yours.")
      .arg(host);
}

PaneEndpoints::PaneEndpoints(PaneListModel* panes, ApiKeyStore* keys, QObject* parent)
    : QObject(parent), panes_(panes), keys_(keys) {}

void PaneEndpoints::setKeychainError(const QString& error) {
  if (error == keychainError_) return;
  keychainError_ = error;
  emit keychainErrorChanged();
}

QString PaneEndpoints::useRemote(int pane, const QString& baseUrl, const QString& model, const QString& apiKey,
                                 bool setKey) {
  PaneState* session = panes_->paneAt(pane);
  if (!session) return tr("There is no pane %1.").arg(pane + 1);
  const QString problem = RemoteChatBackend::checkBaseUrl(baseUrl);
  if (!problem.isEmpty()) return problem;
  // OpenAI-compatible servers require "model" (ours and vLLM's refuse a request without one).
  if (model.trimmed().isEmpty()) return tr("Choose a model: press List models and pick one of the server's models.");
  const QString url = accountOf(baseUrl);
  if (!setKey) {
    applyWithStoredKey(pane, url, model);
    return {};
  }
  session->useRemoteEndpoint(QUrl(url), model, apiKey);  // the key works at once, stored or not
  keys_->writeKey(url, apiKey, [self = QPointer<PaneEndpoints>(this)](const QString& error) {
    if (!self) return;
    self->setKeychainError(
        error.isEmpty() ? QString() : tr("%1 The API key is used until PagedChat quits, but not saved.").arg(error));
  });
  return {};
}

void PaneEndpoints::applyWithStoredKey(int pane, const QString& url, const QString& model) {
  QPointer<PaneState> session = panes_->paneAt(pane);
  if (!session) return;
  // Until the key arrives the pane already points there (requests go without a key).
  session->useRemoteEndpoint(QUrl(url), model, QString());
  keys_->readKey(
      url, [self = QPointer<PaneEndpoints>(this), session, url, model](const QString& key, const QString& error) {
        if (!self || !session) return;
        if (!error.isEmpty()) {
          self->setKeychainError(tr("%1 Type the API key in the pane's settings again.").arg(error));
          return;
        }
        self->setKeychainError(QString());
        // Still the same endpoint (not changed while the keychain answered): give it the key.
        if (!key.isEmpty() && session->endpointUrl() == url && session->endpointModel() == model && !session->isBusy())
          session->useRemoteEndpoint(QUrl(url), model, key);
      });
}

void PaneEndpoints::useLocal(int pane) {
  if (PaneState* session = panes_->paneAt(pane)) session->useLocalEngine();
}

void PaneEndpoints::listModels(const QString& baseUrl, const QString& apiKey) {
  const QString problem = RemoteChatBackend::checkBaseUrl(baseUrl);
  if (!problem.isEmpty()) {
    emit modelsListed(baseUrl, {}, problem);
    return;
  }
  const QString url = accountOf(baseUrl);
  auto list = [self = QPointer<PaneEndpoints>(this), baseUrl, url](const QString& key) {
    if (!self) return;
    auto* probe = new RemoteChatBackend(self);
    probe->setEndpoint(QUrl(url), QString(), key);
    connect(probe, &RemoteChatBackend::modelsListed, self,
            [self, probe, baseUrl](const QStringList& models, const QString& error) {
              probe->deleteLater();
              emit self->modelsListed(baseUrl, models, error);
            });
    probe->listModels();
  };
  if (!apiKey.isEmpty()) {
    list(apiKey);
    return;
  }
  keys_->readKey(url, [list](const QString& key, const QString&) { list(key); });
}

void PaneEndpoints::checkStoredKey(const QString& baseUrl) {
  const QString url = accountOf(baseUrl);
  // Only whether a key is stored, for the settings' hint: a keychain that cannot be reached is not
  // an error until a key is saved or needed (useRemote, a request), where it is said.
  keys_->readKey(url, [self = QPointer<PaneEndpoints>(this), baseUrl](const QString& key, const QString&) {
    if (!self) return;
    emit self->keyKnown(baseUrl, !key.isEmpty());
  });
}

QVariantMap PaneEndpoints::savedForm(int pane) const {
  const PaneState* session = panes_->paneAt(pane);
  if (!session || !session->isRemote()) return {};
  return {{QStringLiteral("url"), session->endpointUrl()}, {QStringLiteral("model"), session->endpointModel()}};
}

void PaneEndpoints::restore(int pane, const QVariantMap& saved) {
  const QString url = saved.value(QStringLiteral("url")).toString();
  if (url.isEmpty() || !RemoteChatBackend::checkBaseUrl(url).isEmpty()) return;
  applyWithStoredKey(pane, accountOf(url), saved.value(QStringLiteral("model")).toString());
}
