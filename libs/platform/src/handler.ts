import { z } from 'zod';
import { FREE_METER, type BlockedCode, type Capability, type Noun, type Ok } from '@vcs/contract';
import type { BaseConfig } from './config.ts';
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { Db, Queryable } from './store/db.ts';
import type { Kv } from './store/kv.ts';
import type { Bus } from './bus/types.ts';

/**
 * Who is calling and how, as the gateway established it; travels with every bus request (parsed by an operation's
 * server).
 */
export const callContext = z.object({
  requestId: z.string(),
  account: z.string().nullable(),
  keyId: z.string().nullable(),
  environment: z.enum(['sandbox', 'live']),
  /** Value of the Sandbox-Trigger header, honoured only in the sandbox. */
  trigger: z.string().nullable(),
  /** True when an offer was settled or a handoff completed: the capability executes for real. */
  settled: z.boolean(),
  intentId: z.string().nullable().optional(),
  /**
   * The durable execution this call runs for (commerce's executions): the pillar commits its effects under this id
   * once, ever, and answers a retry with the stored answer (runner.ts).
   */
  executionId: z.string().nullable().optional(),
  mandate: z.unknown().optional(),
});
export type CallContext = z.infer<typeof callContext>;

/**
 * The context of a call no caller's key stands behind (a keyless face, a key check): sandbox, anonymous, no trigger.
 */
export const anonymousContext = (requestId: string): CallContext => ({
  requestId,
  account: null,
  keyId: null,
  environment: 'sandbox',
  trigger: null,
  settled: false,
});

/**
 * What a pillar's code is given. `S` is the process's settings as this code sees them: the base ones by default, a
 * pillar's own besides (`Services<SettingsOf<typeof ownSchema>>`, process.ts) where its code reads them.
 */
export interface Services<S extends BaseConfig = BaseConfig> {
  db: Db;
  kv: Kv;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** Embedded or distributed (process.ts RunMode): said by whoever made the infrastructure. */
  mode: 'embedded' | 'distributed';
  /** `name@version` of the answering service, for provenance. */
  source: string;
  /** This process's settings, parsed once at start (the base settings and the pillar's own `settings` schema). */
  settings: Readonly<S>;
}

/** The provenance block of an answer this process makes. */
export const provenanceOf = (ctx: Pick<CallContext, 'environment'>, services: Pick<Services, 'source'>) => ({
  simulated: ctx.environment === 'sandbox',
  environment: ctx.environment,
  source: services.source,
});

/** A platform operation's plain OK answer of a record (an intent, a handoff, a deal, a connection), whole envelope. */
export const recordAnswer = <V extends Record<string, unknown>>(
  services: Pick<Services, 'source'>,
  ctx: Pick<CallContext, 'environment'>,
  answers: string,
  value: V,
): Ok<V> => ({
  type: 'OK',
  answers,
  value,
  evidence: value,
  provenance: provenanceOf(ctx, services),
  events: [],
  meter: FREE_METER,
});

export interface HandlerTools<S extends BaseConfig = BaseConfig> extends Services<S> {
  ctx: CallContext;
  /** The open transaction the runner will also write the events and facts into. */
  tx: Queryable;
}

export type HandlerResult<V> =
  | { kind: 'OK'; value: V; events?: string[]; eventData?: Record<string, unknown> }
  | { kind: 'EMPTY'; value?: Record<string, unknown> }
  | { kind: 'BLOCKED'; code: BlockedCode; message: string; extra?: Record<string, unknown>; events?: string[] };

export const ok = <V>(
  value: V,
  opts: { events?: string[]; eventData?: Record<string, unknown> } = {},
): HandlerResult<V> => ({ kind: 'OK', value, ...opts });
export const empty = (value: Record<string, unknown> = {}): HandlerResult<never> => ({ kind: 'EMPTY', value });
export const refuse = (
  code: BlockedCode,
  message: string,
  extra?: Record<string, unknown>,
  events?: string[],
): HandlerResult<never> => ({ kind: 'BLOCKED', code, message, extra, events });

export type Handler<C extends Capability<any, any>, S extends BaseConfig = BaseConfig> = (
  input: z.output<C['request']>,
  tools: HandlerTools<S>,
) => Promise<HandlerResult<z.input<C['value']>>>;

/** One handler per verb of a noun: a missing or misspelt verb does not compile. `S`: the settings they read. */
export type NounHandlers<N extends Noun<any>, S extends BaseConfig = BaseConfig> = {
  [K in keyof N['capabilities']]: Handler<N['capabilities'][K], S>;
};
