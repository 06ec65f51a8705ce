import { removeTempDirs } from './helpers/fixtures';

afterAll(removeTempDirs);

// The CLI's one-line warning on an unsupported Node has its own test (test/cli/node-support.test.ts);
// elsewhere it would only be an extra stderr line in the commands' output checks on such a Node.
process.env.RLVR_NODE_WARNED = '1';
