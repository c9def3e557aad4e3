/** The one transport boundary: request-reply for capabilities, a durable stream for events. */
export type Headers = Record<string, string>;
export interface BusMessage {
  data: Uint8Array;
  headers: Headers;
}
export interface Reply {
  data: Uint8Array;
  headers?: Headers;
  /**
   * Set when this side failed (a 5xx answer, `<status> <code>: <message>`): NATS's service discovery counts it as an
   * error of its endpoint, with this as its last error. The caller reads only `data` and `headers`.
   */
  failed?: string;
}
export type Responder = (req: BusMessage) => Promise<Reply>;

/** A service as NATS's micro-services discovery (`$SRV.PING|INFO|STATS`) lists it: one per pillar process. */
export interface ServiceIdentity {
  /** `data`, `services-pillar`…: what `$SRV.<verb>.<name>` addresses (letters, digits, `-`, `_`). */
  name: string;
  /** Semantic version. */
  version: string;
  description: string;
  metadata: Record<string, string>;
}
/** The service a subject is served for, and its endpoint's name there (`signing.status`). */
export interface ServedAs {
  service: ServiceIdentity;
  endpoint: string;
}

export interface EventDelivery {
  data: Uint8Array;
  subject: string;
  /** The message's headers (`traceparent` when the event was written in a trace); absent when it has none. */
  headers?: Headers;
  /** Times this message was delivered (1 on the first delivery). */
  redeliveryCount: number;
  ack(): void;
  /** Ask for redelivery after `delayMs`. */
  nak(delayMs?: number): void;
}

export interface ConsumeOptions {
  /** Durable consumer name: replicas with the same name share the work. */
  durable: string;
  /**
   * The one subject filter (NATS 2.9 takes one per consumer), such as `evt.>`, `evt.TotalLoss.>` or one of the
   * contract's (`ACCOUNT_EVENTS`, `DEAL_EVENTS`: subjects.ts): the stream server, or the in-process bus, never hands
   * the consumer an event outside it. A durable that existed with another filter takes this one.
   */
  filter: string;
  ackWaitMs?: number;
  /**
   * Durables this one replaces: when it is first made and one of them exists, it starts where they had all
   * acknowledged, and they are removed (a renamed or merged consumer neither replays the stream nor skips events).
   */
  continues?: string[];
}

/** Where a bus says what an operator must know of a call (a time-out, a late reply): one warn line each. */
export type BusLog = { warn(fields: object, msg: string): void };

/** A subject's pillar and operation: `cap.data.vehicle.decode` → data, vehicle.decode (`sys.` operations alike). */
export function operationOf(subject: string): { pillar: string; operation: string } {
  const [, pillar = '', ...rest] = subject.split('.');
  return { pillar, operation: rest.join('.') };
}

export interface Bus {
  readonly kind: 'nats' | 'memory';
  /** This process's logger, for the lines a caller of the bus writes (bus/call.ts); none: nothing is said. */
  readonly logger?: BusLog;
  /** Send a request; rejects with BusError('no-responders' | 'timeout' | 'closed'). */
  request(subject: string, data: Uint8Array, opts: { timeoutMs: number; headers?: Headers }): Promise<BusMessage>;
  /**
   * Answer requests on a subject; replicas with the same queue share the load. Given `as`, on NATS the subject is an
   * endpoint of that service, listed and counted by NATS's service discovery; a service's endpoints stop together,
   * when the last of them is stopped (the protocol has no way to remove one). The in-process bus has no discovery.
   */
  serve(subject: string, queue: string, responder: Responder, as?: ServedAs): { stop(): void };
  /**
   * Publish an event on the stream; `msgId` lets the stream drop duplicates; `headers` travel with it (`traceparent`).
   */
  publishEvent(subject: string, data: Uint8Array, msgId: string, headers?: Headers): Promise<void>;
  consumeEvents(opts: ConsumeOptions, handler: (d: EventDelivery) => Promise<void>): Promise<{ stop(): Promise<void> }>;
  /** Plain fan-out publish (no persistence), for cache invalidations and the like. */
  broadcast(subject: string, data: Uint8Array): void;
  onBroadcast(subject: string, handler: (data: Uint8Array) => void): { stop(): void };
  isConnected(): boolean;
  /** Stop serving, let in-flight replies finish, then close. */
  drain(): Promise<void>;
}

export class BusError extends Error {
  constructor(
    public readonly code: 'no-responders' | 'timeout' | 'closed',
    message: string,
  ) {
    super(message);
  }
}

export const enc = new TextEncoder();
export const dec = new TextDecoder();
