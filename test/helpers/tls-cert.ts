import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './fixtures';

/**
 * A self-signed certificate for 127.0.0.1 (openssl), valid a day: for a TLS endpoint on loopback that a
 * process trusts through NODE_EXTRA_CA_CERTS=certFile.
 */
export function loopbackCertificate(): { key: string; cert: string; certFile: string } {
  const dir = tempDir();
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { encoding: 'utf8' },
  );
  if (made.status !== 0)
    throw new Error(`openssl could not make a certificate: ${made.stderr || made.error}`);
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), certFile };
}
