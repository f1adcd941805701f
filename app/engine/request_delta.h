// Plain value types that travel from the engine worker thread to the GUI thread in queued signals.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

#include <optional>

#include "engine/finish_reason.h"

/// What one engine step produced for one request: only the new text (RequestOutputKind::kDelta),
/// how many tokens it came from, and whether the request finished (and why).
struct RequestDelta {
  QString requestId;
  QString text;  ///< new UTF-8 text since the previous delta (may be empty)
  /// Where `text` came from accepted speculative draft tokens (CompletionOutput::draft_spans):
  /// [begin, end) pairs of UTF-16 offsets into `text`, flattened, in order; empty for none.
  QList<int> draftSpans{};
  int newTokens = 0;  ///< tokens generated in this step for this request
  bool finished = false;
  std::optional<pagedchat::FinishReason> finishReason;  ///< set once finished
  int numPromptTokens = 0;  ///< the request's prompt length (the rendered conversation), in tokens
  int numCachedTokens = 0;  ///< of those, tokens found in the prefix cache (a conversation's earlier turns)
  /// Engine time from the request's first generated token to its latest, seconds
  /// (RequestMetrics::last_token_time - first_token_time): the decode time of the tokens after the
  /// first. 0 before the second token, and from a backend without engine timings (remote).
  double decodeSeconds = 0.0;
  /// Prompt tokens whose K/V are computed so far (numPromptTokens when the prompt is read), while
  /// the prompt is being read; -1 when unknown.
  int numComputedPromptTokens = -1;
  /// On the last delta of a request that offered tools: the calls the reply made, an OpenAI
  /// tool_calls array's JSON text (ToolReplySplitter::toolCallsJson()); "" for none. The text of
  /// such a request's deltas leaves the calls out.
  QString toolCalls{};
  /// Speculative decoding so far (cumulative; 0 without it or from a remote backend): steps that
  /// verified drafts, draft tokens verified, and of those accepted (RequestMetrics' counters).
  int numSpecDrafts = 0;
  int numSpecDraftTokens = 0;
  /// Who proposed them (RequestMetrics::spec_method: "ngram", "mtp", ...; "" without).
  QString specMethod{};
  int numSpecAcceptedTokens = 0;
};

/// Engine counters sampled right after one step, for the status line.
struct EngineStepStats {
  int numRunning = 0;
  int numWaiting = 0;
  qint64 numSteps = 0;             ///< steps since the model was loaded
  qint64 numGenerationTokens = 0;  ///< tokens generated since the model was loaded
  double stepMs = 0.0;             ///< wall time of this step
};

/// One unfinished request as the engine view lists it.
struct EngineRequestInfo {
  QString requestId;
  bool running = false;  ///< in the running batch (else waiting or preempted)
  int promptTokens = 0;
  int computedTokens = 0;  ///< tokens whose K/V are in the cache
  int outputTokens = 0;
  int blocks = 0;           ///< length of its block table
  bool fromServer = false;  ///< sent by a client of the app's OpenAI server (not a pane)
};

/// A compact picture of the engine for the engine view (EngineMonitor), taken on the worker
/// thread after a step, at most ~10 times a second. Per block only an owner index and a flag
/// byte travel: a few bytes per block, however many blocks the cache has.
struct EngineSnapshot {
  enum BlockFlag : quint8 { kUsed = 1, kShared = 2, kCached = 4 };
  int numRunning = 0;
  int numWaiting = 0;
  int totalBlocks = 0;
  int usedBlocks = 0;    ///< ref count > 0
  int freeBlocks = 0;    ///< ref count 0, not in the prefix cache
  int cachedBlocks = 0;  ///< ref count 0, kept in the prefix cache (reusable, evictable)
  int sharedBlocks = 0;  ///< ref count > 1 (a prefix shared by several requests)
  qint64 prefixCacheQueries = 0;
  qint64 prefixCacheHits = 0;
  qint64 numGenerationTokens = 0;
  qint64 numPromptTokens = 0;
  qint64 numPreemptions = 0;
  int stateSlots = 0;                 ///< recurrent state slots (hybrid models; 0 without recurrent layers)
  int stateSlotsHeld = 0;             ///< held by running requests (live and rolling checkpoint)
  int stateCheckpoints = 0;           ///< prefix-cache checkpoints of the recurrent state
  QList<EngineRequestInfo> requests;  ///< unfinished requests, running first
  /// Per block: index into `requests` of the first running request holding it, or -1.
  QList<qint32> blockOwner;
  /// Per block: BlockFlag bits.
  QByteArray blockFlags;
};

Q_DECLARE_METATYPE(RequestDelta)
Q_DECLARE_METATYPE(EngineRequestInfo)
Q_DECLARE_METATYPE(EngineSnapshot)
Q_DECLARE_METATYPE(EngineStepStats)
