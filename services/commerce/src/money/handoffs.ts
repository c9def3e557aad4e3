import {
  problemsOf,
  capabilityByName,
  claimWith,
  isInFlight,
  newId,
  platformEvent,
  opTimeouts,
  ops,
  sandboxDesks,
  withoutSecrets,
  type HumanVerb,
  type OpInput,
  type HandoffValue,
  type StateOf,
  type OpReplyOf,
} from '@vcs/contract';
import { writeEvents, type CallContext, type Queryable } from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import { iso, record, refusal } from './common.ts';
import {
  afterExecution,
  createExecution,
  findExecution,
  pendingReply,
  settleExecution,
  type Finisher,
} from './executions.ts';
import { jsonValue, objectOf, originOf, storedAnswerOrNull, type ExecutionRow } from './rows.ts';
import { moved, moveSql, mustMove } from './transition.ts';

/** The operations' inputs (contract ops.ts) and the caller's context. */
type CreateHandoffRequest = OpInput<'handoffsCreate'> & { ctx: CallContext };
type CompleteHandoffRequest = OpInput<'handoffsComplete'> & { ctx: CallContext };

interface HandoffRow {
  id: string;
  account_id: string | null;
  verb: string;
  credential: string;
  capability: string | null;
  input: unknown;
  trigger: string | null;
  origin: unknown;
  terminus: unknown;
  status: StateOf<'handoff'>;
  result: unknown;
  result_status: number | null;
  created_at: string | Date;
  completed_at: string | Date | null;
}

const pollPath = (id: string) => `/handoffs/${id}`;
const verbs = Object.keys(sandboxDesks) as HumanVerb[];

function handoffView(r: HandoffRow): HandoffValue {
  return {
    id: r.id,
    // Its capability running, it is still pending to the human's caller.
    status: isInFlight('handoff', r.status) ? 'pending' : r.status,
    verb: r.verb,
    credential: r.credential,
    capability: r.capability,
    terminus: objectOf(r.terminus),
    account: r.account_id,
    origin: originOf(r.origin),
    createdAt: iso(r.created_at)!,
    completedAt: iso(r.completed_at),
    poll: { method: 'GET', path: pollPath(r.id) },
    complete: {
      method: 'POST',
      path: `${pollPath(r.id)}/complete`,
      body: { outcome: 'completed | refused', credential: r.credential },
    },
    result: storedAnswerOrNull(r.result),
  };
}

async function findHandoff(q: Queryable, id: string, lock = false) {
  const { rows } = await q.query<HandoffRow>(`select * from handoffs where id = $1${lock ? ' for update' : ''}`, [id]);
  return rows[0];
}

/** `sys.commerce.handoffs.create`: store a pending handoff and answer 403 BLOCKED NEEDS_HUMAN naming the desk. */
export async function createHandoff(
  services: Services,
  req: CreateHandoffRequest,
): Promise<OpReplyOf<'handoffsCreate'>> {
  const { ctx } = req;
  if (!verbs.includes(req.verb))
    return refusal(services, ctx, 'invalid-input', `verb must be one of ${verbs.join(', ')}`);
  const c = req.capability ? capabilityByName(req.capability) : undefined;
  if (req.capability && !c) return refusal(services, ctx, 'invalid-input', `no capability named ${req.capability}`);
  let input: unknown = null;
  if (c) {
    const parsed = c.request.safeParse(req.input ?? {});
    if (!parsed.success)
      return refusal(services, ctx, 'invalid-input', `the input to ${c.name} is not valid`, {
        problems: problemsOf(parsed.error.issues, 'body'),
      });
    input = parsed.data;
  }
  const credential = req.credential || c?.human?.credential || sandboxDesks[req.verb].credential;
  const terminus = c?.human?.terminus ?? sandboxDesks[req.verb].terminus;
  const id = newId('handoff');
  const trigger = ctx.environment === 'sandbox' ? ctx.trigger : null;
  await services.db.query(
    `insert into handoffs(id, account_id, verb, credential, capability, input, trigger, origin, terminus, created_at)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
    [
      id,
      ctx.account,
      req.verb,
      credential,
      c?.name ?? null,
      input === null ? null : JSON.stringify(input),
      trigger,
      req.origin ? JSON.stringify(req.origin) : null,
      JSON.stringify(terminus),
      services.clock.now().toISOString(),
    ],
  );
  // Sandbox triggers: the sandbox desk acts at once; the caller still gets NEEDS_HUMAN and reads the outcome on the
  // rail.
  let status = 'pending';
  if (trigger === 'human-completed' || trigger === 'human-refused') {
    // The sandbox desk completes it inside this operation's time, so the capability gets its share of it.
    const timeoutMs = opTimeouts(ops.handoffsCreate, services.settings.BUS_TIMEOUT_MS).timeoutMs;
    const done = await completeHandoff(services, {
      handoffId: id,
      outcome: trigger === 'human-completed' ? 'completed' : 'refused',
      credential,
      ctx,
      timeoutMs,
    });
    status = String((done.answer.value as { status?: string } | undefined)?.status ?? status);
  }
  const subject = c ? c.name : `the ${req.verb} step`;
  const r = refusal(
    services,
    ctx,
    'NEEDS_HUMAN',
    `${subject} needs a human to ${req.verb}: a holder of the ${credential} credential at ${terminus.name}; ` +
      `poll GET ${pollPath(id)} for the outcome`,
    {
      needs: 'NEEDS_HUMAN',
      verb: req.verb,
      credential,
      capability: c?.name ?? null,
      terminus,
      handoff: { id, status, poll: { method: 'GET', path: pollPath(id) } },
      next: { method: 'GET', path: pollPath(id) },
      complete: { method: 'POST', path: `${pollPath(id)}/complete`, body: { outcome: 'completed', credential } },
    },
  );
  return r;
}

/** `sys.commerce.handoffs.get`: the poll rail. */
export async function getHandoff(
  services: Services,
  req: OpInput<'handoffsGet'> & { ctx: CallContext },
): Promise<OpReplyOf<'handoffsGet'>> {
  const r = await findHandoff(services.db, String(req.handoffId));
  if (!r)
    return refusal(
      services,
      req.ctx,
      'handoff-not-found',
      `no handoff ${req.handoffId}; handoff ids start ho_ and come from a NEEDS_HUMAN answer`,
    );
  if (r.account_id && r.account_id !== req.ctx.account)
    return refusal(
      services,
      req.ctx,
      'forbidden',
      `handoff ${r.id} belongs to another account; send the key of the account that made it`,
    );
  return record(services, req.ctx, 'Handoff@1', handoffView(r));
}

const handoffEvent = (
  services: Services,
  r: HandoffRow,
  type: 'Handoff.completed@1' | 'Handoff.refused@1',
  environment: CallContext['environment'],
) =>
  platformEvent(
    type,
    {
      occurredAt: services.clock.now().toISOString(),
      account: r.account_id,
      capability: r.capability,
      vin:
        typeof (jsonValue(r.input) as { vin?: unknown } | null)?.vin === 'string'
          ? (jsonValue(r.input) as { vin: string }).vin
          : null,
      simulated: environment === 'sandbox',
    },
    { handoffId: r.id, verb: r.verb as HumanVerb, capability: r.capability, origin: originOf(r.origin) },
  );

/**
 * `sys.commerce.handoffs.complete`: the credentialed principal completes or refuses. Completing a capability
 * handoff makes its one durable execution (pending → completing, under the row lock) and runs it
 * (executions.ts): its answer is kept on the rail; an outcome not known yet is a 503 with Retry-After, and the
 * execution is taken up again by itself, so the handoff never sticks in `completing`.
 */
export async function completeHandoff(
  services: Services,
  req: CompleteHandoffRequest,
): Promise<OpReplyOf<'handoffsComplete'>> {
  const { ctx } = req;
  if (req.outcome !== 'completed' && req.outcome !== 'refused')
    return refusal(services, ctx, 'invalid-input', 'outcome must be "completed" or "refused"');
  const timeoutMs = opTimeouts(ops.handoffsComplete, services.settings.BUS_TIMEOUT_MS, req.timeoutMs).innerMs;
  type Step = { reply: OpReplyOf<'handoffsComplete'> } | { execution: string; claimed?: ExecutionRow };
  const step = await services.db.tx(async (q): Promise<Step> => {
    const r = await findHandoff(q, String(req.handoffId), true);
    if (!r)
      return {
        reply: refusal(
          services,
          ctx,
          'handoff-not-found',
          `no handoff ${req.handoffId}; handoff ids start ho_ and come from a NEEDS_HUMAN answer`,
        ),
      };
    if (r.account_id && r.account_id !== ctx.account)
      return {
        reply: refusal(
          services,
          ctx,
          'forbidden',
          `handoff ${r.id} belongs to another account; complete it with the key of the account that made it`,
        ),
      };
    // Only the credentialed principal acts, or waits on what its act started.
    const wrongCredential = () =>
      req.credential === r.credential
        ? null
        : {
            reply: refusal(
              services,
              ctx,
              'forbidden',
              `handoff ${r.id} needs the ${r.credential} credential; ` +
                `send {"outcome": "...", "credential": "${r.credential}"} to POST ${pollPath(r.id)}/complete`,
              { next: { method: 'POST', path: `${pollPath(r.id)}/complete` } },
            ),
          };
    /** The human's act: refused or completed at once, or its capability's one durable execution made. */
    const humanActs = async (): Promise<Step> => {
      const now = services.clock.now().toISOString();
      if (req.outcome === 'refused' || !r.capability) {
        const status = req.outcome;
        await mustMove(q, 'handoff', r.id, r.status, status === 'refused' ? 'refuse' : 'complete', {
          completed_at: now,
        });
        await writeEvents(q, [
          handoffEvent(
            services,
            r,
            status === 'refused' ? 'Handoff.refused@1' : 'Handoff.completed@1',
            ctx.environment,
          ),
        ]);
        return { reply: record(services, ctx, 'Handoff@1', handoffView({ ...r, status, completed_at: now })) };
      }
      await mustMove(q, 'handoff', r.id, r.status, 'run');
      const ex = await createExecution(
        q,
        services,
        {
          source: 'handoff',
          sourceId: r.id,
          capability: r.capability,
          input: jsonValue(r.input),
          origin: jsonValue(r.origin),
          // A sandbox desk's own trigger (human-*) decided the human's act; any other trigger goes on to the
          // capability.
          ctx: { ...ctx, account: r.account_id, trigger: r.trigger?.startsWith('human-') ? null : r.trigger },
        },
        timeoutMs,
      );
      return { execution: ex.id, claimed: ex };
    };
    // The one claim routine: final, its record replayed; in flight, its execution waited on; open, the human's act.
    return claimWith<'handoff', Promise<Step>>('handoff', r, services.clock.now().getTime(), {
      replay: async () => ({ reply: { ...record(services, ctx, 'Handoff@1', handoffView(r)), replayed: true } }),
      wait: async () => wrongCredential() ?? { execution: (await findExecution(q, 'handoff', r.id))!.id },
      take: async () => wrongCredential() ?? humanActs(),
    });
  });
  if ('reply' in step) return step.reply;
  const out = await settleExecution(
    services,
    step.execution,
    timeoutMs,
    { method: 'GET', path: pollPath(String(req.handoffId)) },
    { claimed: step.claimed, requestId: ctx.requestId, finish: finishHandoff },
  );
  if (out.kind !== 'done') return pendingReply(out, { method: 'GET', path: pollPath(String(req.handoffId)) });
  const r = (await findHandoff(services.db, String(req.handoffId)))!;
  return { ...record(services, ctx, 'Handoff@1', handoffView(r)), replayed: out.replayed || !step.claimed };
}

/**
 * A handoff's execution finished: the handoff is completed with the capability's answer and event, in the statement
 * that records the execution.
 */
export const finishHandoff: Finisher = async (services, ex, answer, status) => {
  const r = (await findHandoff(services.db, ex.source_id))!;
  return {
    parts: {
      handoff: moveSql(
        'handoff',
        r.id,
        'finish',
        {
          result: withoutSecrets(JSON.stringify(answer)),
          result_status: status,
          completed_at: services.clock.now().toISOString(),
        },
        afterExecution,
      ),
    },
    required: ['handoff'],
    settles: true,
    // A human's act collects nothing here; completed, it is a settlement.
    events: [
      handoffEvent(
        services,
        r,
        'Handoff.completed@1',
        (jsonValue(ex.ctx) as { environment: CallContext['environment'] }).environment,
      ),
    ],
    finished: (rows) => {
      // Only the attempt that records the execution finishes its handoff, which is then completing.
      moved(rows.handoff, 'handoff', r.status, 'finish');
      return {};
    },
  };
};
