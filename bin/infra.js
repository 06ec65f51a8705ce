#!/usr/bin/env node
'use strict';
// Runs the TypeScript CDK app directly (tsx), so `npx cdk synth` needs no build step.
require('tsx/cjs');
require('./infra.ts');
