#!/usr/bin/env node
'use strict';
// Runs the TypeScript CLI directly (tsx), so `npm ci` is the only setup step: no build to remember.
// The AWS SDK warns on every run that releases after January 2027 need Node 22; the project runs on
// Node 20 today (see CHANGELOG), so the warning is noise on stderr here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
require('tsx/cjs');
require('./rlvr.ts');
