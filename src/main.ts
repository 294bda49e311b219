// Entry point (`node dist/src/main.js`, `npm start`): refuses an unsupported Node first, then loads the server
// (src/serve.ts) by a dynamic import, so that nothing of it (a native module, newer syntax) is linked before the check.
import { exitBelowNodeFloor } from './node-floor.js';

exitBelowNodeFloor();
await import('./serve.js');
