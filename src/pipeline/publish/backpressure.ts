/** The --max-in-flight-* options. */
export interface InFlightLimits {
  readonly maxInFlightMessages: number;
  readonly maxInFlightBytes: number;
}

/** Records handed to the publishing stage and not yet acknowledged by Kafka. */
export interface InFlight {
  readonly messages: number;
  readonly bytes: number;
}

/** Stop reading the replication stream once either limit is reached: memory stays bounded whatever Kafka does. */
export function shouldPause(inFlight: InFlight, limits: InFlightLimits): boolean {
  return inFlight.messages >= limits.maxInFlightMessages || inFlight.bytes >= limits.maxInFlightBytes;
}

/** Read again once both are under half their limit, so the stream does not flap between paused and flowing. */
export function shouldResume(inFlight: InFlight, limits: InFlightLimits): boolean {
  return inFlight.messages < limits.maxInFlightMessages / 2 && inFlight.bytes < limits.maxInFlightBytes / 2;
}
