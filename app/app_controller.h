// AppController: the application's root object, handed to QML as `app`.
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>
#include <QUrl>
#include <QVariantList>

#include <functional>
#include <memory>

#include "app/app_options.h"
#include "app/blind_compare.h"
#include "app/chat_store.h"
#include "app/conversation_list_model.h"
#include "app/engine_client.h"
#include "app/engine_monitor.h"
#include "app/engine_settings.h"
#include "app/pane_list_model.h"
#include "app/recent_models_model.h"
#include "app/remote/pane_endpoints.h"
#include "app/server/api_server_controller.h"
#include "app/throughput_meter.h"
#include "app/translator.h"

class ApiKeyStore;
class QSettings;

/// Owns the store, the engine client (and through it the worker thread), the conversation list
/// and the panes, and implements the conversation list's actions (new, open, delete). Remembers
/// the panes (how many, which conversation each shows) in `<dataDir>/pagedchat.ini` and reopens
/// them on the next start; with no saved layout, pane 1 shows the newest conversation.
class AppController : public QObject {
  Q_OBJECT
  Q_PROPERTY(EngineClient* engine READ engine CONSTANT)
  Q_PROPERTY(ConversationListModel* conversations READ conversations CONSTANT)
  Q_PROPERTY(PaneListModel* panes READ panes CONSTANT)
  Q_PROPERTY(ThroughputMeter* throughput READ throughput CONSTANT)
  /// The model picker's recent models, the engine settings page, the live engine view's data.
  Q_PROPERTY(RecentModelsModel* recentModels READ recentModels CONSTANT)
  Q_PROPERTY(EngineSettings* engineSettings READ engineSettings CONSTANT)
  Q_PROPERTY(EngineMonitor* monitor READ monitor CONSTANT)
  Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentConversationChanged)
  Q_PROPERTY(QString dataDir READ dataDir CONSTANT)
  Q_PROPERTY(QString errorText READ errorText NOTIFY errorTextChanged)
  /// The technical detail of errorText, shown under the banner's "Details" ("" = none).
  Q_PROPERTY(QString errorDetail READ errorDetail NOTIFY errorTextChanged)
  /// errorText is a chat-history problem that retryStore() may fix (a lock, a full disk).
  Q_PROPERTY(bool errorRetryable READ errorRetryable NOTIFY errorTextChanged)
  /// Why the model the user opened last did not load ("" once another is opened or unloaded);
  /// the model picker shows it, also after the previous model was loaded again.
  Q_PROPERTY(QString modelLoadError READ modelLoadError NOTIFY modelLoadErrorChanged)
  /// The UI language: "system", "en" or "ko" (saved in pagedchat.ini; switches at once).
  Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
  Q_PROPERTY(Translator* translator READ translator CONSTANT)
  /// Title of the conversation deleteConversation() hid last; empty when there is nothing to undo.
  Q_PROPERTY(QString undoDeleteTitle READ undoDeleteTitle NOTIFY undoDeleteChanged)
  /// How many deletions can still be undone (each until its own undo time runs out).
  Q_PROPERTY(int undoDeleteCount READ undoDeleteCount NOTIFY undoDeleteChanged)
  Q_PROPERTY(BlindCompare* compare READ compare CONSTANT)
  /// Remote endpoints as panes (their URLs, models and keychain-held API keys).
  Q_PROPERTY(PaneEndpoints* endpoints READ endpoints CONSTANT)
  /// The OpenAI-compatible server toggle (Settings > Server).
  Q_PROPERTY(ApiServerController* server READ server CONSTANT)
  /// The colour theme: "light", "dark" or "system" (saved in pagedchat.ini).
  Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY appearanceChanged)
  /// The base font size of messages and controls in pixels, kMinFontSize..kMaxFontSize (saved).
  Q_PROPERTY(int fontSize READ fontSize WRITE setFontSize NOTIFY appearanceChanged)

 public:
  static constexpr int kMinFontSize = 10;
  static constexpr int kMaxFontSize = 28;
  static constexpr int kDefaultFontSize = 15;

  /// Opens (creating) the store in options.dataDir and restores the panes. Throws StoreError.
  /// The model is loaded on the worker thread once start() is called. Without a `translator`
  /// (which must outlive the controller) it makes its own, reading <dataDir>/pagedchat.ini.
  /// Without a `keyStore` (which must outlive the controller) remote endpoints' API keys go to
  /// the system keychain (KeychainApiKeyStore); tests pass a MemoryApiKeyStore.
  explicit AppController(const AppOptions& options, QObject* parent = nullptr, Translator* translator = nullptr,
                         ApiKeyStore* keyStore = nullptr);
  ~AppController() override;

  /// <dataDir>/pagedchat.ini: the pane layout and the UI language.
  static QString settingsFile(const QString& dataDir);

  /// Starts the engine thread and the model load (and, with options.sendOnStart, sends that text
  /// in the first pane once the model is loaded).
  void start();

  /// Creates an empty conversation and shows it in the current pane.
  Q_INVOKABLE void newConversation();
  /// Shows conversation `id`: focuses the pane that already shows it, else opens it in the current pane.
  Q_INVOKABLE void openConversation(qint64 id);
  /// Deletes conversation `id`: hidden at once (panes showing it become empty), deleted for good
  /// when its undo time (undoTimeoutMs) has passed, or on the next start. Several deletions can
  /// be pending at once; undoDelete() brings back the most recent one until then.
  Q_INVOKABLE void deleteConversation(qint64 id);
  /// Restores the conversation deleteConversation() hid last (the others stay pending). It shows
  /// in the list; it opens in the current pane only when that pane is empty.
  Q_INVOKABLE void undoDelete();
  /// Deletes every pending conversation for good now (the undo banner was dismissed).
  Q_INVOKABLE void commitDelete();
  Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
  Q_INVOKABLE void setPinned(qint64 id, bool pinned);
  /// Full-text search (ChatStore::search): a list of {messageId, conversationId, title, role,
  /// snippet (rich text, matches in bold)}.
  Q_INVOKABLE QVariantList search(const QString& text) const;
  /// Opens a search result: the conversation in the current pane, scrolled to the message.
  Q_INVOKABLE void openSearchResult(qint64 conversationId, qint64 messageId);
  /// Writes conversation `id` to `file` (a path or file: URL) as "markdown" or "json". Returns
  /// false and sets errorText when it cannot.
  Q_INVOKABLE bool exportConversation(qint64 id, const QUrl& file, const QString& format);
  /// Imports a JSON file written by exportConversation() and opens it; returns the new
  /// conversation's id, or 0 (errorText says why).
  Q_INVOKABLE qint64 importConversation(const QUrl& file);
  /// The local path a file dialog's URL names: an absolute path typed into the name field (which
  /// the dialog appends to its folder, "/folder//typed/path") wins; cleaned.
  static QString localPathOf(const QUrl& file);
  /// The folder file dialogs start in: the Documents folder if it exists, else the home folder.
  Q_INVOKABLE QUrl documentsFolder() const;
  /// Shows `text` in the window's error banner (errors found in QML, e.g. a dialog that failed).
  Q_INVOKABLE void showError(const QString& text) { setErrorText(text); }
  /// Clears errorText (the banner's close button); writes waiting for a retry stay waiting.
  Q_INVOKABLE void clearError();
  /// The banner's Retry: tries the chat-history writes that failed again (StoreHealth::retryNow()).
  Q_INVOKABLE void retryStore();
  /// How long a deleted conversation can be brought back (ms).
  static constexpr int undoTimeoutMs = 8000;
  /// Changes the undo time of later deletions (tests).
  void setUndoTimeout(int ms) { undoTimeoutMs_ = ms; }
  QString undoDeleteTitle() const { return pendingDeletes_.isEmpty() ? QString() : pendingDeletes_.constLast().title; }
  int undoDeleteCount() const { return static_cast<int>(pendingDeletes_.size()); }

  /// Loads the model file or folder `path` on the worker thread (running requests are stopped
  /// first and keep their text). Once it loads it heads the recent models and is loaded on the
  /// next start. A failure shows in modelLoadError and errorText (file name and reason), and the
  /// model loaded before, if any, is loaded again (with its chat template and tokenizer).
  Q_INVOKABLE void openModel(const QString& path);
  /// openModel() for a file dialog's URL.
  Q_INVOKABLE void openModelUrl(const QUrl& url);
  /// Stops every request and frees the model; the panes say that no model is loaded.
  Q_INVOKABLE void unloadModel();
  /// Validates and saves the engine settings and reloads the model with them (on the worker
  /// thread, with progress). Returns "" or the validation message (nothing changes then).
  Q_INVOKABLE QString applyEngineSettings(int kvCacheMiB, int maxNumSeqs, int blockSize, int numThreads,
                                          const QString& kvCacheDtype = QString());

  EngineClient* engine() const { return engine_; }
  ConversationListModel* conversations() const { return conversations_; }
  PaneListModel* panes() const { return panes_; }
  ThroughputMeter* throughput() const { return throughput_; }
  RecentModelsModel* recentModels() const { return recentModels_; }
  EngineSettings* engineSettings() const { return engineSettings_; }
  EngineMonitor* monitor() const { return monitor_; }
  ChatStore* store() const { return store_.get(); }
  qint64 currentConversationId() const;
  QString dataDir() const { return dataDir_; }
  QString errorText() const { return errorText_; }
  QString errorDetail() const { return errorDetail_; }
  bool errorRetryable() const { return storeErrorShown_; }
  QString modelLoadError() const { return modelLoadError_; }
  Translator* translator() const { return translator_; }
  QString language() const { return translator_->language(); }
  void setLanguage(const QString& language) { translator_->setLanguage(language); }
  BlindCompare* compare() const { return compare_; }
  PaneEndpoints* endpoints() const { return endpoints_; }
  ApiServerController* server() const { return server_; }
  QString theme() const { return theme_; }
  /// Unknown names are ignored.
  void setTheme(const QString& theme);
  int fontSize() const { return fontSize_; }
  void setFontSize(int pixels);  ///< clamped to kMinFontSize..kMaxFontSize

 signals:
  void currentConversationChanged();
  void errorTextChanged();
  void modelLoadErrorChanged();
  void languageChanged();
  void undoDeleteChanged();
  void appearanceChanged();

 private:
  void onConversationsModified();
  void restorePanes();
  void savePanes();
  QString titleOf(qint64 id) const;
  bool conversationExists(qint64 id) const;
  void setErrorText(const QString& text, const QString& detail = QString());
  /// Shows a failed store call in plain language (StoreHealth); with `retry`, the write waits
  /// under `key` and is tried again.
  void reportStoreError(const StoreError& e, const QString& key = QString(), std::function<void()> retry = {});
  /// Follows the store's health: its message in the banner, gone once the writes went through.
  void onStoreHealthChanged();
  void setModelLoadError(const QString& text);
  /// setErrorText() for a model or engine-settings load; such a message goes when the user opens
  /// or unloads a model or applies engine settings that load.
  void setModelErrorText(const QString& text);
  /// A warning of the model load (its chat template, the engine's): in the banner once it loaded.
  void showLoadWarning(const QString& text);
  /// Saves applied engine settings once the reload worked; when it failed, restores the saved
  /// ones and reloads the model with them; a saved KV cache too small for a model goes back to
  /// automatic. A model the user opened that fails to load gives way to the one loaded before.
  /// Says why in errorText.
  void onModelLoadFinished(bool ok, const QString& path, const QString& error);
  /// Reloads the current model with the engine settings.
  void reloadWithEngineSettings();
  /// Deletes pending conversation `id` for good (its undo time ran out).
  void commitDeleteOf(qint64 id);

  /// A soft-deleted conversation waiting for undo or purge.
  struct PendingDelete {
    qint64 id = 0;
    QString title;
    QTimer* timer = nullptr;  ///< single shot: commitDeleteOf(id)
  };

  QString dataDir_;
  std::unique_ptr<ChatStore> store_;
  std::unique_ptr<QSettings> settings_;
  EngineClient* engine_ = nullptr;
  ConversationListModel* conversations_ = nullptr;
  PaneListModel* panes_ = nullptr;
  ThroughputMeter* throughput_ = nullptr;
  RecentModelsModel* recentModels_ = nullptr;
  EngineSettings* engineSettings_ = nullptr;
  EngineMonitor* monitor_ = nullptr;
  BlindCompare* compare_ = nullptr;
  PaneEndpoints* endpoints_ = nullptr;
  ApiServerController* server_ = nullptr;
  QString theme_ = QStringLiteral("system");
  int fontSize_ = kDefaultFontSize;
  Translator* translator_ = nullptr;
  QString sendOnStart_;
  QMetaObject::Connection sendOnStartConnection_;
  QString errorText_;
  QString errorDetail_;
  bool storeErrorShown_ = false;  ///< errorText_ is StoreHealth's message
  QString modelLoadError_;
  bool modelErrorShown_ = false;    ///< errorText_ came from setModelErrorText()
  QString pendingTemplateWarning_;  ///< the warnings of the load in progress, one a line
  QString lastLoadedModel_;         ///< path of the model that loaded last ("" after an unload)
  bool restoring_ = false;
  bool settingsReloadPending_ = false;   ///< the load in progress tries applied engine settings
  QList<PendingDelete> pendingDeletes_;  ///< oldest first
  int undoTimeoutMs_ = undoTimeoutMs;
};
