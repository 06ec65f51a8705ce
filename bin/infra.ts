import { buildApp } from '../lib/infra';

// The CDK app (`npx cdk synth`, `npx cdk deploy --all`); settings come from cdk.json context.
buildApp().app.synth();
