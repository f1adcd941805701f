#include "app/app_errors.h"

#include <utility>

#include "app/store/store_health.h"

AppErrors::AppErrors(StoreHealth* health, QObject* parent) : QObject(parent), health_(health) {
  connect(health_, &StoreHealth::changed, this, &AppErrors::onStoreHealthChanged);
  connect(health_, &StoreHealth::changed, this, &AppErrors::unsavedCountChanged);
}

void AppErrors::set(const QString& text, const QString& detail) {
  modelErrorShown_ = false;
  serverErrorShown_ = false;
  storeErrorShown_ = false;
  if (text == text_ && detail == detail_) return;
  text_ = text;
  detail_ = detail;
  emit changed();
}

void AppErrors::setModelError(const QString& text) {
  set(text);
  modelErrorShown_ = true;
}

void AppErrors::clearModelError() {
  if (modelErrorShown_) set(QString());
}

void AppErrors::setServerError(const QString& text) {
  if (text == serverError_) return;
  serverError_ = text;
  if (!text.isEmpty()) {
    set(text);
    serverErrorShown_ = true;
  } else if (serverErrorShown_) {
    set(QString());
  }
}

void AppErrors::clear() {
  if (storeErrorShown_) health_->dismiss();
  set(QString());
}

void AppErrors::retry() { health_->retryNow(); }

void AppErrors::reportStoreError(const StoreError& e, const QString& key, std::function<void()> retry,
                                 StoreHealth::Kept kept) {
  health_->report(e, key, std::move(retry), kept);
}

void AppErrors::onStoreHealthChanged() {
  if (!health_->message().isEmpty()) {
    const bool changedNow = text_ != health_->message() || detail_ != health_->detail() || !storeErrorShown_;
    text_ = health_->message();
    detail_ = health_->detail();
    modelErrorShown_ = false;
    serverErrorShown_ = false;
    storeErrorShown_ = true;
    if (changedNow) emit changed();
  } else if (storeErrorShown_) {
    set(QString());  // the waiting writes went through (or the message was dismissed)
  }
}
