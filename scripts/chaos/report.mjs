// What the fault harness prints: a few lines after each run, then one table per database and instance count with a
// column per fault — the figures, then PASS/FAIL per invariant — and the problems behind every FAIL.

const ms = (value) => (value === undefined || !Number.isFinite(value) ? 'n/a' : `${Math.round(value)}`);
const s = (value) => (value === undefined || !Number.isFinite(value) ? 'n/a' : (value / 1000).toFixed(1));

function statusList(counts) {
  const entries = Object.entries(counts ?? {});
  return entries.length === 0 ? '0' : entries.map(([status, count]) => `${count}×${status}`).join(' ');
}

/** The figures of a run as label → cell, in print order. */
function figureCells(result) {
  const f = result.figures;
  if (!f) return {};
  const readyTimes = f.restarts.map((restart) => restart.readyMs);
  return {
    'operations (payments/keyed/reads)': `${f.operations} (${f.operationsByKind.payments}/${f.operationsByKind.keyed}/${f.operationsByKind.reads})`,
    requests: `${f.requests}`,
    'faults injected': `${f.faults}`,
    effects: `${f.effects}`,
    'duplicate effects': `${f.duplicates}`,
    'keyed ops retried': `${f.keyedRetried}`,
    'unanswered payments (committed)': `${f.unansweredPayments} (${f.unansweredPaymentsCommitted})`,
    'webhook events (dup. deliveries)': `${f.webhookEvents} (${f.webhookDuplicateDeliveries})`,
    'time to ready, s (max)': readyTimes.length === 0 ? '—' : s(Math.max(...readyTimes)),
    'crashes (failed starts)': `${f.crashes} (${f.failedStarts})`,
    'back after fault end, s': s(f.recoveryMs),
    '/ready not 200 in fault, s': s(f.notReadyDuringFaultMs),
    'latency before p50/p99, ms': `${ms(f.latencyBefore.p50Ms)}/${ms(f.latencyBefore.p99Ms)}`,
    'latency in fault p50/p99, ms': `${ms(f.latencyDuringFault.p50Ms)}/${ms(f.latencyDuringFault.p99Ms)}`,
    '5xx': statusList(f.serverErrors),
    'resets / slow (>5 s)': `${f.resets} / ${f.slow}`,
    'quiesce, s': s(f.quiesceMs),
    'pending at the last look': Object.entries(f.quiesceWaitedFor ?? {}).map(([what, count]) => `${count} ${what.split(' ').at(-1)}`).join(', ') || '—',
  };
}

export function printRun(result, log) {
  for (const fault of result.faultsInjected ?? []) {
    const back = fault.recoveredAt === undefined ? 'not every instance ready 60 s later' : `every instance ready ${((fault.recoveredAt - fault.startedAt) / 1000).toFixed(1)} s after it began`;
    log(`  fault: ${back}`);
  }
  if (result.error) {
    log(`  ERROR (the harness could not finish this run): ${result.error.split('\n').slice(0, 6).join('\n    ')}`);
    return;
  }
  const f = result.figures;
  log(
    `  ${f.operations} operations, ${f.effects} effects, ${f.duplicates} duplicates; latency p50/p99 ${ms(f.latencyBefore.p50Ms)}/${ms(f.latencyBefore.p99Ms)} ms before, ` +
      `${ms(f.latencyDuringFault.p50Ms)}/${ms(f.latencyDuringFault.p99Ms)} ms in the fault; 5xx ${statusList(f.serverErrors)}; quiet after ${s(f.quiesceMs)} s`,
  );
  const failed = result.invariants.filter((check) => !check.ok);
  log(`  ${result.invariants.length - failed.length} of ${result.invariants.length} invariants hold${failed.length > 0 ? '; FAIL:' : ''}`);
  for (const check of failed) {
    log(`    ${check.name} (${check.problemCount})`);
    for (const problem of check.problems.slice(0, 3)) log(`      - ${problem}`);
  }
  log(`  ${result.seconds.toFixed(0)} s`);
}

function table(rows, log) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  const line = (row) => `| ${row.map((cell, column) => (column === 0 ? String(cell).padEnd(widths[column]) : String(cell).padStart(widths[column]))).join(' | ')} |`;
  log(line(rows[0]));
  log(`|${widths.map((width, column) => (column === 0 ? `:${'-'.repeat(width + 1)}` : `${'-'.repeat(width + 1)}:`)).join('|')}|`);
  for (const row of rows.slice(1)) log(line(row));
}

/** Prints the tables and the failures; answers whether anything failed. */
export function printSummary({ results, skipped, tierName, totalSeconds, log }) {
  log(`\n=== Fault harness, tier ${tierName}: ${results.length} runs in ${(totalSeconds / 60).toFixed(1)} min ===`);
  const groups = new Map();
  for (const result of results) {
    const group = `${result.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'}, ${result.instances} instance${result.instances > 1 ? 's' : ''}`;
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(result);
  }
  let failed = false;
  for (const [group, members] of groups) {
    log(`\n${group}`);
    const labels = [...new Set(members.flatMap((result) => Object.keys(figureCells(result))))];
    const checks = [...new Set(members.flatMap((result) => (result.invariants ?? []).map((check) => check.name)))];
    const rows = [[group, ...members.map((result) => result.fault)]];
    for (const label of labels) rows.push([label, ...members.map((result) => figureCells(result)[label] ?? '—')]);
    for (const name of checks) {
      rows.push([name, ...members.map((result) => {
        if (result.error) return 'ERROR';
        const check = result.invariants.find((candidate) => candidate.name === name);
        return check === undefined ? '—' : check.ok ? 'PASS' : 'FAIL';
      })]);
    }
    rows.push(['run time, s', ...members.map((result) => result.seconds.toFixed(0))]);
    table(rows, log);
  }
  const failures = results.flatMap((result) =>
    result.error ? [[result.name, 'harness error', [result.error.split('\n')[0]]]] : result.invariants.filter((check) => !check.ok).map((check) => [result.name, check.name, check.problems]),
  );
  if (failures.length > 0) {
    failed = true;
    log('\nFailures:');
    for (const [name, check, problems] of failures) {
      log(`  ${name}: ${check}`);
      for (const problem of problems.slice(0, 5)) log(`    - ${problem}`);
    }
  }
  for (const skip of skipped) log(`SKIPPED ${skip.name}: ${skip.reason}`);
  log(`\n${failed ? 'FAIL' : 'PASS'}: ${failures.length} invariant failures in ${results.length} runs (${totalSeconds.toFixed(0)} s)`);
  return failed;
}
