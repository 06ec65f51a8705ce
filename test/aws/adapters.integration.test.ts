import { adapterCases } from './adapter-cases';
import { describeWithPeer, motoAvailable } from '../helpers/moto';

/*
 * The adapters on the SDK packages, as the TypeScript sources load them (adapter-cases.ts says what is
 * checked; sdk-bundle.integration.test.ts runs the same on the build's bundle). errors.test.ts has the
 * mapping on SDK stubs.
 */

describeWithPeer('moto_server', motoAvailable())('AWS adapters against moto', () => adapterCases());
