/**
 * What a dry-run without AWS shows for settings it could not read: values that cannot be mistaken for
 * real ones (the zero account, `unresolved`), each name recorded once so the plan can say which.
 */
export type PlaceholderName = 'bucket' | 'roleArn' | 'repositoryUri' | 'region' | 'image' | 'fileSystemId';
export const PLACEHOLDERS: Readonly<Record<PlaceholderName, string>> = {
  bucket: 'unresolved-bucket',
  roleArn: 'arn:aws:iam::000000000000:role/UNRESOLVED-execution-role',
  repositoryUri: '000000000000.dkr.ecr.unresolved.amazonaws.com/unresolved',
  region: 'unresolved-region',
  image: '000000000000.dkr.ecr.unresolved.amazonaws.com/unresolved:UNRESOLVED-image',
  // The zero file system: a valid id (the request still checks against the API model), never a real one.
  fileSystemId: 'fs-00000000000000000',
};

/** Settings a dry-run could not resolve become marked placeholders, each recorded once. */
export class Placeholders {
  readonly names: PlaceholderName[] = [];
  value(name: PlaceholderName, v: string | undefined): string {
    if (v !== undefined) return v;
    if (!this.names.includes(name)) this.names.push(name);
    return PLACEHOLDERS[name];
  }
}
