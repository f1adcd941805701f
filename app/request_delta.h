// Plain value types that travel from the engine worker thread to the GUI thread in queued signals.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

/// What one engine step produced for one request: only the new text (RequestOutputKind::kDelta),
/// how many tokens it came from, and whether the request finished (and why).
struct RequestDelta {
  QString requestId;
  QString text;            ///< new UTF-8 text since the previous delta (may be empty)
  int newTokens = 0;       ///< tokens generated in this step for this request
  bool finished = false;
  QString finishReason;    ///< "stop", "length" or "abort" once finished, else empty
  int numPromptTokens = 0; ///< the request's prompt length (the rendered conversation), in tokens
  int numCachedTokens = 0; ///< of those, tokens found in the prefix cache (a conversation's earlier turns)
};

/// Engine counters sampled right after one step, for the status line.
struct EngineStepStats {
  int numRunning = 0;
  int numWaiting = 0;
  qint64 numSteps = 0;               ///< steps since the model was loaded
  qint64 numGenerationTokens = 0;    ///< tokens generated since the model was loaded
  double stepMs = 0.0;               ///< wall time of this step
};

Q_DECLARE_METATYPE(RequestDelta)
Q_DECLARE_METATYPE(EngineStepStats)
