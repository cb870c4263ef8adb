/**
 * The longest delay a Node timer takes: setTimeout and setInterval store it
 * as a signed 32-bit integer, and a longer one fires after 1 ms (with a
 * TimeoutOverflowWarning), so a huge timeout would act as almost none.
 * Every *Ms option is bounded by it.
 */
export const MAX_TIMER_MS = 2_147_483_647;
