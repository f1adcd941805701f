// Command line and default locations of the pagedchat application.
#pragma once

#include <QString>
#include <QStringList>

#include "engine/config.h"

/// Where the app takes its model, tokenizer and data from.
struct AppOptions {
  QString modelPath;  ///< a model file or folder (see EngineConfig::model)
  /// The model was named (--model or $PAGEDCHAT_MODEL): it wins over the one remembered from
  /// the last run. Without it, modelPath is the compiled-in default, used when none is remembered.
  bool modelGiven = false;
  QString tokenizerPath;                          ///< optional explicit sentencepiece .model
  QString dataDir;                                ///< folder of the SQLite store and the pane settings
  QString chatTemplate = QStringLiteral("auto");  ///< --chat-template: a template name, or auto
  QString device = QStringLiteral("cpu");         ///< --device: EngineConfig::device
  /// Hidden --send TEXT: sent in the first pane once the model is loaded (used by the tests that
  /// drive the real binary, which cannot type into an offscreen window).
  QString sendOnStart;
};

/// The model used when neither --model nor $PAGEDCHAT_MODEL is given: stories260K from the
/// shared models folder, as an absolute path compiled in by CMake (PAGEDCHAT_DEFAULT_MODEL).
QString defaultModelPath();
/// QStandardPaths::AppDataLocation (application name must be set first).
QString defaultDataDir();

/// Parses `pagedchat [--model PATH] [--tokenizer PATH] [--data-dir DIR] [--chat-template NAME]`. Precedence for the
/// model: --model, then $PAGEDCHAT_MODEL, then defaultModelPath(). Prints help/version and exits
/// for --help/--version, and prints the error and exits with status 1 on unknown options.
/// `arguments` includes the program name, as QCoreApplication::arguments(). Needs only a
/// QCoreApplication, so main() runs it before creating the QGuiApplication (help and errors then
/// print without a display); Qt's own GUI options (-platform, -style, ...) are accepted and left
/// to QGuiApplication. Single-dash words are long options (`-platform offscreen`, `-model PATH`).
AppOptions parseAppOptions(const QStringList& arguments);

/// The engine settings the app runs with for `options`.
pagedchat::EngineConfig engineConfigFor(const AppOptions& options);
