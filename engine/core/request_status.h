// RequestStatus: where a request is in its life (vLLM's v1 RequestStatus, trimmed).
#pragma once

namespace pagedchat {

enum class RequestStatus {
  kWaiting,    ///< queued, not yet admitted
  kRunning,    ///< in the running batch (prefilling or decoding)
  kPreempted,  ///< its blocks were taken back; waits to be recomputed
  kFinished,
};

}  // namespace pagedchat
