import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { publicAddress, repositoryAddress } from '../src/lib/repository.js';

const work = mkdtempSync(path.join(os.tmpdir(), 'pbh-repository-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the repository's address on Reproduce", () => {
  it('keeps addresses others can clone, without credentials, and never a local folder', () => {
    expect(publicAddress('https://user:token@github.com/org/pbh.git')).toBe('https://github.com/org/pbh.git');
    expect(publicAddress('git+https://example.org/pbh.git')).toBe('https://example.org/pbh.git');
    expect(publicAddress('git@github.com:org/pbh.git')).toBe('git@github.com:org/pbh.git');
    expect(publicAddress('github:org/pbh')).toBe('https://github.com/org/pbh');
    for (const local of ['/work/main', 'file:///work/main', '../pbh', '']) expect(publicAddress(local), local).toBeNull();
  });

  it("reads package.json's repository first, then the git remote origin, and says why when neither is public", () => {
    const withPackage = path.join(work, 'a');
    execFileSync('git', ['init', '-q', withPackage]);
    writeFileSync(path.join(withPackage, 'package.json'), JSON.stringify({ repository: { url: 'https://example.org/a.git' } }));
    expect(repositoryAddress(withPackage)).toEqual({ address: 'https://example.org/a.git', source: "package.json's repository" });
    const withRemote = path.join(work, 'b');
    execFileSync('git', ['init', '-q', withRemote]);
    execFileSync('git', ['-C', withRemote, 'remote', 'add', 'origin', 'https://example.org/b.git']);
    expect(repositoryAddress(withRemote)).toEqual({ address: 'https://example.org/b.git', source: 'the git remote origin' });
    const clone = path.join(work, 'c');
    execFileSync('git', ['init', '-q', clone]);
    execFileSync('git', ['-C', clone, 'remote', 'add', 'origin', withRemote]);
    expect(repositoryAddress(clone).address).toBeNull();
    expect(repositoryAddress(clone).source).toMatch(/local folder/);
  });
});
