import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** Every test runs on the bundled suite (and the generate tests on the bundled LM); both generators are idempotent, so this is a no-op once they exist. */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..');
  const python = path.join(root, '.venv', 'bin', 'python');
  if (!existsSync(python)) {
    throw new Error(`tests need the project venv (${python}); create it with: npx pbh doctor --fix  (or npm run demo)`);
  }
  execFileSync(python, [path.join(root, 'python', 'generate_suite.py')], { cwd: root, stdio: 'inherit' });
  execFileSync(python, [path.join(root, 'python', 'generate_lm.py')], { cwd: root, stdio: 'inherit' });
}
