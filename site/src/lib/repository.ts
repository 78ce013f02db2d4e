import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { repoRoot } from './scrub.js';

const PackageSchema = z.object({ repository: z.union([z.string(), z.object({ url: z.string() })]).optional() });

/**
 * A repository address a reader can clone: a URL (https, ssh, git) or host:path, with any user and password taken
 * out; null for a local folder (a clone of a clone), which would name this machine's paths and help no one else.
 */
export function publicAddress(raw: string): string | null {
  const text = raw.trim().replace(/^git\+/, '');
  if (text === '' || text.startsWith('file:') || path.isAbsolute(text) || text.startsWith('.')) return null;
  // npm's shorthand: "github:owner/name" or "owner/name".
  const shorthand = /^(?:github:)?([\w.-]+\/[\w.-]+)$/.exec(text);
  if (shorthand) return `https://github.com/${shorthand[1]}`;
  try {
    const url = new URL(text);
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    // scp-like "git@host:owner/name.git": the user before the @ is a login name, kept as git's own convention.
    return /^[\w.-]+@[\w.-]+:[\w./-]+$/.test(text) ? text : null;
  }
}

export interface RepositoryAddress {
  address: string | null;
  /** Where it came from, or why there is none. */
  source: string;
}

/** The repository's address: package.json's `repository`, else the git remote `origin` of the folder the site is built from. */
export function repositoryAddress(root = repoRoot()): RepositoryAddress {
  try {
    const pkg = PackageSchema.parse(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')));
    const raw = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
    const address = raw === undefined ? null : publicAddress(raw);
    if (address) return { address, source: "package.json's repository" };
  } catch {
    // No package.json, or not one this reads: the git remote may still say.
  }
  try {
    const remote = execFileSync('git', ['-C', root, 'remote', 'get-url', 'origin'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 });
    const address = publicAddress(remote);
    if (address) return { address, source: 'the git remote origin' };
    return { address: null, source: "the git remote origin is a local folder, and package.json names no repository" };
  } catch {
    return { address: null, source: 'package.json names no repository and the site was not built in a git clone with a remote' };
  }
}

/**
 * The web page of a commit, where the repository's address is one of the hosts whose pages are <address>/commit/<sha>
 * (GitHub, GitLab, Codeberg); null elsewhere, or without a sha: the page then shows the sha as text.
 */
export function commitUrl(address: string | null, sha: string | null): string | null {
  if (address === null || sha === null || !/^[0-9a-f]{7,40}$/i.test(sha)) return null;
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' || !['github.com', 'gitlab.com', 'codeberg.org'].includes(url.hostname)) return null;
  return `https://${url.hostname}${url.pathname.replace(/\.git$/, '').replace(/\/+$/, '')}/commit/${sha}`;
}
