import { createRequire } from 'node:module';

/** kafkajs's CHECK_PENDING_REQUESTS_INTERVAL (src/network/requestQueue/index.js). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;
const REQUEST_QUEUE_MODULE = 'kafkajs/src/network/requestQueue/index.js';

interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  __outboxTailFixed?: true;
}

/**
 * kafkajs 2.2.4 schedules its next look at the pending requests after every
 * response, even when none is pending and nothing is throttled, with the
 * delay `throttledUntil - Date.now()` where throttledUntil is -1: about
 * -1.8e12 ms. Node runs that after 1 ms, so an idle connection spins a 1 ms
 * timer forever, and Node 24 prints a TimeoutNegativeWarning on the relay's
 * stderr (tulios/kafkajs#1751 and #1704, open, with no release since 2023).
 * This schedules the look only when it has something to do: pending
 * requests (at the end of a throttle, or every 10 ms as kafkajs does) or a
 * throttle that ends later; a request that arrives meanwhile is checked by
 * kafkajs's push() itself. Installed once per thread, before our clients
 * connect; returns false (and changes nothing) where kafkajs's internals moved.
 */
export function installRequestQueueFix(): boolean {
  try {
    const RequestQueue = createRequire(import.meta.url)(REQUEST_QUEUE_MODULE) as { prototype: RequestQueueLike };
    const proto = RequestQueue.prototype;
    if (proto.__outboxTailFixed) return true;
    if (typeof proto.scheduleCheckPendingRequests !== 'function' || typeof proto.checkPendingRequests !== 'function') return false;
    proto.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueLike) {
      if (this.throttleCheckTimeoutId) return;
      const untilUnthrottled = this.throttledUntil - Date.now();
      const delay = this.pending.length > 0 ? (untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS) : untilUnthrottled;
      if (delay <= 0) return;
      this.throttleCheckTimeoutId = setTimeout(() => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      }, delay);
    };
    proto.__outboxTailFixed = true;
    return true;
  } catch {
    return false;
  }
}
