import { weightsNamedByIndex } from '../../lib/checkpoints';

describe('weightsNamedByIndex: the one reading of a safetensors index (pre-flight, download, tracker)', () => {
  it('names each weight file once, in the order the weight map first names it', () => {
    const text = JSON.stringify({
      metadata: { total_size: 10 },
      weight_map: {
        'a.weight': 'model-00001-of-00002.safetensors',
        'b.weight': 'model-00002-of-00002.safetensors',
        'c.weight': 'model-00001-of-00002.safetensors',
      },
    });
    expect(weightsNamedByIndex(text)).toEqual([
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
    ]);
  });

  it('an index without a weight map names nothing (the verdict then says so)', () => {
    expect(weightsNamedByIndex('{}')).toEqual([]);
  });

  it('an index that could not be read, or is half written, is unreadable', () => {
    expect(weightsNamedByIndex(undefined)).toBe('unreadable');
    expect(weightsNamedByIndex('{"weight_map": {"a": "model-0000')).toBe('unreadable');
  });
});
