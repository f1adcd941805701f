// The app's C++ objects as QML types: each class of pagedchat_app_core that QML sees (as a
// property's type, or as the type of a `required property`) is declared here with QML_FOREIGN,
// so pagedchat_app_core stays free of Qt Qml (the QML module pagedchat_qml depends on it, not the
// other way round). qmltyperegistrar reads app_core's metatypes (qt_extract_metatypes in
// app/CMakeLists.txt) and writes their full descriptions into the module's .qmltypes, which is
// what lets qmllint (and qmlcachegen) check `app.panes.currentPane.busy` and the like.
// All of them are created in C++ (AppController and what it owns): none can be created in QML.
#pragma once

#include <QtQml/qqml.h>  // QML_FOREIGN needs QQmlPrivate::QmlResolved (qqmlprivate.h)
#include <QtQml/qqmlregistration.h>

#include "app/app_errors.h"
#include "app/appearance.h"
#include "app/controllers/app_controller.h"
#include "app/controllers/conversation_list_model.h"
#include "app/controllers/download_controller.h"
#include "app/controllers/engine_monitor.h"
#include "app/controllers/history_controller.h"
#include "app/controllers/local_models.h"
#include "app/controllers/model_controller.h"
#include "app/controllers/recent_models_model.h"
#include "app/engine/chat_backend.h"
#include "app/engine/engine_settings.h"
#include "app/engine/local_chat_backend.h"
#include "app/engine/server/api_server_controller.h"
#include "app/engine/throughput_meter.h"
#include "app/panes/blind_compare.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_endpoints.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_settings.h"
#include "app/panes/pane_state.h"
#include "app/tools/tool_host.h"
#include "app/translator.h"

struct AppControllerForeign {
  Q_GADGET
  QML_FOREIGN(AppController)
  QML_NAMED_ELEMENT(AppController)
  QML_UNCREATABLE("AppController is created in C++.")
};

struct ToolHostForeign {
  Q_GADGET
  QML_FOREIGN(ToolHost)
  QML_NAMED_ELEMENT(ToolHost)
  QML_UNCREATABLE("ToolHost is created in C++.")
};

struct AppErrorsForeign {
  Q_GADGET
  QML_FOREIGN(AppErrors)
  QML_NAMED_ELEMENT(AppErrors)
  QML_UNCREATABLE("AppErrors is created in C++.")
};

struct AppearanceForeign {
  Q_GADGET
  QML_FOREIGN(Appearance)
  QML_NAMED_ELEMENT(Appearance)
  QML_UNCREATABLE("Appearance is created in C++.")
};

struct HistoryControllerForeign {
  Q_GADGET
  QML_FOREIGN(HistoryController)
  QML_NAMED_ELEMENT(HistoryController)
  QML_UNCREATABLE("HistoryController is created in C++.")
};

struct DownloadControllerForeign {
  Q_GADGET
  QML_FOREIGN(DownloadController)
  QML_NAMED_ELEMENT(DownloadController)
  QML_UNCREATABLE("DownloadController is created in C++.")
};

struct LocalModelsForeign {
  Q_GADGET
  QML_FOREIGN(LocalModels)
  QML_NAMED_ELEMENT(LocalModels)
  QML_UNCREATABLE("LocalModels is created in C++.")
};

struct ModelControllerForeign {
  Q_GADGET
  QML_FOREIGN(ModelController)
  QML_NAMED_ELEMENT(ModelController)
  QML_UNCREATABLE("ModelController is created in C++.")
};

// LocalChatBackend's base class (the properties it shares with a remote endpoint's backend).
struct ChatBackendForeign {
  Q_GADGET
  QML_FOREIGN(ChatBackend)
  QML_NAMED_ELEMENT(ChatBackend)
  QML_UNCREATABLE("ChatBackend is created in C++.")
};

struct BlindCompareForeign {
  Q_GADGET
  QML_FOREIGN(BlindCompare)
  QML_NAMED_ELEMENT(BlindCompare)
  QML_UNCREATABLE("BlindCompare is created in C++.")
};

struct PaneStateForeign {
  Q_GADGET
  QML_FOREIGN(PaneState)
  QML_NAMED_ELEMENT(PaneState)
  QML_UNCREATABLE("PaneState is created in C++.")
};

struct ConversationListModelForeign {
  Q_GADGET
  QML_FOREIGN(ConversationListModel)
  QML_NAMED_ELEMENT(ConversationListModel)
  QML_UNCREATABLE("ConversationListModel is created in C++.")
};

struct EngineClientForeign {
  Q_GADGET
  QML_FOREIGN(LocalChatBackend)
  QML_NAMED_ELEMENT(LocalChatBackend)
  QML_UNCREATABLE("LocalChatBackend is created in C++.")
};

struct EngineMonitorForeign {
  Q_GADGET
  QML_FOREIGN(EngineMonitor)
  QML_NAMED_ELEMENT(EngineMonitor)
  QML_UNCREATABLE("EngineMonitor is created in C++.")
};

// Named EngineSettingsValues in QML: EngineSettings is the settings page (EngineSettings.qml).
struct EngineSettingsForeign {
  Q_GADGET
  QML_FOREIGN(EngineSettings)
  QML_NAMED_ELEMENT(EngineSettingsValues)
  QML_UNCREATABLE("EngineSettingsValues is created in C++.")
};

struct MessageListModelForeign {
  Q_GADGET
  QML_FOREIGN(MessageListModel)
  QML_NAMED_ELEMENT(MessageListModel)
  QML_UNCREATABLE("MessageListModel is created in C++.")
};

struct PaneListModelForeign {
  Q_GADGET
  QML_FOREIGN(PaneListModel)
  QML_NAMED_ELEMENT(PaneListModel)
  QML_UNCREATABLE("PaneListModel is created in C++.")
};

struct PaneSettingsForeign {
  Q_GADGET
  QML_FOREIGN(PaneSettings)
  QML_NAMED_ELEMENT(PaneSettings)
  QML_UNCREATABLE("PaneSettings is created in C++.")
};

struct RecentModelsModelForeign {
  Q_GADGET
  QML_FOREIGN(RecentModelsModel)
  QML_NAMED_ELEMENT(RecentModelsModel)
  QML_UNCREATABLE("RecentModelsModel is created in C++.")
};

struct PaneEndpointsForeign {
  Q_GADGET
  QML_FOREIGN(PaneEndpoints)
  QML_NAMED_ELEMENT(PaneEndpoints)
  QML_UNCREATABLE("PaneEndpoints is created in C++.")
};

struct ApiServerControllerForeign {
  Q_GADGET
  QML_FOREIGN(ApiServerController)
  QML_NAMED_ELEMENT(ApiServerController)
  QML_UNCREATABLE("ApiServerController is created in C++.")
};

struct ThroughputMeterForeign {
  Q_GADGET
  QML_FOREIGN(ThroughputMeter)
  QML_NAMED_ELEMENT(ThroughputMeter)
  QML_UNCREATABLE("ThroughputMeter is created in C++.")
};

struct TranslatorForeign {
  Q_GADGET
  QML_FOREIGN(Translator)
  QML_NAMED_ELEMENT(Translator)
  QML_UNCREATABLE("Translator is created in C++.")
};
