/** Entry of the explorer worker thread (bundled as dist/explorer-worker.js). */
import { parentPort } from 'node:worker_threads';
import { serveExplorer } from './explorer-driver';

if (!parentPort) throw new Error('explorer-worker must run in a worker thread');
serveExplorer(parentPort);
