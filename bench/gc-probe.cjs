// Preloaded into each language server by bench/lsp.bench.ts (`node --require`): counts the process's own garbage
// collections and writes the totals to stderr when sent SIGUSR2, so the bench can report major GCs per server.
'use strict';
const { PerformanceObserver, constants } = require('node:perf_hooks');

const counts = { major: 0, minor: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.major++;
    else if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.minor++;
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR2', () => process.stderr.write(`GC-PROBE ${counts.major} ${counts.minor}\n`));
