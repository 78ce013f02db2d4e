import { describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/harness/summary-table.js';
import { makeProfile } from '../store/profile-fixture.js';

describe('the end-of-run summary', () => {
  it('cuts a name too long for a terminal, keeping every column in view', () => {
    const long = 'm'.repeat(5000);
    const text = formatSummary([makeProfile({ profileId: 'a', runId: 'r', model: long }), makeProfile({ profileId: 'b', runId: 'r' })]);
    const lines = text.split('\n');
    for (const line of lines) expect(line.length).toBeLessThan(200);
    expect(lines[2]).toMatch(/^m{59}… {2}onnxruntime/);
    expect(lines[3]).toMatch(/^digits-cnn /);
  });
});
