import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';

/** --on-oversize / --on-malformed with the dead-letter topic they need, checked once. */
export type BadRowPolicy = { readonly action: 'fail' } | { readonly action: 'dead-letter'; readonly topic: string };

export interface BadRowPolicies {
  readonly oversize: BadRowPolicy;
  readonly malformed: BadRowPolicy;
}

type BadRowAction = BadRowPolicy['action'];

/** --on-oversize, --on-malformed and --dead-letter-topic. */
export interface BadRowSettings {
  onOversize: BadRowAction;
  onMalformed: BadRowAction;
  deadLetterTopic?: string | undefined;
}

export function badRowPolicies(config: BadRowSettings): BadRowPolicies {
  const policy = (action: BadRowAction, option: string): BadRowPolicy => {
    if (action === 'fail') return { action };
    if (!config.deadLetterTopic) {
      // The config schema refuses this; a hand-made config reaches here.
      throw new OutboxTailError('CONFIG_INVALID', `--${option}=dead-letter needs --dead-letter-topic`, { exitCode: EXIT.CONFIG });
    }
    return { action, topic: config.deadLetterTopic };
  };
  return { oversize: policy(config.onOversize, 'on-oversize'), malformed: policy(config.onMalformed, 'on-malformed') };
}
