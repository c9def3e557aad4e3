import { spawn } from 'node:child_process';

/**
 * A process run to its end: its exit code (-1 when killed by a signal) and everything it wrote, read on 'close' (a
 * process can have exited before its last bytes reached us). `timeoutMs`: killed (SIGKILL) if still running then.
 */
export function runProcess(
  command: string,
  args: string[],
  { timeoutMs, ...options }: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '',
      err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out, err });
    });
  });
}
