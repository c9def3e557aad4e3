// `vcs`: one verb per catalog capability. Prints the Answer and exits with a status that names its kind.
import { inspect } from 'node:util';
import { capabilities, capabilityByName, jsonSchemaOf, triggerRefusal, type Capability } from '@vcs/contract';
import { CATALOG_DIGEST, createClient, settle, TransportError, type Answer, type Offer } from '@vcs/sdk';
import { paramsFor, parseArgs } from './args.ts';
import { configPath, readConfig, writeConfig } from './config.ts';
import { DEFAULT_MAX_PAYMENT, overMax, paySettings, walletPayer } from './pay.ts';
import { acceptPriceOf, isIntentId, settlePath, settleWithin } from './settle.ts';

/** Exit status by answer kind (documented in docs/clients.md). */
export const EXIT = { OK: 0, transport: 1, usage: 2, EMPTY: 3, OFFER: 4, BLOCKED: 5 } as const;
const RESERVED = new Set(['base-url', 'key', 'trigger', 'json', 'pay', 'max', 'accept-price']);
/** The flags of `vcs settle`: where to, with which key, the trigger and the output. */
const SETTLE_FLAGS = ['base-url', 'key', 'trigger', 'json'];

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  tty: boolean;
  env: NodeJS.ProcessEnv;
}
const defaultIo = (): Io => ({
  out: (s) => process.stdout.write(s + '\n'),
  err: (s) => process.stderr.write(s + '\n'),
  tty: !!process.stdout.isTTY,
  env: process.env,
});

function usage(): string {
  return [
    'usage: vcs <noun>.<verb> [--<param> <value>...] [--trigger <name>]   call a capability',
    '       vcs settle <intentId> [--trigger <name>]                     settle an OFFER with the key',
    '       vcs catalog                                                  list every capability',
    '       vcs help <noun>.<verb>                                       describe one capability',
    'options: --base-url URL (env VCS_BASE_URL), --key KEY (env VCS_API_KEY), --json,',
    "         --header 'Name: value' (repeatable) sends a header with the request",
    '         --accept-price DOLLARS settles the OFFER a call answers through the key route (POST /intents/<id>/settle)',
    '         when the most it can cost is within DOLLARS, and prints the answer',
    "pay an OFFER with x402: set X402_PAYER_KEY (a wallet's 0x private key) in the environment, " +
      'or pass --pay to insist;',
    `         --max DOLLARS (env X402_MAX_PAYMENT, default ${DEFAULT_MAX_PAYMENT}) is the most one payment may take`,
    `catalog digest ${CATALOG_DIGEST}`,
  ].join('\n');
}

function catalogListing(): string {
  const w = Math.max(...capabilities.map((c) => c.name.length));
  return capabilities
    .map((c) => `${c.name.padEnd(w)}  ${c.method.padEnd(4)} ${c.path}  [${c.gate}]  ${c.summary}`)
    .join('\n');
}

export function helpFor(c: Capability): string {
  const schema = jsonSchemaOf(c.request, 'input') as { properties?: Record<string, any>; required?: string[] };
  const params = Object.entries(schema.properties ?? {}).map(
    ([k, p]) =>
      `  --${k} <${p.type ?? 'value'}>${schema.required?.includes(k) ? ' (required)' : ''}` +
      `${p.description ? `  ${p.description}` : ''}`,
  );
  return [
    `${c.name}: ${c.summary}`,
    `  ${c.method} ${c.path} · gate ${c.gate} · mode ${c.mode} · answers ${c.answer}`,
    `  price: ${JSON.stringify(c.price)}`,
    params.length ? 'parameters:' : 'parameters: none',
    ...params,
    `triggers (--trigger): ${c.triggers.map((t) => t.name).join(', ')}`,
    ...(c.gate === 'offer'
      ? [
          'its OFFER settles with --accept-price <dollars> (the key route), or pays from a wallet with X402_PAYER_KEY;',
          '  or later: vcs settle <intentId>',
        ]
      : []),
  ].join('\n');
}

// An offer-gated call mints a key so that its OFFER can be settled by the key route; a wallet pays without one.
const needsKey = (c: Capability, paying: boolean) => c.gate === 'key' || (c.gate === 'offer' && !paying);
const keyRequired = (a: Answer<unknown>) => a.type === 'BLOCKED' && a.value.code === 'key-required';

async function mintKey(baseUrl: string, io: Io): Promise<string> {
  const raw = (await createClient({ baseUrl }).request('POST', '/keys')) as {
    type?: string;
    key?: string;
    account?: string;
  };
  if (raw.type !== 'OK' || !raw.key)
    throw new TransportError(`POST /keys did not mint a key: ${JSON.stringify(raw).slice(0, 300)}`);
  const path = configPath(io.env);
  writeConfig({ ...readConfig(path), key: raw.key, account: raw.account, baseUrl }, path);
  io.err(`vcs: minted a sandbox key for account ${raw.account} and stored it in ${path} (mode 0600)`);
  return raw.key;
}

function print(a: Answer<unknown>, io: Io, forceJson: boolean) {
  if (!io.tty || forceJson) return io.out(JSON.stringify(a));
  io.out(`${a.type} ${a.answers}`);
  io.out(inspect(a.value, { depth: null, colors: true }));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * How long vcs keeps asking about a payment whose settlement is under way (the service answers 503
 * payment-pending).
 */
const PENDING_FOR_MS = 30_000;

/**
 * Pay an OFFER from the wallet (the offer's own x402 terms, signed by the stock client) and return the paid answer,
 * saying on stderr what was paid. An offer above the limit is returned unpaid (and said why). While the service
 * answers that the payment's outcome is not known yet, the same signed payment is sent again after its Retry-After:
 * it is never charged twice, and a fresh signature is never made for it.
 */
async function pay(
  offer: Offer,
  client: ReturnType<typeof createClient>,
  walletKey: `0x${string}`,
  max: string,
  io: Io,
): Promise<Answer<unknown>> {
  const why = overMax(offer, max);
  if (why) {
    io.err(`vcs: not paid: ${why}`);
    return offer;
  }
  const payer = await walletPayer(walletKey, max);
  // Signed before anything is sent (settle reuses this signature): a payment the stock client refuses to make (its
  // spend controls, an asset it does not know) leaves the OFFER unpaid rather than failing the call.
  try {
    await payer.createPaymentPayload(offer.value.x402!);
  } catch (e) {
    io.err(`vcs: not paid: the x402 client would not sign it (wallet ${payer.address}): ${(e as Error).message}`);
    return offer;
  }
  const until = Date.now() + PENDING_FOR_MS;
  let a = await settle(offer, { client, payer });
  while (a.type === 'BLOCKED' && /^payment-(pending|unavailable)$/.test(a.value.code) && Date.now() < until) {
    const wait = Math.min(Math.max(Number((a.value as { retryAfter?: unknown }).retryAfter) || 1, 0.5), 5);
    io.err(`vcs: ${a.value.code}: ${a.value.message}; asking again in ${wait} s`);
    await sleep(wait * 1000);
    a = await settle(offer, { client, payer });
  }
  const p = a.meter?.payment;
  if (p)
    io.err(
      `vcs: paid $${p.amount} from ${p.payer} to ${p.payTo} on ${p.network}, ` +
        `transaction ${p.transaction ?? '(found on chain by its authorization)'} (intent ${offer.value.intent.id})`,
    );
  else
    io.err(
      `vcs: not paid (intent ${offer.value.intent.id}, wallet ${payer.address}): ` +
        `${a.type === 'BLOCKED' ? `${a.value.code}: ${a.value.message}` : `the settlement answered ${a.type}`}`,
    );
  return a;
}

export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  const { positional, flags, headers, problems } = parseArgs(argv);
  if (problems.length) {
    io.err(`vcs: ${problems.join('; ')}`);
    return EXIT.usage;
  }
  const [cmd, arg] = positional;
  if (!cmd || (cmd === 'help' && !arg)) {
    io.out(usage());
    return cmd ? EXIT.OK : EXIT.usage;
  }
  if (cmd === 'catalog') {
    io.out(catalogListing());
    return EXIT.OK;
  }
  if (cmd === 'help') {
    const c = capabilityByName(arg);
    if (!c) {
      io.err(`vcs: no capability ${arg}; see \`vcs catalog\``);
      return EXIT.usage;
    }
    io.out(helpFor(c));
    return EXIT.OK;
  }
  if (cmd === 'settle') return settleCommand(arg, flags, headers, io);
  const cap = capabilityByName(cmd);
  if (!cap) {
    io.err(`vcs: no capability ${cmd}; see \`vcs catalog\`\n${usage()}`);
    return EXIT.usage;
  }
  // A misspelt flag is a usage error naming the flags there are, not a call the service refuses (or, worse, a call).
  const known = [...Object.keys((jsonSchemaOf(cap.request, 'input').properties ?? {}) as object), ...RESERVED];
  if (refuseUnknownFlags(cap.name, flags, known, io)) return EXIT.usage;

  const accept = flags['accept-price'] === undefined ? null : acceptPriceOf(flags['accept-price']);
  if (accept === undefined) {
    io.err(`vcs: --accept-price must be dollars, as 5.00, $5.00 or "5.00 USD" (not ${flags['accept-price']})`);
    return EXIT.usage;
  }
  if (accept !== null && flags.pay === 'true') {
    io.err('vcs: --accept-price settles with the key and --pay pays from a wallet: pass one of them');
    return EXIT.usage;
  }
  // --accept-price settles through the key route: a wallet in the environment is not used for this call.
  const paying = accept === null ? paySettings(flags, io.env) : ({ pay: false } as const);
  if ('problem' in paying) {
    io.err(`vcs: ${paying.problem}`);
    return EXIT.usage;
  }
  if (!paying.pay && flags.max !== undefined) {
    io.err('vcs: --max limits a payment: set X402_PAYER_KEY to pay');
    return EXIT.usage;
  }

  const { baseUrl, key: storedKey } = target(flags, io);
  let key = storedKey;
  const params = paramsFor(cap, Object.fromEntries(Object.entries(flags).filter(([k]) => !RESERVED.has(k))));
  const sent = withTrigger(headers, flags);
  // A trigger the capability does not honour is refused here, as the service would refuse it: nothing is sent.
  if (refuseTrigger(cap, sent, key, io)) return EXIT.usage;
  const send = async () =>
    (await createClient({ baseUrl, key }).request(cap.method, cap.path, params, { headers: sent })) as Answer<unknown>;
  try {
    if (!key && needsKey(cap, paying.pay)) key = await mintKey(baseUrl, io);
    let a = await send();
    if (keyRequired(a) && !flags.key && !io.env.VCS_API_KEY) {
      key = await mintKey(baseUrl, io);
      a = await send();
    }
    if (!a || typeof a !== 'object' || !(a.type in EXIT))
      throw new TransportError(`not an Answer: ${JSON.stringify(a).slice(0, 300)}`);
    if (a.type === 'OFFER' && accept !== null)
      a = await settleWithin(a, accept, createClient({ baseUrl, key }), sent, io.err);
    else if (a.type === 'OFFER' && paying.pay)
      a = await pay(a, createClient({ baseUrl, key }), paying.key, paying.max, io);
    print(a, io, flags.json === 'true');
    return EXIT[a.type];
  } catch (e) {
    io.err(`vcs: ${(e as Error).message}`);
    return EXIT.transport;
  }
}

/** Where to call and with which key: flags, then the environment, then the stored configuration. */
function target(flags: Record<string, string>, io: Io) {
  const stored = readConfig(configPath(io.env));
  return {
    baseUrl: flags['base-url'] ?? io.env.VCS_BASE_URL ?? stored.baseUrl ?? 'http://127.0.0.1:8080',
    key: flags.key ?? io.env.VCS_API_KEY ?? stored.key,
  };
}

function refuseUnknownFlags(command: string, flags: Record<string, string>, known: string[], io: Io) {
  const unknown = Object.keys(flags).filter((f) => !known.includes(f));
  if (!unknown.length) return false;
  io.err(
    `vcs: ${command} has no flag ${unknown.map((f) => `--${f}`).join(', ')}; ` +
      `its flags: ${[...known, 'header'].map((f) => `--${f}`).join(' ')}`,
  );
  return true;
}

/** The headers to send: `--header`s, and `--trigger` as Sandbox-Trigger (it wins over a --header of that name). */
const withTrigger = (headers: Record<string, string>, flags: Record<string, string>) =>
  flags.trigger === undefined ? headers : { ...headers, 'sandbox-trigger': flags.trigger };

/** A trigger `cap` does not honour (or any, with a live key) is a usage error naming the ones it does. */
function refuseTrigger(cap: Capability, headers: Record<string, string>, key: string | undefined, io: Io) {
  const trigger = headers['sandbox-trigger'];
  if (!trigger) return false;
  const live = key?.startsWith('vcs_live_') ?? false;
  const refused = triggerRefusal(trigger, cap, live ? 'live' : 'sandbox', { method: cap.method, path: cap.path });
  if (!refused) return false;
  io.err(
    live
      ? `vcs: --trigger does not apply to a live key (trigger-not-honoured): run it again without --trigger, ` +
          'or with a sandbox key'
      : `vcs: ${cap.name} does not honour the trigger ${JSON.stringify(trigger)} (trigger-not-honoured); ` +
          `it honours ${refused.honoured.join(', ')}: run it again with one of them (--trigger <name>) or without`,
  );
  return true;
}

/** `vcs settle <intentId>`: the key route an OFFER names, with the stored (or a newly minted) key. */
async function settleCommand(
  intentId: string | undefined,
  flags: Record<string, string>,
  headers: Record<string, string>,
  io: Io,
): Promise<number> {
  if (!intentId || !isIntentId(intentId)) {
    io.err(
      "vcs: settle takes the id of an OFFER's intent (pi_…, its value.intent.id): vcs settle <intentId>" +
        (intentId ? `, not ${intentId}` : ''),
    );
    return EXIT.usage;
  }
  if (refuseUnknownFlags('settle', flags, SETTLE_FLAGS, io)) return EXIT.usage;
  const { baseUrl, key: storedKey } = target(flags, io);
  let key = storedKey;
  try {
    key ??= await mintKey(baseUrl, io);
    const a = (await createClient({ baseUrl, key }).request(
      'POST',
      settlePath(intentId),
      {},
      {
        headers: withTrigger(headers, flags),
      },
    )) as Answer<unknown>;
    if (!a || typeof a !== 'object' || !(a.type in EXIT))
      throw new TransportError(`not an Answer: ${JSON.stringify(a).slice(0, 300)}`);
    print(a, io, flags.json === 'true');
    return EXIT[a.type];
  } catch (e) {
    io.err(`vcs: ${(e as Error).message}`);
    return EXIT.transport;
  }
}
