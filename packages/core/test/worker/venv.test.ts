import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureVenv, findVenvPython, venvStatus, VENV_FIX } from '../../src/worker/venv.js';
import { FIXTURES, REPO_PYTHON } from './helpers.js';

const REPO_ROOT = REPO_PYTHON.replace(/\/\.venv\/bin\/python$/, '');
const saved = { PBH_PYTHON: process.env.PBH_PYTHON, PBH_VENV: process.env.PBH_VENV };
let scratch: string;

beforeEach(() => {
  delete process.env.PBH_PYTHON;
  delete process.env.PBH_VENV;
  scratch = mkdtempSync(join(tmpdir(), 'pbh-venv-'));
});

afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  rmSync(scratch, { recursive: true, force: true });
});

/** A project folder with python/requirements.txt and, when asked, a .venv whose python links to the repo's. */
function makeProject(withVenv: boolean, requirements = '# no packages\n'): string {
  const root = join(scratch, 'project');
  mkdirSync(join(root, 'python'), { recursive: true });
  mkdirSync(join(root, 'experiments', 'deep'), { recursive: true });
  writeFileSync(join(root, 'python', 'requirements.txt'), requirements);
  if (withVenv) {
    mkdirSync(join(root, '.venv', 'bin'), { recursive: true });
    symlinkSync(REPO_PYTHON, join(root, '.venv', 'bin', 'python'));
  }
  return root;
}

describe('locating the project venv python', () => {
  it('finds .venv/bin/python next to python/requirements.txt, walking up from cwd', () => {
    const root = makeProject(true);
    expect(findVenvPython(join(root, 'experiments', 'deep'))).toEqual({ python: join(root, '.venv', 'bin', 'python'), root, source: 'project' });
  });

  it('falls back to the project that holds this module when cwd is elsewhere', () => {
    expect(findVenvPython(scratch)).toEqual({ python: REPO_PYTHON, root: REPO_ROOT, source: 'project' });
  });

  it('prefers PBH_PYTHON, then PBH_VENV, and reports nothing when they point nowhere', () => {
    const root = makeProject(true);
    process.env.PBH_VENV = join(root, '.venv');
    expect(findVenvPython(scratch)).toEqual({ python: join(root, '.venv', 'bin', 'python'), source: 'PBH_VENV' });
    process.env.PBH_PYTHON = REPO_PYTHON;
    expect(findVenvPython(scratch)).toEqual({ python: REPO_PYTHON, source: 'PBH_PYTHON' });
    process.env.PBH_PYTHON = join(scratch, 'nope', 'python');
    expect(findVenvPython(scratch)).toBeUndefined();
  });
});

describe('venv status and repair', () => {
  it('names missing modules and the fix command', async () => {
    const status = await venvStatus(['json', 'pbh_no_such_module'], makeProject(true));
    expect(status.ok).toBe(false);
    expect(status.missing).toEqual([`python module pbh_no_such_module is not installed in ${join(scratch, 'project', '.venv', 'bin', 'python')}`]);
    expect(status.fix).toBe(VENV_FIX);
    expect(VENV_FIX).toContain('npx pbh doctor --fix');
  });

  it('reports a missing venv without creating it unless asked', async () => {
    process.env.PBH_VENV = join(scratch, 'absent-venv');
    const status = await ensureVenv({ fix: false });
    expect(status.ok).toBe(false);
    expect(status.missing[0]).toContain('PBH_VENV=');
    expect(existsSync(join(scratch, 'absent-venv'))).toBe(false);
  });

  it('with fix, installs python/requirements.txt into the project venv', async () => {
    const root = join(scratch, 'project');
    mkdirSync(join(root, 'python'), { recursive: true });
    const wheel = (await execa(REPO_PYTHON, [join(FIXTURES, 'make_wheel.py'), scratch])).stdout.trim();
    writeFileSync(join(root, 'python', 'requirements.txt'), `${wheel}\n`);
    // A pip-less venv that uses the base interpreter's pip: creating one with pip takes ~30 s on a busy box.
    await execa('python3', ['-m', 'venv', '--without-pip', '--system-site-packages', join(root, '.venv')]);
    const python = join(root, '.venv', 'bin', 'python');
    const lines: string[] = [];
    process.chdir(root);
    try {
      expect(await ensureVenv({ fix: false, modules: ['pbh_fake_module'] })).toMatchObject({ ok: false, missing: [`python module pbh_fake_module is not installed in ${python}`] });
      const status = await ensureVenv({ fix: true, modules: ['pbh_fake_module'], log: (l) => lines.push(l) });
      expect(status).toMatchObject({ ok: true, python, root, missing: [] });
      expect(lines[0]).toBe(`$ ${python} -m pip install -r ${join(root, 'python', 'requirements.txt')}`);
      expect((await execa(python, ['-c', 'import pbh_fake_module; print(pbh_fake_module.VALUE)'])).stdout).toBe('42');
    } finally {
      process.chdir(REPO_ROOT);
    }
  });
});
