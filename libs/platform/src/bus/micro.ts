import type { Msg, NatsConnection } from '@nats-io/nats-core';
import { Svcm, type NamedEndpointStats, type Service } from '@nats-io/services';
import type { ServiceIdentity } from './types.ts';

/** What an endpoint has answered, counted when each reply is handed to the connection. */
export class EndpointFigures {
  private requests = 0;
  private errors = 0;
  private ns = 0;
  private lastError: string | undefined;

  /** One request answered after `ms` (from its arrival to its reply handed over); `failed` when it failed here. */
  answered(ms: number, failed: string | undefined) {
    this.requests++;
    this.ns += Math.round(ms * 1e6);
    if (failed === undefined) return;
    this.errors++;
    this.lastError = failed;
  }

  /** The protocol's figures (nanoseconds). */
  report(): Pick<
    NamedEndpointStats,
    'num_requests' | 'num_errors' | 'processing_time' | 'average_processing_time' | 'last_error'
  > {
    return {
      num_requests: this.requests,
      num_errors: this.errors,
      processing_time: this.ns,
      average_processing_time: this.requests ? Math.round(this.ns / this.requests) : 0,
      last_error: this.lastError,
    };
  }
}

/**
 * One service of NATS's micro-services protocol, through `@nats-io/services`: it answers `$SRV.PING`, `$SRV.INFO` and
 * `$SRV.STATS` (plain, by name, by name and id) and subscribes each endpoint in its queue group. The handler is ours:
 * it replies through the bus's own framing and batched publishes. The library times a handler until it returns and
 * counts only synchronous throws, and ours answer later, so each endpoint's figures are kept here (EndpointFigures)
 * and STATS reports them in place of its own.
 */
export class MicroService {
  private readonly service: Promise<Service>;
  private readonly figures = new Map<string, EndpointFigures>();
  /** Endpoints added and not yet stopped: the service stops with the last one. */
  private live = 0;
  private stopped: Promise<unknown> | undefined;

  constructor(nc: NatsConnection, identity: ServiceIdentity) {
    // Rejects only for a name or version the protocol refuses: made from the code (pillar definitions), never from a
    // setting, so it fails every test that starts a pillar on NATS.
    this.service = new Svcm(nc).add({ ...identity }).then((service) => {
      const stats = service.stats.bind(service);
      service.stats = async () => {
        const s = await stats();
        for (const e of s.endpoints ?? []) Object.assign(e, this.figures.get(e.name)?.report());
        return s;
      };
      return service;
    });
  }

  /**
   * Serve `subject` in `queue` as the endpoint `name` (a capability or operation name: its dots become `_`, as the
   * protocol's names are letters, digits, `-` and `_`). `handle` gets each request and the figures to count it in.
   */
  add(name: string, subject: string, queue: string, handle: (msg: Msg, figures: EndpointFigures) => void) {
    const endpoint = name.replaceAll('.', '_');
    const figures = new EndpointFigures();
    this.figures.set(endpoint, figures);
    this.live++;
    void this.service.then((service) =>
      service.addEndpoint(endpoint, {
        subject,
        queue,
        handler: (err, msg) => {
          if (!err) handle(msg, figures);
        },
      }),
    );
    let done = false;
    return {
      stop: () => {
        if (done) return;
        done = true;
        if (--this.live === 0) void this.stop();
      },
    };
  }

  /** Stop answering: every endpoint and the discovery subjects drain (requests already received are answered). */
  stop(): Promise<unknown> {
    this.stopped ??= this.service.then((service) => service.stop());
    return this.stopped;
  }
}
