/** The one transport boundary: request-reply for capabilities, a durable stream for events. */
export type Headers = Record<string, string>;
export interface BusMessage {
  data: Uint8Array;
  headers: Headers;
}
export type Responder = (req: BusMessage) => Promise<{ data: Uint8Array; headers?: Headers }>;

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
  /** Subject filter such as `evt.>` or `evt.TotalLoss.>`. */
  filter: string;
  ackWaitMs?: number;
  /**
   * Durables this one replaces: when it is first made and one of them exists, it starts where they had all
   * acknowledged, and they are removed (a renamed or merged consumer neither replays the stream nor skips events).
   */
  continues?: string[];
}

export interface Bus {
  readonly kind: 'nats' | 'memory';
  /** Send a request; rejects with BusError('no-responders' | 'timeout' | 'closed'). */
  request(subject: string, data: Uint8Array, opts: { timeoutMs: number; headers?: Headers }): Promise<BusMessage>;
  /** Answer requests on a subject; replicas with the same queue share the load. */
  serve(subject: string, queue: string, responder: Responder): { stop(): void };
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
