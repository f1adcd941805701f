// AppController: the application's root object, handed to QML as `app`.
#pragma once

#include <QObject>
#include <QString>

#include <memory>

#include "app/app_options.h"
#include "app/blind_compare.h"
#include "app/chat_store.h"
#include "app/conversation_list_model.h"
#include "app/engine_client.h"
#include "app/pane_list_model.h"
#include "app/throughput_meter.h"
#include "app/translator.h"

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
  Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentConversationChanged)
  Q_PROPERTY(QString dataDir READ dataDir CONSTANT)
  Q_PROPERTY(QString errorText READ errorText NOTIFY errorTextChanged)
  /// The UI language: "system", "en" or "ko" (saved in pagedchat.ini; switches at once).
  Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
  Q_PROPERTY(Translator* translator READ translator CONSTANT)
  Q_PROPERTY(BlindCompare* compare READ compare CONSTANT)
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
  explicit AppController(const AppOptions& options, QObject* parent = nullptr,
                         Translator* translator = nullptr);
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
  /// Deletes conversation `id` and its messages; panes showing it become empty.
  Q_INVOKABLE void deleteConversation(qint64 id);

  EngineClient* engine() const { return engine_; }
  ConversationListModel* conversations() const { return conversations_; }
  PaneListModel* panes() const { return panes_; }
  ThroughputMeter* throughput() const { return throughput_; }
  ChatStore* store() const { return store_.get(); }
  qint64 currentConversationId() const;
  QString dataDir() const { return dataDir_; }
  QString errorText() const { return errorText_; }
  Translator* translator() const { return translator_; }
  QString language() const { return translator_->language(); }
  void setLanguage(const QString& language) { translator_->setLanguage(language); }
  BlindCompare* compare() const { return compare_; }
  QString theme() const { return theme_; }
  /// Unknown names are ignored.
  void setTheme(const QString& theme);
  int fontSize() const { return fontSize_; }
  void setFontSize(int pixels);  ///< clamped to kMinFontSize..kMaxFontSize

 signals:
  void currentConversationChanged();
  void errorTextChanged();
  void languageChanged();
  void appearanceChanged();

 private:
  void onConversationsModified();
  void restorePanes();
  void savePanes();
  QString titleOf(qint64 id) const;
  void setErrorText(const QString& text);

  QString dataDir_;
  std::unique_ptr<ChatStore> store_;
  std::unique_ptr<QSettings> settings_;
  EngineClient* engine_ = nullptr;
  ConversationListModel* conversations_ = nullptr;
  PaneListModel* panes_ = nullptr;
  ThroughputMeter* throughput_ = nullptr;
  BlindCompare* compare_ = nullptr;
  QString theme_ = QStringLiteral("system");
  int fontSize_ = kDefaultFontSize;
  Translator* translator_ = nullptr;
  QString sendOnStart_;
  QMetaObject::Connection sendOnStartConnection_;
  QString errorText_;
  bool restoring_ = false;
};
