import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** $XDG_CONFIG_HOME/vcs/config.json, else ~/.config/vcs/config.json. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'vcs', 'config.json');
}

export interface StoredConfig {
  key?: string;
  account?: string;
  baseUrl?: string;
}

export function readConfig(path = configPath()): StoredConfig {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as StoredConfig;
  } catch {
    return {};
  }
}

/** Owner-only: the directory 0700 and the file 0600, since it holds a secret. */
export function writeConfig(cfg: StoredConfig, path = configPath()): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
  chmodSync(path, 0o600);
}
