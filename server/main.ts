/** The language server process: `node dist/server.js --stdio` (or node IPC when started by the VS Code client). */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer } from './host/server';

startServer(createConnection(ProposedFeatures.all));
