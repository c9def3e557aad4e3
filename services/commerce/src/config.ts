import { z } from 'zod';
import { setting } from '@vcs/platform';

const keyConfig = z.object({
  /** How long a rotated key keeps working beside its successor. */
  KEY_ROTATION_GRACE_SECONDS: setting.int(0, 90 * 86_400).default(86_400),
});

/** Read at call time so a process (or test) sets it without a rebuild; a bad value names the setting. */
export function rotationGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const parsed = keyConfig.safeParse(env);
  if (!parsed.success) throw new Error(`config error: KEY_ROTATION_GRACE_SECONDS: ${parsed.error.issues[0]!.message}`);
  return parsed.data.KEY_ROTATION_GRACE_SECONDS * 1000;
}
