/** The section of the job's inputs: the models, datasets, order files and local files, and their channels. */
import { formatKeyPath } from '../../lib/config';
import { s3Uri } from '../../lib/training';
import { planSection, row } from './section';

export const inputsSection = planSection({
  id: 'inputs',
  title: 'Inputs (jobs cannot reach the Hugging Face Hub: everything comes from S3)',
  text: (plan) => {
    const mode = plan.options.modelInputMode.value;
    let out = '';
    const model = plan.inputs.model;
    for (const m of model.mappings) out += row('model', `${m.value} → ${s3Uri(model.location)}`, m.note);
    out += row('', `channel model (${mode}) at ${model.containerPath}`);
    for (const other of plan.inputs.otherModels) {
      for (const m of other.mappings) out += row('model', `${m.value} → ${s3Uri(other.location)}`, m.note);
      out += row('', `channel ${other.channel} (${mode}) at ${other.containerPath}`);
    }
    for (const d of plan.inputs.datasets)
      out += row(d.kind === 'file' ? 'data file' : 'dataset', s3Uri(d.location), d.note);
    for (const d of plan.inputs.notCarried) out += row('dataset', d.name, `no channel: ${d.why}`);
    for (const f of plan.inputs.orderFiles)
      out += row(
        'order file',
        s3Uri(f.location),
        f.note ? `channel ${f.channel}; ${f.note}` : `channel ${f.channel}`,
      );
    for (const f of plan.inputs.localFiles)
      out += row(
        'local file',
        `${f.value} (${formatKeyPath(f.referencedAt)})`,
        "travels with the trainer's source",
      );
    return out;
  },
  json: (plan) => ({
    model: {
      uri: s3Uri(plan.inputs.model.location),
      mappings: plan.inputs.model.mappings,
    },
    otherModels: plan.inputs.otherModels.map((m) => ({
      channel: m.channel,
      uri: s3Uri(m.location),
      mappings: m.mappings,
    })),
    datasets: plan.inputs.datasets.map((d) => ({
      folder: d.folder,
      kind: d.kind,
      channel: d.channel,
      uri: s3Uri(d.location),
      note: d.note,
    })),
    orderFiles: plan.inputs.orderFiles.map((o) => ({
      channel: o.channel,
      uri: s3Uri(o.location),
      note: o.note,
    })),
  }),
});
