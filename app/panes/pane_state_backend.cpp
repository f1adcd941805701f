// PaneState's backend: the local engine (LocalChatBackend) or a remote OpenAI-compatible endpoint.
#include <QUrl>

#include "app/engine/local_chat_backend.h"
#include "app/engine/remote/remote_backend.h"
#include "app/panes/pane_state.h"

void PaneState::connectBackend() {
  for (const QMetaObject::Connection& c : std::as_const(backendConnections_)) disconnect(c);
  backendConnections_ = {connect(backend_, &ChatBackend::stepFinished, this, &PaneState::onStepFinished),
                         connect(backend_, &ChatBackend::requestRejected, this, &PaneState::onRequestRejected),
                         connect(backend_, &ChatBackend::contextTrimmed, this, &PaneState::onContextTrimmed)};
}

void PaneState::stopForBackendChange() {
  if (!isBusy()) return;
  backend_->cancel(requestId_);
  finishReply(pagedchat::FinishReason::kAbort);
}

void PaneState::useRemoteEndpoint(const QUrl& baseUrl, const QString& model, const QString& apiKey) {
  stopForBackendChange();
  if (!remote_) {
    remote_ = new RemoteChatBackend(this);
    // Its context length, once the model list names it (vLLM's max_model_len).
    connect(remote_, &RemoteChatBackend::modelsListed, this, &PaneState::contextChanged);
  }
  remote_->setEndpoint(baseUrl, model, apiKey);
  backend_ = remote_;
  connectBackend();
  remote_->listModels();
  countContext();
  emit backendChanged();
  emit contextChanged();
}

void PaneState::useLocalEngine() {
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

QString PaneState::endpointUrl() const { return remote_ ? remote_->baseUrl().toString() : QString(); }
QString PaneState::endpointModel() const { return remote_ ? remote_->model() : QString(); }

int PaneState::contextLimit() const { return remote_ ? remote_->maxModelLen() : engine_->maxPositions(); }
