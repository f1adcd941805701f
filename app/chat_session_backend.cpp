// ChatSession's backend: the local engine (EngineClient) or a remote OpenAI-compatible endpoint.
#include <QUrl>

#include "app/chat_session.h"
#include "app/engine_client.h"
#include "app/remote/remote_backend.h"

void ChatSession::connectBackend() {
  for (const QMetaObject::Connection& c : std::as_const(backendConnections_)) disconnect(c);
  backendConnections_ = {connect(backend_, &ChatBackend::stepFinished, this, &ChatSession::onStepFinished),
                         connect(backend_, &ChatBackend::requestRejected, this, &ChatSession::onRequestRejected)};
}

void ChatSession::stopForBackendChange() {
  if (!isBusy()) return;
  backend_->cancel(requestId_);
  finishReply(pagedchat::FinishReason::kAbort);
}

void ChatSession::useRemoteEndpoint(const QUrl& baseUrl, const QString& model, const QString& apiKey) {
  stopForBackendChange();
  if (!remote_) {
    remote_ = new RemoteChatBackend(this);
    // Its context length, once the model list names it (vLLM's max_model_len).
    connect(remote_, &RemoteChatBackend::modelsListed, this, &ChatSession::contextChanged);
  }
  remote_->setEndpoint(baseUrl, model, apiKey);
  backend_ = remote_;
  connectBackend();
  remote_->listModels();
  countContext();
  emit backendChanged();
  emit contextChanged();
}

void ChatSession::useLocalEngine() {
  if (!remote_) return;
  stopForBackendChange();
  backend_ = engine_;
  connectBackend();
  remote_->deleteLater();
  remote_ = nullptr;
  countContext();
  emit backendChanged();
  emit contextChanged();
}

QString ChatSession::endpointUrl() const { return remote_ ? remote_->baseUrl().toString() : QString(); }
QString ChatSession::endpointModel() const { return remote_ ? remote_->model() : QString(); }

int ChatSession::contextLimit() const { return remote_ ? remote_->maxModelLen() : engine_->maxPositions(); }
