#include "app/app_options.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QStandardPaths>

#ifndef PAGEDCHAT_DEFAULT_MODEL
#define PAGEDCHAT_DEFAULT_MODEL ""
#endif

QString defaultModelPath() {
  const QByteArray env = qgetenv("PAGEDCHAT_MODEL");
  if (!env.isEmpty()) return QString::fromLocal8Bit(env);
  return QDir::cleanPath(QString::fromUtf8(PAGEDCHAT_DEFAULT_MODEL));
}

QString defaultDataDir() { return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation); }

namespace {
void addHidden(QCommandLineParser& parser, QCommandLineOption option) {
  option.setFlags(QCommandLineOption::HiddenFromHelp);
  parser.addOption(option);
}
}  // namespace

AppOptions parseAppOptions(const QStringList& arguments) {
  QCommandLineParser parser;
  parser.setApplicationDescription(QCoreApplication::translate("AppOptions", "Chat with a local language model."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption model(
      QStringLiteral("model"),
      QCoreApplication::translate("AppOptions", "Model file or folder (default: $PAGEDCHAT_MODEL, else %1).")
          .arg(QDir::cleanPath(QString::fromUtf8(PAGEDCHAT_DEFAULT_MODEL))),
      QStringLiteral("PATH"));
  const QCommandLineOption tokenizer(
      QStringLiteral("tokenizer"),
      QCoreApplication::translate("AppOptions", "Sentencepiece tokenizer model (default: beside the model)."),
      QStringLiteral("PATH"));
  const QCommandLineOption dataDir(
      QStringLiteral("data-dir"),
      QCoreApplication::translate("AppOptions", "Folder for the chat database (default: %1).").arg(defaultDataDir()),
      QStringLiteral("DIR"));
  const QCommandLineOption send(QStringLiteral("send"), QString(), QStringLiteral("TEXT"));
  parser.addOption(model);
  parser.addOption(tokenizer);
  const QCommandLineOption chatTemplate(
      QStringLiteral("chat-template"),
      QCoreApplication::translate("AppOptions",
                                  "Chat template: auto (the model's own), a built-in (llama-2, mistral, chatml, "
                                  "zephyr, vicuna, llama3, deepseek-r1, phi3, gemma, gemma4, none) or a .jinja file."),
      QStringLiteral("name"), QStringLiteral("auto"));
  parser.addOption(chatTemplate);
  parser.addOption(dataDir);
  const QCommandLineOption device(
      QStringLiteral("device"),
      QCoreApplication::translate("AppOptions", "Where the model runs: cpu, cuda, cuda:N or auto (default: cpu)."),
      QStringLiteral("device"), QStringLiteral("cpu"));
  parser.addOption(device);
  addHidden(parser, send);
  // Options QGuiApplication (and Qt Quick Controls) take out of argv themselves: accepted here so
  // that parsing before the GUI exists does not call them unknown.
  for (const char* name :
       {"platform", "platformpluginpath", "platformtheme", "plugin", "display", "qwindowgeometry", "geometry",
        "qwindowtitle", "title", "qwindowicon", "icon", "session", "name", "style", "qmljsdebugger"})
    addHidden(parser, QCommandLineOption(QString::fromLatin1(name), QString(), QStringLiteral("VALUE")));
  for (const char* name : {"reverse", "nograb", "dograb", "testability"})
    addHidden(parser, QCommandLineOption(QString::fromLatin1(name)));
  parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
  parser.process(arguments);

  AppOptions options;
  options.modelPath = parser.isSet(model) ? parser.value(model) : defaultModelPath();
  options.modelGiven = parser.isSet(model) || !qgetenv("PAGEDCHAT_MODEL").isEmpty();
  options.tokenizerPath = parser.value(tokenizer);
  options.chatTemplate = parser.value(chatTemplate);
  options.dataDir = parser.isSet(dataDir) ? parser.value(dataDir) : defaultDataDir();
  options.sendOnStart = parser.value(send);
  options.device = parser.value(device);
  return options;
}

pagedchat::EngineConfig engineConfigFor(const AppOptions& options) {
  pagedchat::EngineConfig config;
  config.model = options.modelPath.toStdString();
  config.tokenizer = options.tokenizerPath.toStdString();
  config.device = options.device.toStdString();
  return config;
}
