// Deletes intermediate checkpoints (`<job>/<run>_step<N>/`) older than EXPIRY_DAYS under
// CHECKPOINTS_PREFIX, keeping every `_final` and each job's newest step. Inlined into a Lambda
// function by the stack (plain CommonJS, the SDK the Node runtime ships); tested against moto.
const { S3Client, ListObjectsV2Command, DeleteObjectsCommand } = require('@aws-sdk/client-s3');

exports.handler = async function handler(event, context, client) {
  const bucket = process.env.BUCKET;
  const prefix = process.env.CHECKPOINTS_PREFIX;
  const cutoff = Date.now() - Number(process.env.EXPIRY_DAYS) * 86400000;
  const s3 = client || new S3Client({});
  const folders = new Map(); // "<job>/<folder>" -> { job, step, newest, keys }
  let token;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents || []) {
      const [job, folder] = o.Key.slice(prefix.length).split('/');
      const m = /_step(\d+)$/.exec(folder || '');
      if (!m || o.Key.split('/').length < prefix.split('/').length + 2) continue;
      const id = job + '/' + folder;
      const f = folders.get(id) || { job, step: Number(m[1]), newest: 0, keys: [] };
      f.newest = Math.max(f.newest, new Date(o.LastModified).getTime());
      f.keys.push(o.Key);
      folders.set(id, f);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const latestStep = new Map();
  for (const f of folders.values()) latestStep.set(f.job, Math.max(latestStep.get(f.job) ?? -1, f.step));
  const doomed = [];
  for (const f of folders.values()) {
    if (f.step !== latestStep.get(f.job) && f.newest < cutoff) doomed.push(...f.keys);
  }
  for (let i = 0; i < doomed.length; i += 1000) {
    const batch = doomed.slice(i, i + 1000).map((Key) => ({ Key }));
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch, Quiet: true } }));
  }
  return { deleted: doomed.length };
};
