// `vcs`: one verb per catalog capability. Prints the Answer and exits with a status that names its kind.
import { inspect } from 'node:util';
import { capabilities, capabilityByName, jsonSchemaOf, type Capability } from '@vcs/contract';
import { CATALOG_DIGEST, createClient, TransportError, type Answer } from '@vcs/sdk';
import { paramsFor, parseArgs } from './args.ts';
import { configPath, readConfig, writeConfig } from './config.ts';

/** Exit status by answer kind (documented in docs/clients.md). */
export const EXIT = { OK: 0, transport: 1, usage: 2, EMPTY: 3, OFFER: 4, BLOCKED: 5 } as const;
const RESERVED = new Set(['base-url', 'key', 'trigger', 'json']);

interface Io { out: (s: string) => void; err: (s: string) => void; tty: boolean; env: NodeJS.ProcessEnv }
const defaultIo = (): Io => ({ out: (s) => process.stdout.write(s + '\n'), err: (s) => process.stderr.write(s + '\n'), tty: !!process.stdout.isTTY, env: process.env });

function usage(): string {
  return [
    'usage: vcs <noun>.<verb> [--<param> <value>...] [--trigger <name>]   call a capability',
    '       vcs catalog                                                  list every capability',
    '       vcs help <noun>.<verb>                                       describe one capability',
    'options: --base-url URL (env VCS_BASE_URL), --key KEY (env VCS_API_KEY), --json',
    `catalog digest ${CATALOG_DIGEST}`,
  ].join('\n');
}

function catalogListing(): string {
  const w = Math.max(...capabilities.map((c) => c.name.length));
  return capabilities.map((c) => `${c.name.padEnd(w)}  ${c.method.padEnd(4)} ${c.path}  [${c.gate}]  ${c.summary}`).join('\n');
}

export function helpFor(c: Capability): string {
  const schema = jsonSchemaOf(c.request, 'input') as { properties?: Record<string, any>; required?: string[] };
  const params = Object.entries(schema.properties ?? {}).map(([k, p]) =>
    `  --${k} <${p.type ?? 'value'}>${schema.required?.includes(k) ? ' (required)' : ''}${p.description ? `  ${p.description}` : ''}`);
  return [
    `${c.name}: ${c.summary}`,
    `  ${c.method} ${c.path} · gate ${c.gate} · mode ${c.mode} · answers ${c.answer}`,
    `  price: ${JSON.stringify(c.price)}`,
    params.length ? 'parameters:' : 'parameters: none',
    ...params,
    `triggers (--trigger): ${c.triggers.map((t) => t.name).join(', ')}`,
  ].join('\n');
}

const needsKey = (c: Capability) => c.gate === 'key' || c.gate === 'offer';
const keyRequired = (a: Answer<unknown>) => a.type === 'BLOCKED' && a.value.code === 'key-required';

async function mintKey(baseUrl: string, io: Io): Promise<string> {
  const raw = (await createClient({ baseUrl }).request('POST', '/keys')) as { type?: string; key?: string; account?: string };
  if (raw.type !== 'OK' || !raw.key) throw new TransportError(`POST /keys did not mint a key: ${JSON.stringify(raw).slice(0, 300)}`);
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

export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  const { positional, flags, problems } = parseArgs(argv);
  if (problems.length) { io.err(`vcs: ${problems.join('; ')}`); return EXIT.usage; }
  const [cmd, arg] = positional;
  if (!cmd || cmd === 'help' && !arg) { io.out(usage()); return cmd ? EXIT.OK : EXIT.usage; }
  if (cmd === 'catalog') { io.out(catalogListing()); return EXIT.OK; }
  if (cmd === 'help') {
    const c = capabilityByName(arg);
    if (!c) { io.err(`vcs: no capability ${arg}; see \`vcs catalog\``); return EXIT.usage; }
    io.out(helpFor(c));
    return EXIT.OK;
  }
  const cap = capabilityByName(cmd);
  if (!cap) { io.err(`vcs: no capability ${cmd}; see \`vcs catalog\`\n${usage()}`); return EXIT.usage; }
  // A misspelt flag is a usage error naming the flags there are, not a call the service refuses (or, worse, a call).
  const known = [...Object.keys((jsonSchemaOf(cap.request, 'input').properties ?? {}) as object), ...RESERVED];
  const unknown = Object.keys(flags).filter((f) => !known.includes(f));
  if (unknown.length) {
    io.err(`vcs: ${cap.name} has no flag ${unknown.map((f) => `--${f}`).join(', ')}; its flags: ${known.map((f) => `--${f}`).join(' ')}`);
    return EXIT.usage;
  }

  const baseUrl = flags['base-url'] ?? io.env.VCS_BASE_URL ?? readConfig(configPath(io.env)).baseUrl ?? 'http://127.0.0.1:8080';
  let key = flags.key ?? io.env.VCS_API_KEY ?? readConfig(configPath(io.env)).key;
  const params = paramsFor(cap, Object.fromEntries(Object.entries(flags).filter(([k]) => !RESERVED.has(k))));
  const headers = flags.trigger ? { 'sandbox-trigger': flags.trigger } : undefined;
  const send = async () => (await createClient({ baseUrl, key }).request(cap.method, cap.path, params, { headers })) as Answer<unknown>;
  try {
    if (!key && needsKey(cap)) key = await mintKey(baseUrl, io);
    let a = await send();
    if (keyRequired(a) && !flags.key && !io.env.VCS_API_KEY) { key = await mintKey(baseUrl, io); a = await send(); }
    if (!a || typeof a !== 'object' || !(a.type in EXIT)) throw new TransportError(`not an Answer: ${JSON.stringify(a).slice(0, 300)}`);
    print(a, io, flags.json === 'true');
    return EXIT[a.type];
  } catch (e) {
    io.err(`vcs: ${(e as Error).message}`);
    return EXIT.transport;
  }
}
