// Command line and default locations of the pagedchat application.
#pragma once

#include <QString>
#include <QStringList>

#include "engine/config.h"

/// Where the app takes its model, tokenizer and data from.
struct AppOptions {
  QString modelPath;      ///< a model file or folder (see EngineConfig::model)
  QString tokenizerPath;  ///< optional explicit sentencepiece .model
  QString dataDir;        ///< folder of the SQLite store and the pane settings
};

/// The model used when neither --model nor $PAGEDCHAT_MODEL is given: stories260K from the
/// shared models folder, as an absolute path compiled in by CMake (PAGEDCHAT_DEFAULT_MODEL).
QString defaultModelPath();
/// QStandardPaths::AppDataLocation (application name must be set first).
QString defaultDataDir();

/// Parses `pagedchat [--model PATH] [--tokenizer PATH] [--data-dir DIR]`. Precedence for the
/// model: --model, then $PAGEDCHAT_MODEL, then defaultModelPath(). Prints help/version and exits
/// for --help/--version, and prints the error and exits with status 1 on unknown options.
/// `arguments` includes the program name, as QCoreApplication::arguments().
AppOptions parseAppOptions(const QStringList& arguments);

/// The engine settings the app runs with for `options`.
pagedchat::EngineConfig engineConfigFor(const AppOptions& options);
