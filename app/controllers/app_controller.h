// AppController: the application's root object, handed to QML as `app`.
#pragma once

#include <QObject>
#include <QString>

#include <memory>

#include "app/app_errors.h"
#include "app/app_options.h"
#include "app/appearance.h"
#include "app/controllers/conversation_list_model.h"
#include "app/controllers/download_controller.h"
#include "app/controllers/engine_monitor.h"
#include "app/controllers/history_controller.h"
#include "app/controllers/local_models.h"
#include "app/controllers/model_controller.h"
#include "app/controllers/recent_models_model.h"
#include "app/engine/engine_settings.h"
#include "app/engine/local_chat_backend.h"
#include "app/engine/server/api_server_controller.h"
#include "app/engine/throughput_meter.h"
#include "app/panes/blind_compare.h"
#include "app/panes/pane_endpoints.h"
#include "app/panes/pane_list_model.h"
#include "app/store/chat_store.h"
#include "app/tools/tool_host.h"
#include "app/translator.h"

class ApiKeyStore;
class QSettings;

/// Owns the store, the engine client (and through it the worker thread), the conversation list,
/// the panes, and one controller per concern the window uses: the history's actions
/// (HistoryController), the models (ModelController), the appearance (Appearance) and the error
/// banner (AppErrors). Remembers the panes (how many, which conversation each shows, their
/// settings and endpoints) in `<dataDir>/pagedchat.ini` and reopens them on the next start; with
/// no saved layout, pane 1 shows the newest conversation.
class AppController : public QObject {
  Q_OBJECT
  Q_PROPERTY(LocalChatBackend* engine READ engine CONSTANT)
  Q_PROPERTY(ConversationListModel* conversations READ conversations CONSTANT)
  Q_PROPERTY(PaneListModel* panes READ panes CONSTANT)
  Q_PROPERTY(ThroughputMeter* throughput READ throughput CONSTANT)
  /// The live engine view's data.
  Q_PROPERTY(EngineMonitor* monitor READ monitor CONSTANT)
  Q_PROPERTY(QString dataDir READ dataDir CONSTANT)
  Q_PROPERTY(Translator* translator READ translator CONSTANT)
  Q_PROPERTY(BlindCompare* compare READ compare CONSTANT)
  /// Remote endpoints as panes (their URLs, models and keychain-held API keys).
  Q_PROPERTY(PaneEndpoints* endpoints READ endpoints CONSTANT)
  /// The OpenAI-compatible server toggle (Settings > Server).
  Q_PROPERTY(ApiServerController* server READ server CONSTANT)
  /// The conversation history's actions: new, open, rename, pin, delete and undo, search,
  /// export, import.
  Q_PROPERTY(HistoryController* history READ history CONSTANT)
  /// Opening and unloading models, the recent models, the engine settings.
  Q_PROPERTY(ModelController* models READ models CONSTANT)
  /// The local models panes answer with besides the main one (a pane's settings, Answered by).
  Q_PROPERTY(LocalModels* localModels READ localModels CONSTANT)
  /// Models from the Hugging Face hub: search, files, download, the models folder.
  Q_PROPERTY(DownloadController* downloads READ downloads CONSTANT)
  /// The theme, the font size, the UI language.
  Q_PROPERTY(Appearance* appearance READ appearance CONSTANT)
  /// The window's error banner.
  Q_PROPERTY(AppErrors* errors READ errors CONSTANT)
  /// The MCP tool servers the panes offer to models (Settings → Tools).
  Q_PROPERTY(ToolHost* tools READ tools CONSTANT)

 public:
  /// Opens (creating) the store in options.dataDir and restores the panes. Throws StoreError.
  /// The model is loaded on the worker thread once start() is called. Without a `translator`
  /// (which must outlive the controller) it makes its own, reading <dataDir>/pagedchat.ini.
  /// Without a `keyStore` (which must outlive the controller) remote endpoints' API keys go to
  /// the system keychain (KeychainApiKeyStore); tests pass a MemoryApiKeyStore.
  explicit AppController(const AppOptions& options, QObject* parent = nullptr, Translator* translator = nullptr,
                         ApiKeyStore* keyStore = nullptr);
  ~AppController() override;

  /// <dataDir>/pagedchat.ini: the pane layout, the appearance, the recent models, the engine
  /// and server settings.
  static QString settingsFile(const QString& dataDir);

  /// Starts the engine thread and the model load (and, with options.sendOnStart, sends that text
  /// in the first pane once the model is loaded).
  void start();

  LocalChatBackend* engine() const { return engine_; }
  ConversationListModel* conversations() const { return conversations_; }
  PaneListModel* panes() const { return panes_; }
  ThroughputMeter* throughput() const { return throughput_; }
  EngineMonitor* monitor() const { return monitor_; }
  ChatStore* store() const { return store_.get(); }
  QString dataDir() const { return dataDir_; }
  Translator* translator() const { return translator_; }
  BlindCompare* compare() const { return compare_; }
  PaneEndpoints* endpoints() const { return endpoints_; }
  ApiServerController* server() const { return server_; }
  HistoryController* history() const { return history_; }
  ModelController* models() const { return models_; }
  DownloadController* downloads() const { return downloads_; }
  LocalModels* localModels() const { return localModels_; }
  Appearance* appearance() const { return appearance_; }
  AppErrors* errors() const { return errors_; }
  ToolHost* tools() const { return tools_; }

 private:
  void restorePanes();
  void savePanes();

  QString dataDir_;
  std::unique_ptr<ChatStore> store_;
  std::unique_ptr<QSettings> settings_;
  AppErrors* errors_ = nullptr;
  ToolHost* tools_ = nullptr;  ///< freed after the panes that run its calls
  LocalChatBackend* engine_ = nullptr;
  ConversationListModel* conversations_ = nullptr;
  PaneListModel* panes_ = nullptr;
  ThroughputMeter* throughput_ = nullptr;
  EngineMonitor* monitor_ = nullptr;
  BlindCompare* compare_ = nullptr;
  PaneEndpoints* endpoints_ = nullptr;
  ApiServerController* server_ = nullptr;
  HistoryController* history_ = nullptr;
  ModelController* models_ = nullptr;
  DownloadController* downloads_ = nullptr;
  LocalModels* localModels_ = nullptr;  ///< freed after the panes that use its models, before engine_
  Appearance* appearance_ = nullptr;
  Translator* translator_ = nullptr;
  QString sendOnStart_;
  QMetaObject::Connection sendOnStartConnection_;
  bool restoring_ = false;
};
