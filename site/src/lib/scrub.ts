import os from 'node:os';
import path from 'node:path';
import type { PublishedProfile } from '@pbh/core';

/**
 * Published pages and downloads carry no absolute path of the machine that ran or built them: a path becomes relative
 * to the experiment config (as the config itself wrote it), else relative to the repository the site is built from,
 * else `…/` and its last two parts. Downloads go through the same rules (scrubDeep for JSON, scrubSql for the
 * database copies); stacks and stderr stay in the Profile's JSON, their paths shortened too.
 */
export type Scrub = (text: string) => string;

/** An absolute POSIX path of two or more parts, not part of a URL (`http://host/a/b`) or of a relative path (`a/b/c`). */
const ABSOLUTE = /(?<![\w.:/~-])\/(?:[\w.@+~-]+\/)+[\w.@+~-]*/g;

/** The repository the site is built from: astro.config.ts sets it (the site's parent folder). */
export function repoRoot(): string {
  return process.env.PBH_SITE_REPO ?? path.resolve(process.cwd(), '..');
}

const FILE_URL = /\bfile:\/\/(?=\/)/g;

/** Folders a path is shown relative to, most specific first: `prefix` replaces `dir/`. */
export interface Base {
  dir: string;
  prefix: string;
}

const repoBases = (): Base[] => [{ dir: repoRoot(), prefix: '' }];

/**
 * Where the config's relative paths start, read from the model entry: the config wrote `../.cache/m.onnx`, PBH
 * resolved `/work/repo/.cache/m.onnx`, so `/work/repo/` is `../` seen from the config. Null where the entry's path
 * was already absolute (nothing to learn) or the two do not end alike.
 */
function configBase(p: PublishedProfile): Base | null {
  const resolved = p.profile.model?.path;
  const cell = (p.profile.config as { cell?: { model?: { path?: unknown } } } | null)?.cell;
  const written = cell?.model?.path;
  if (typeof resolved !== 'string' || typeof written !== 'string' || path.isAbsolute(written)) return null;
  const parts = path.posix.normalize(written).split('/');
  const ups = parts.filter((part) => part === '..').length;
  const tail = parts.filter((part) => part !== '..' && part !== '.').join('/');
  if (!resolved.endsWith(`/${tail}`)) return null;
  const dir = resolved.slice(0, resolved.length - tail.length - 1);
  // A config that climbs to the filesystem's root would show every path whole, as ../../ and the absolute path.
  if (dir.split('/').filter(Boolean).length === 0) return null;
  return { dir, prefix: ups === 0 ? '' : '../'.repeat(ups) };
}

function shorten(absolute: string, bases: Base[]): string {
  for (const { dir, prefix } of bases) {
    if (absolute === dir) return prefix === '' ? '.' : prefix.slice(0, -1);
    if (absolute.startsWith(`${dir}/`)) return `${prefix}${absolute.slice(dir.length + 1)}`;
  }
  const parts = absolute.split('/').filter(Boolean);
  return parts.length <= 2 ? `…/${parts.join('/')}` : `…/${parts.slice(-2).join('/')}`;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A relative path that climbs to the filesystem's root and down into the repository (a config under /tmp naming
 * `../../work/repo/.cache/m.onnx`) spells the repository's absolute path: it reads relative to the repository.
 */
function climbingIntoRepo(): RegExp | null {
  const tail = repoRoot().replace(/^\/+/, '');
  return tail === '' ? null : new RegExp(`(?<![\\w.~-])(?:\\.\\./)+${escapeRegExp(tail)}(?:/|(?![\\w.@+~-]))`, 'g');
}

export function scrubWith(bases: Base[]): Scrub {
  // The home folder names the user: it is never kept, whatever base it sits under.
  const home = os.homedir();
  const climbing = climbingIntoRepo();
  return (text) =>
    // A file:// URL is a local path too (a stack's frames): its path is scrubbed like any other.
    (climbing ? text.replace(climbing, '') : text).replace(FILE_URL, '').replace(ABSOLUTE, (match) => {
      const shown = shorten(match, bases);
      return home.length > 1 && shown.includes(home) ? shown.replaceAll(home, '~') : shown;
    });
}

/** The scrubber for one Profile's texts: its config's folder first, then the repository. */
export function scrubberFor(p: PublishedProfile): Scrub {
  const base = configBase(p);
  return scrubWith(base ? [base, ...repoBases()] : repoBases());
}

/** For texts that belong to no one Profile (a run's command): the repository only. */
export function scrubRepo(text: string): string {
  return scrubWith(repoBases())(text);
}

/** A relative path that climbs (`../../tmp/x.json`): in a command, relative to the folder pbh ran in. */
const CLIMBING = /(?<![\w./~-])(?:\.\.\/)+[\w.@+~-]+(?:\/[\w.@+~-]+)*/g;

/**
 * A command as a page shows it: pbh records paths relative to the folder it ran in, usually the repository, so one
 * that climbs out of it (`--db ../../tmp/x.duckdb`) is resolved from there and shortened like an absolute path.
 */
export function scrubCommand(command: string, scrub: Scrub = scrubRepo): string {
  const root = repoRoot();
  return scrub(command.replace(CLIMBING, (match) => (path.resolve(root, match).startsWith(`${root}/`) ? match : path.resolve(root, match))));
}

/**
 * An error as a page shows it: the message without the worker's stderr tail or a stack (both stay in the Profile's
 * JSON), paths scrubbed.
 */
export function pageError(error: string | null, scrub: Scrub): string | null {
  if (error === null) return null;
  const cut = error.split(/\n--- last stderr of |\n\s+at |\nTraceback \(most recent call last\)/)[0] ?? error;
  return scrub(cut.trim());
}

/**
 * Every string inside a JSON value scrubbed, keys included; numbers, booleans and nulls as they were. A `command`
 * is scrubbed as a command (scrubCommand): its paths are relative to the folder pbh ran in.
 */
export function scrubDeep(value: unknown, scrub: Scrub): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, scrub));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [scrub(k), k === 'command' && typeof v === 'string' ? scrubCommand(v, scrub) : scrubDeep(v, scrub)]),
    );
  }
  return value;
}

function sqlLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** RE2 (DuckDB's regex engine) has no look-behind: the character before a path is captured and put back. */
const SQL_ABSOLUTE = String.raw`(^|[^\w.:/~-])/(?:[\w.@+~-]+/)*([\w.@+~-]+/[\w.@+~-]*)`;

/**
 * The same rules as scrubRepo, as a DuckDB expression over a VARCHAR expression `column`: the repository's own paths
 * relative to it, the home folder as ~, any other absolute path as `…/` and its last two parts.
 */
export function scrubSql(column: string): string {
  const home = os.homedir();
  let expr = `replace(replace(${column}, 'file:///', '/'), ${sqlLiteral(`${repoRoot()}/`)}, '')`;
  // A relative path that climbs to the root and into the repository (climbingIntoRepo), as RE2 can say it.
  const tail = repoRoot().replace(/^\/+/, '');
  if (tail !== '') expr = `regexp_replace(${expr}, ${sqlLiteral(`(\\.\\./)+${escapeRegExp(tail)}/`)}, '', 'g')`;
  if (home.length > 1) expr = `replace(${expr}, ${sqlLiteral(`${home}/`)}, '~/')`;
  return `regexp_replace(${expr}, ${sqlLiteral(SQL_ABSOLUTE)}, '\\1…/\\2', 'g')`;
}
