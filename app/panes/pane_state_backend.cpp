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

void PaneState::connectLocal() {
  for (const QMetaObject::Connection& c : std::as_const(localConnections_)) disconnect(c);
  localConnections_ = {connect(local_, &LocalChatBackend::stateChanged, this, &PaneState::contextChanged),
                       connect(local_, &LocalChatBackend::modelDetailsChanged, this, &PaneState::contextChanged),
                       connect(local_, &LocalChatBackend::tokenCountReady, this,
                               [this](int ticket, int count) {
                                 if (ticket != countTicket_) return;
                                 countedTokens_ = count;
                                 emit contextChanged();
                               }),
                       // Another model (or the same with other settings) counts differently, and may suggest other
                       // sampling settings (its generation_config.json) for the fields the user has not set.
                       connect(local_, &LocalChatBackend::modelLoadFinished, this, [this](bool ok) {
                         if (!ok) return;
                         settings_->setModelDefaults(local_->modelSamplingDefaults());
                         if (!isBusy()) countContext();
                       })};
  settings_->setModelDefaults(local_->modelSamplingDefaults());
}

void PaneState::stopForBackendChange() {
  if (!toolCalls_.isEmpty()) stopToolCalls();
  if (requestId_.isEmpty()) return;
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
  if (local_ != engine_) {  // another local model is let go of (LocalModels frees it)
    local_ = engine_;
    connectLocal();
  }
  backend_ = remote_;
  connectBackend();
  remote_->listModels();
  countContext();
  emit backendChanged();
  emit contextChanged();
}

void PaneState::useLocalEngine() { useLocalModel(engine_); }

void PaneState::useLocalModel(LocalChatBackend* backend) {
  if (!backend) backend = engine_;
  if (!remote_ && backend == local_) return;
  stopForBackendChange();
  if (backend != local_) {
    local_ = backend;
    connectLocal();
  }
  backend_ = local_;
  connectBackend();
  if (remote_) {
    remote_->deleteLater();
    remote_ = nullptr;
  }
  countContext();
  emit backendChanged();
  emit contextChanged();
}

QString PaneState::endpointUrl() const { return remote_ ? remote_->baseUrl().toString() : QString(); }
QString PaneState::endpointModel() const { return remote_ ? remote_->model() : QString(); }

int PaneState::contextLimit() const { return remote_ ? remote_->maxModelLen() : local_->maxPositions(); }
