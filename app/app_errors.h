// AppErrors: the window's error banner, one message for the whole app.
#pragma once

#include <QObject>
#include <QString>

#include <functional>

#include "app/store/store_health.h"

/// The message the window's banner shows, in plain language, with its technical detail one click
/// away. The conversation history, the model loads and QML report here; the chat history's own
/// failed writes come from StoreHealth (which retries them) and show until they went through.
class AppErrors : public QObject {
  Q_OBJECT
  /// The message ("" = no banner).
  Q_PROPERTY(QString text READ text NOTIFY changed)
  /// Its technical detail, shown under the banner's "Details" ("" = none).
  Q_PROPERTY(QString detail READ detail NOTIFY changed)
  /// The message is a chat-history problem that retry() may fix (a lock, a full disk).
  Q_PROPERTY(bool retryable READ retryable NOTIFY changed)
  /// Writes of the user's (a reply, a rename, a pin) that wait to be saved: lost if the app quits
  /// now, so the window asks first.
  Q_PROPERTY(int unsavedCount READ unsavedCount NOTIFY unsavedCountChanged)

 public:
  /// Follows `health` (the store's; it must outlive this object).
  explicit AppErrors(StoreHealth* health, QObject* parent = nullptr);

  QString text() const { return text_; }
  QString detail() const { return detail_; }
  bool retryable() const { return storeErrorShown_; }
  int unsavedCount() const { return health_->usersWritesWaiting(); }

  /// Shows `text` (errors found in QML, e.g. a dialog that failed).
  Q_INVOKABLE void show(const QString& text) { set(text); }
  /// Clears the message (the banner's close button); writes waiting for a retry stay waiting.
  Q_INVOKABLE void clear();
  /// The banner's Retry: tries the chat-history writes that failed again (StoreHealth::retryNow()).
  Q_INVOKABLE void retry();

  /// Shows `text` and `detail` ("" clears the banner).
  void set(const QString& text, const QString& detail = QString());
  /// set() for a model or engine-settings load: such a message goes with clearModelError(), when
  /// the user opens or unloads a model or applies engine settings that load.
  void setModelError(const QString& text);
  /// Clears the message if it came from setModelError().
  void clearModelError();
  /// Follows why the OpenAI server is not running though it was turned on (a network address
  /// without its API key, a port in use; ApiServerController::error()): a new reason is shown,
  /// and goes when the reason does (the server started, or was turned off). The same reason
  /// again does not bring back a message the user closed.
  void setServerError(const QString& text);
  /// Shows a failed store call in plain language (StoreHealth); with `retry`, the write waits
  /// under `key` and is tried again (`kept`: whose write it is, StoreHealth::report()).
  void reportStoreError(const StoreError& e, const QString& key = QString(), std::function<void()> retry = {},
                        StoreHealth::Kept kept = StoreHealth::Kept::kUsersWrite);

 signals:
  void changed();
  void unsavedCountChanged();

 private:
  /// Follows the store's health: its message in the banner, gone once the writes went through.
  void onStoreHealthChanged();

  StoreHealth* health_;
  QString text_;
  QString detail_;
  bool storeErrorShown_ = false;   ///< text_ is StoreHealth's message
  bool modelErrorShown_ = false;   ///< text_ came from setModelError()
  bool serverErrorShown_ = false;  ///< text_ came from setServerError()
  QString serverError_;            ///< the last setServerError() text
};
