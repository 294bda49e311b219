// Keys CLI entry (docs/keys.md; `npm run keys`, the image's `keys`): refuses an unsupported Node first, then loads the
// commands (src/cli/keys-command.ts, which opens the SQLite store) by a dynamic import.
import { exitBelowNodeFloor } from '../node-floor.js';

exitBelowNodeFloor();
const { main } = await import('./keys-command.js');
await main();
