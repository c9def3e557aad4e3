import {
  blocked,
  blockedCodes,
  claimWith,
  isFinal,
  isLeased,
  newId,
  nextState,
  opTimeouts,
  ops,
  statusOfCode,
  type BlockedCode,
  type Blocked,
  type BlockedAnswer,
  type DealStep,
  type DealValue,
  type OpAnswer,
  type OpReply,
  type OpReplyOf,
} from '@vcs/contract';
import {
  busCallerOf,
  callOp,
  LEASE_MARGIN_MS,
  recordAnswer,
  type CallContext,
  type Queryable,
  type Services,
} from '@vcs/platform';
import { kindOf, stepDef } from './checklist.ts';
import { appendEvent, factOf, loadDeal, loadEvents, saveDeal, toValue, type DealRow } from './store.ts';

/** How long an advance waits for a step that is running elsewhere before answering 409. */
const BUSY_WAIT_MS = 2_000;

/**
 * A step claimed `running` is held for the run it covers (commerce's executions.run, the longest a step's call
 * takes) under the one lease (platform lease.ts); past it, its process is taken to have died and it may be claimed
 * again — the same attempt, so the same durable execution.
 */
const stepLeaseEnd = (s: Services, startedAt: string) =>
  new Date(Date.parse(startedAt) + opTimeouts(ops.executionsRun, s.settings.BUS_TIMEOUT_MS).waitMs + LEASE_MARGIN_MS);

export const refusal = blocked;

/** What running one step came to, with the answer its operation gave (typed by its declaration). */
export type StepResult =
  | { outcome: 'done'; answer: OpAnswer<typeof ops.executionsRun> }
  /** Its execution's outcome is not known yet: the step stays running; the execution's event moves it on. */
  | { outcome: 'in-doubt'; answer: BlockedAnswer; status: number }
  | {
      outcome: 'pending';
      kind: 'offer' | 'handoff';
      id: string;
      answer: OpAnswer<typeof ops.dealsAdvance>;
      status: number;
    }
  | { outcome: 'failed'; code: BlockedCode; message: string; status: number; answer?: Record<string, unknown> };

type Claim =
  | { kind: 'not-found' }
  | { kind: 'settled'; deal: DealRow }
  | { kind: 'stop'; deal: DealRow }
  | { kind: 'busy'; deal: DealRow; step: DealStep }
  | { kind: 'pending'; deal: DealRow; step: DealStep }
  | { kind: 'claimed'; deal: DealRow; step: DealStep };

/** The deal's lifecycle: claim a step, run it outside any transaction, record its outcome under the row lock. */
export class DealMachine {
  constructor(private s: Services) {}

  private now() {
    return this.s.clock.now();
  }

  dealAnswer(value: DealValue, environment = 'sandbox') {
    return recordAnswer(this.s, { environment: environment as CallContext['environment'] }, 'Deal@1', value);
  }

  async view(q: Queryable, d: DealRow) {
    return toValue(d, await loadEvents(q, d.id));
  }

  async get(dealId: string, account: string | null): Promise<OpReplyOf<'dealsGet'>> {
    const d = await loadDeal(this.s.db, dealId);
    if (!d || d.account_id !== account) return notFound(dealId);
    return { status: 200, answer: this.dealAnswer(await this.view(this.s.db, d), d.environment) };
  }

  /**
   * Run the deal forward: free and key steps execute at once, and the first offer or handoff is created
   * and answered (402 / 403). A step already pending answers its offer or handoff again; one running answers 409.
   */
  async advance(dealId: string, ctx: CallContext): Promise<OpReplyOf<'dealsAdvance'>> {
    // A step another advance (or the event consumer) is running usually finishes within moments: wait for it
    // briefly rather than make the caller retry; answer 409 only when it stays busy.
    const waitUntil = this.now().getTime() + BUSY_WAIT_MS;
    for (;;) {
      const c = await this.claim(dealId, ctx.account, false);
      if (c.kind === 'not-found') return notFound(dealId);
      if (c.kind === 'settled' || c.kind === 'stop')
        return { status: 200, answer: this.dealAnswer(await this.view(this.s.db, c.deal), c.deal.environment) };
      if (c.kind === 'pending') {
        // A declined or expired offer emits no event: notice it here, fail the step and open a fresh offer.
        if (c.step.pending!.kind === 'offer' && (await this.offerIsDead(c.step.pending!.id, ctx))) {
          await this.failPending(dealId, c.step.position, c.step.pending!.id);
          continue;
        }
        // The offer or NEEDS_HUMAN answer the step stored when it opened: parsed as the reply it is.
        const answer = ops.dealsAdvance.reply.parse(c.step.pending!.answer);
        return { status: c.step.pending!.kind === 'offer' ? 402 : 403, answer };
      }
      if (c.kind === 'busy') {
        if (this.now().getTime() < waitUntil) {
          await this.s.clock.sleep(50);
          continue;
        }
        return {
          status: 409,
          answer: refusal(
            'deal-step-conflict',
            `step ${c.step.position} (${c.step.step}) of deal ${dealId} is running now; ` +
              `read the deal with GET /buy/deals/${dealId} and advance again once it has moved`,
            { dealId, step: c.step.position, next: { method: 'GET', path: `/buy/deals/${dealId}` } },
          ),
        };
      }
      const r = await this.run(c.deal, c.step, ctx);
      if (r.outcome === 'in-doubt') return { status: r.status, answer: r.answer };
      const after = await this.record(dealId, c.step.position, c.step.attempts, r);
      if (r.outcome === 'pending') return { status: r.status, answer: r.answer };
      if (r.outcome === 'failed') {
        const deal = after
          ? { state: after.state, currentStep: after.current_step, version: after.version }
          : undefined;
        return {
          status: r.status,
          answer: refusal(
            r.code,
            `step ${c.step.position} (${c.step.step}) failed: ${r.message}. ` +
              `The deal is STEP_FAILED; fix the cause and advance again with POST /buy/deals/${dealId}/advance ` +
              'to retry the step.',
            {
              dealId,
              step: c.step.position,
              deal,
              read: { method: 'GET', path: `/buy/deals/${dealId}` },
              next: { method: 'POST', path: `/buy/deals/${dealId}/advance` },
            },
          ),
        };
      }
    }
  }

  private async offerIsDead(intentId: string, ctx: CallContext): Promise<boolean> {
    // Commerce unreachable (a 503 without a value): keep the offer as it is.
    const r = await callOp(busCallerOf(this.s), ops.intentsGet, { intentId }, ctx);
    return r.answer.type === 'OK' && (r.answer.value.status === 'failed' || r.answer.value.status === 'expired');
  }

  private async failPending(dealId: string, position: number, pendingId: string) {
    await this.s.db.tx(async (q) => {
      const d = await loadDeal(q, dealId, { lock: true });
      const step = d?.checklist[position - 1];
      if (!d || !step || d.current_step !== position || step.status !== 'awaiting' || step.pending?.id !== pendingId)
        return;
      await this.finish(
        q,
        d,
        step,
        { type: 'BLOCKED', code: 'offer-declined', message: `offer ${pendingId} was declined or expired` },
        this.now(),
      );
    });
  }

  /** Auto-advance after a completion event: run free steps, stop before any offer or handoff. */
  async runFree(dealId: string): Promise<void> {
    for (;;) {
      const c = await this.claim(dealId, null, true);
      if (c.kind !== 'claimed') return;
      const r = await this.run(c.deal, c.step, systemCtx(c.deal));
      if (r.outcome === 'in-doubt') return;
      await this.record(dealId, c.step.position, c.step.attempts, r);
      if (r.outcome !== 'done') return;
    }
  }

  /** Take the current step for this caller: at most one claimant per step and attempt. */
  private async claim(dealId: string, account: string | null, freeOnly: boolean): Promise<Claim> {
    return this.s.db.tx(async (q) => {
      const d = await loadDeal(q, dealId, { lock: true });
      if (!d || (account !== null && d.account_id !== account)) return { kind: 'not-found' };
      if (isFinal('deal', d.state) || !d.current_step) return { kind: 'settled', deal: d };
      const step = d.checklist[d.current_step - 1]!;
      const now = this.now();
      // The one claim routine: awaiting its offer or handoff, it is pending; running under a live lease, busy;
      // otherwise it is taken below.
      const lease = step.startedAt ? stepLeaseEnd(this.s, step.startedAt) : null;
      const waiting = claimWith<'dealStep', Claim | null>(
        'dealStep',
        { status: step.status, lease_until: lease },
        now.getTime(),
        {
          replay: () => null,
          wait: () => ({ kind: isLeased('dealStep', step.status) ? 'busy' : 'pending', deal: d, step }),
          take: () => null,
        },
      );
      if (waiting) return waiting;
      if (freeOnly && (kindOf(stepDef(step.position)).kind !== 'execute' || step.status === 'failed'))
        return { kind: 'stop', deal: d };
      // A step taken up after its lease ran out keeps its attempt: its capability is the same durable execution
      // (commerce's, keyed by deal, step and attempt), so it answers what already ran instead of running again.
      if (step.status !== 'running') step.attempts += 1;
      step.status = nextState('dealStep', step.status, 'claim');
      step.startedAt = now.toISOString();
      step.pending = null;
      d.state = nextState('deal', d.state, 'start');
      const saved = await saveDeal(q, d, now);
      await appendEvent(
        q,
        saved,
        'Deal.stepStarted@1',
        step.position,
        { step: step.step, capability: step.capability, kind: step.kind, attempt: step.attempts },
        now,
      );
      return { kind: 'claimed', deal: saved, step };
    });
  }

  /** Run one claimed step: execute its capability, or open its offer or handoff in the commerce pillar. */
  private async run(d: DealRow, step: DealStep, ctx: CallContext): Promise<StepResult> {
    const def = stepDef(step.position);
    const k = kindOf(def);
    if (k.missing)
      return {
        outcome: 'failed',
        code: 'execution-failed',
        message: `${def.capability} is not in the catalog of this service yet`,
        status: 422,
      };
    const input = await def.input({ vin: d.vin, buyer: d.buyer, fact: (cap) => factOf(this.s.db, d.vin, cap) });
    const origin = { dealId: d.id, step: step.position };
    // The bus client never throws: an absent or silent pillar is a 503 with `unavailable` set.
    const unreachable = (what: string, why: string): StepResult => {
      this.s.log.warn({ dealId: d.id, step: step.position, why }, 'deal step could not reach its pillar');
      return {
        outcome: 'failed',
        code: 'pillar-unavailable',
        message: `${what} did not answer (${why}); retry shortly`,
        status: 503,
      };
    };
    if (k.kind === 'execute') {
      // One durable execution per step attempt: never run twice, and never stuck (commerce's executions.ts).
      const r = await callOp(
        busCallerOf(this.s),
        ops.executionsRun,
        {
          source: 'deal',
          sourceId: executionSourceId(d.id, step.position, step.attempts),
          capability: def.capability!,
          input: input ?? {},
          origin,
        },
        ctx,
      );
      if (r.answer.type === 'OK' || r.answer.type === 'EMPTY') return { outcome: 'done', answer: r.answer };
      const code = (r.answer.value as { code?: string } | undefined)?.code;
      if (
        r.unavailable ||
        code === 'execution-pending' ||
        code === 'idempotency-in-flight' ||
        (code === 'pillar-unavailable' && r.status === 503)
      ) {
        return { outcome: 'in-doubt', answer: r.answer, status: 503 };
      }
      return failedFrom(r);
    }
    if (k.kind === 'offer') {
      const r = await callOp(
        busCallerOf(this.s),
        ops.intentsCreate,
        { capability: def.capability!, input: input ?? {}, origin },
        ctx,
      );
      if (r.unavailable) return unreachable('the commerce pillar (offers)', r.unavailable);
      if (r.answer.type === 'OFFER')
        return { outcome: 'pending', kind: 'offer', id: r.answer.value.intent.id, answer: r.answer, status: 402 };
      return failedFrom(r);
    }
    const r = await callOp(
      busCallerOf(this.s),
      ops.handoffsCreate,
      {
        verb: k.verb!,
        credential: k.credential!,
        capability: def.capability,
        input,
        origin,
      } /* a human step always has both (kindOf) */,
      ctx,
    );
    if (r.unavailable) return unreachable('the commerce pillar (handoffs)', r.unavailable);
    // Its reply is the NEEDS_HUMAN refusal naming the handoff; any other BLOCKED answer is the step's failure.
    const human = ops.handoffsCreate.reply.safeParse(r.answer);
    if (human.success)
      return { outcome: 'pending', kind: 'handoff', id: human.data.value.handoff.id, answer: r.answer, status: 403 };
    return failedFrom(r);
  }

  /** Record a step's result if the claim still holds (same step, same attempt, still running). */
  private async record(dealId: string, position: number, attempt: number, r: StepResult): Promise<DealRow | null> {
    if (r.outcome === 'in-doubt') return null; // the step stays running; its execution's event closes it
    return this.s.db.tx(async (q) => {
      const d = await loadDeal(q, dealId, { lock: true });
      const step = d?.checklist[position - 1];
      if (!d || !step || step.status !== 'running' || step.attempts !== attempt) return null;
      const now = this.now();
      if (r.outcome === 'pending') {
        step.status = nextState('dealStep', step.status, 'await');
        step.pending = { kind: r.kind, id: r.id, answer: r.answer };
        d.state = nextState('deal', d.state, r.kind === 'offer' ? 'awaitPayment' : 'awaitHuman');
        return saveDeal(q, d, now);
      }
      return this.finish(
        q,
        d,
        step,
        r.outcome === 'done'
          ? {
              type: String(r.answer.type ?? 'OK'),
              answers: typeof r.answer.answers === 'string' ? r.answer.answers : undefined,
            }
          : { type: 'BLOCKED', code: r.code, message: r.message },
        now,
      );
    });
  }

  /** Close the current step (done or failed) under the row lock, moving the deal on. */
  async finish(
    q: Queryable,
    d: DealRow,
    step: DealStep,
    o: { type: string; answers?: string; code?: string; message?: string },
    now: Date,
  ): Promise<DealRow> {
    const failed = o.type === 'BLOCKED';
    step.outcome = { ...o, at: now.toISOString() };
    step.completedAt = now.toISOString();
    step.pending = null;
    if (failed) {
      step.status = nextState('dealStep', step.status, 'fail');
      d.state = nextState('deal', d.state, 'fail');
      const saved = await saveDeal(q, d, now);
      await appendEvent(
        q,
        saved,
        'Deal.stepFailed@1',
        step.position,
        {
          step: step.step,
          capability: step.capability,
          code: o.code ?? 'execution-failed',
          message: o.message ?? 'the step failed',
          attempt: step.attempts,
        },
        now,
      );
      return saved;
    }
    step.status = nextState('dealStep', step.status, 'succeed');
    const last = step.position === d.checklist.length;
    d.current_step = last ? null : step.position + 1;
    d.state = nextState('deal', d.state, last ? 'settle' : 'proceed');
    const saved = await saveDeal(q, d, now);
    await appendEvent(
      q,
      saved,
      'Deal.stepCompleted@1',
      step.position,
      { step: step.step, capability: step.capability, answerType: o.type, attempt: step.attempts },
      now,
    );
    if (last)
      await appendEvent(
        q,
        saved,
        'Deal.settled@1',
        null,
        { step: null, state: 'SETTLED', steps: d.checklist.length },
        now,
      );
    return saved;
  }
}

function notFound(dealId: string): OpReply<Blocked, never> {
  return {
    status: 404,
    answer: refusal('deal-not-found', `no deal ${dealId} for this account; open one with POST /buy/deals`, {
      dealId,
      next: { method: 'POST', path: '/buy/deals' },
    }),
  };
}

const isBlockedCode = (c: unknown): c is BlockedCode => typeof c === 'string' && Object.hasOwn(blockedCodes, c);

function failedFrom(r: OpReply): StepResult {
  const v = (r.answer.value ?? {}) as { code?: unknown; message?: string };
  const code = isBlockedCode(v.code) ? v.code : 'execution-failed';
  return {
    outcome: 'failed',
    code,
    message: v.message ?? `answered ${String(r.answer.type)}`,
    status: r.status >= 400 ? r.status : statusOfCode(code),
    answer: r.answer,
  };
}

/** The durable execution of a deal step's attempt (commerce's executions: source 'deal'). */
export const executionSourceId = (dealId: string, position: number, attempt: number) =>
  `${dealId}:${position}:${attempt}`;

/** The context the background consumer acts under: the account (and key) that opened the deal. */
export function systemCtx(d: DealRow): CallContext {
  return {
    requestId: newId('request'),
    account: d.account_id,
    keyId: d.key_id,
    environment: d.environment,
    trigger: null,
    settled: false,
  };
}
