// exec: agent-written TypeScript in a QuickJS (WebAssembly) isolate. The isolate has its own heap and no host
// objects: no process, require, import, fetch, fs, env or timers. Its one way out is `__hostFetch`, a bridge the
// host serves against the gateway itself with the caller's key, which the SDK inside the isolate uses as its fetch.
// It never pays: `settle` here refuses a payer, and the bridge (mcp/server.ts) passes no payment header
// (PAYMENT-SIGNATURE, X-PAYMENT) nor any header but content-type, accept, sandbox-trigger and idempotency-key.
import { fileURLToPath } from 'node:url';
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';

export interface ExecLimits {
  cpuMs: number;
  wallMs: number;
  memoryBytes: number;
  stackBytes: number;
  maxCalls: number;
}
export const EXEC_LIMITS: ExecLimits = {
  cpuMs: 1000,
  wallMs: 15_000,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 512 * 1024,
  maxCalls: 50,
};

/** The host side of a bridged call: method, path and JSON body in; status and body text out. */
export type HostFetch = (
  method: string,
  path: string,
  body: string | undefined,
  headers: Record<string, string>,
) => Promise<{ status: number; body: string }>;

export type ExecResult = { ok: true; result: unknown; calls: number } | { ok: false; error: string; calls: number };

let sdkBundle: Promise<string> | undefined;
/** The pinned SDK as one script for the isolate: the same generated code that clients import. */
function sdkSource(): Promise<string> {
  sdkBundle ??= import('esbuild')
    .then(({ build }) =>
      build({
        entryPoints: [fileURLToPath(import.meta.resolve('@vcs/sdk'))],
        bundle: true,
        write: false,
        format: 'iife',
        globalName: '__vcs',
        platform: 'neutral',
        target: 'es2020',
        logLevel: 'silent',
      }),
    )
    .then((r) => r.outputFiles[0]!.text);
  return sdkBundle;
}

const PRELUDE =
  `
(() => {
const __sdk = __vcs, __bridge = __hostFetch;
__sdk.setDefaultClient(__sdk.createClient({ baseUrl: '', fetch: (url, init) => ` +
  "__bridge(init.method, url, init.body === undefined ? '' : init.body, JSON.stringify(init.headers || {}))" +
  `.then((r) => { const o = JSON.parse(r); return { status: o.status, text: () => Promise.resolve(o.body) }; }) }));
const __settle = __sdk.settle;
const sdk = Object.freeze({ ...__sdk, settle: (offer, opts) => opts && opts.payer !== undefined
  ? Promise.reject(new Error('exec never pays: settle takes no payer here; ` +
  `return the OFFER and pay it outside exec (the SDK or the CLI with a wallet)'))
  : __settle(offer, opts) });
globalThis.sdk = sdk;
for (const k of Object.keys(sdk)) if (k !== 'createClient' && k !== 'setDefaultClient') globalThis[k] = sdk[k];
__vcs = undefined;
delete globalThis.__hostFetch;
})();
`;

/** Strip types and turn `import { x } from '@vcs/sdk'` into a destructure of the in-isolate SDK. */
export async function prepare(code: string): Promise<string> {
  const rewritten = code.replace(
    /^\s*import\s+(type\s+)?(\{[^}]*\}|\*\s+as\s+\w+)\s+from\s+['"]@vcs\/sdk['"];?/gm,
    (_m, isType, what: string) =>
      isType
        ? ''
        : what.startsWith('*')
          ? `const ${what.split(/\s+as\s+/)[1]} = sdk;`
          : `const ${what.replace(/\btype\s+\w+\s*,?/g, '').replace(/\s+as\s+/g, ': ')} = sdk;`,
  );
  const { transform } = await import('esbuild'); // loaded on first use, like QuickJS
  const { code: js } = await transform(`async function __main() {\n${rewritten}\n}`, {
    loader: 'ts',
    target: 'es2020',
    format: 'esm',
  });
  return `${js}\n__main().then((v) => JSON.stringify(v === undefined ? null : v));`;
}

function errorText(ctx: QuickJSContext, h: QuickJSHandle): string {
  const e = ctx.dump(h) as { name?: string; message?: string } | string;
  h.dispose();
  if (typeof e === 'object' && e) return `${e.name ?? 'Error'}: ${e.message ?? JSON.stringify(e)}`;
  return String(e);
}

function explain(msg: string, cpuUsed: number, limits: ExecLimits): string {
  if (/out of memory/i.test(msg)) return `exceeded the memory limit of ${limits.memoryBytes / 1048576} MiB (${msg})`;
  if (/interrupted/i.test(msg) && cpuUsed >= limits.cpuMs)
    return `exceeded the CPU limit of ${limits.cpuMs} ms (${msg})`;
  return msg;
}

/** Run agent code; a fresh WebAssembly module per run, so nothing one run does can reach the next. */
export async function execInIsolate(
  code: string,
  hostFetch: HostFetch,
  limits: ExecLimits = EXEC_LIMITS,
): Promise<ExecResult> {
  let calls = 0;
  let js: string;
  try {
    js = await prepare(code);
  } catch (e) {
    return { ok: false, error: `could not compile: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`, calls };
  }
  const sdk = await sdkSource();
  // Loaded on the first run, not at start: a gateway that never runs agent code keeps QuickJS out of its memory.
  const { newQuickJSWASMModule } = await import('quickjs-emscripten');
  const mod = await newQuickJSWASMModule();
  const runtime = mod.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.stackBytes);
  // CPU: time spent running inside QuickJS only; waiting on bridged calls does not count.
  let cpuUsed = 0;
  let sliceStart = 0;
  runtime.setInterruptHandler(() => cpuUsed + (Date.now() - sliceStart) > limits.cpuMs);
  const ctx = runtime.newContext();
  const pending = new Set<{ dispose(): void }>();
  let fatal: string | undefined;
  const runSlice = <T>(f: () => T): T => {
    sliceStart = Date.now();
    try {
      return f();
    } finally {
      cpuUsed += Date.now() - sliceStart;
    }
  };
  const pump = () => {
    const r = runSlice(() => runtime.executePendingJobs());
    if (r.error) fatal ??= errorText(ctx, r.error);
  };
  let wake: () => void = () => {};
  try {
    const bridge = ctx.newFunction('__hostFetch', (m, p, b, h) => {
      const deferred = ctx.newPromise();
      pending.add(deferred);
      const [method, path, body, headers] = [ctx.getString(m), ctx.getString(p), ctx.getString(b), ctx.getString(h)];
      const settleWith = (fn: () => void) => {
        if (!deferred.alive) return;
        fn();
        pending.delete(deferred);
        deferred.dispose();
        pump();
        wake();
      };
      if (++calls > limits.maxCalls) {
        settleWith(() => {
          const e = ctx.newError(`exec allows at most ${limits.maxCalls} service calls`);
          deferred.reject(e);
          e.dispose();
        });
      } else {
        hostFetch(method, path, body || undefined, JSON.parse(headers || '{}'))
          .then(
            (r) => JSON.stringify(r),
            (e) => JSON.stringify({ status: 0, body: JSON.stringify({ bridgeError: String(e?.message ?? e) }) }),
          )
          .then((text) =>
            settleWith(() => {
              const s = ctx.newString(text);
              deferred.resolve(s);
              s.dispose();
            }),
          );
      }
      return deferred.handle;
    });
    ctx.setProp(ctx.global, '__hostFetch', bridge);
    bridge.dispose();
    const boot = runSlice(() => ctx.evalCode(sdk + '\n' + PRELUDE, 'sdk.js'));
    if (boot.error) return { ok: false, error: `sdk failed to load: ${errorText(ctx, boot.error)}`, calls };
    boot.value.dispose();
    const started = runSlice(() => ctx.evalCode(js, 'exec.js'));
    if (started.error) return { ok: false, error: errorText(ctx, started.error), calls };
    const settled = ctx.resolvePromise(started.value);
    started.value.dispose();
    pump();
    const deadline = Date.now() + limits.wallMs;
    let outcome: Awaited<typeof settled> | undefined;
    settled.then((o) => {
      outcome = o;
      wake();
    });
    while (!outcome && !fatal && Date.now() < deadline) {
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, Math.max(1, Math.min(250, deadline - Date.now())));
      });
    }
    if (fatal) return { ok: false, error: explain(fatal, cpuUsed, limits), calls };
    if (!outcome) return { ok: false, error: `did not finish within ${limits.wallMs} ms`, calls };
    if (outcome.error) {
      const msg = errorText(ctx, outcome.error);
      return { ok: false, error: explain(msg, cpuUsed, limits), calls };
    }
    const text = ctx.getString(outcome.value);
    outcome.value.dispose();
    return { ok: true, result: JSON.parse(text), calls };
  } catch (e) {
    const msg = (e as Error).message ?? String(e);
    return {
      ok: false,
      error: /memory/i.test(msg)
        ? `exceeded the memory limit of ${limits.memoryBytes} bytes`
        : `isolate failed: ${msg}`,
      calls,
    };
  } finally {
    wake = () => {};
    for (const d of pending)
      try {
        d.dispose();
      } catch {
        /* already gone */
      }
    try {
      ctx.dispose();
      runtime.dispose();
    } catch {
      /* the module is discarded with this run anyway */
    }
  }
}
