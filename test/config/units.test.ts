import { formatDuration, parseDuration, parseGpuList } from '../../lib/config';

describe('durations', () => {
  it.each([
    [86400, 86400],
    ['86400', 86400],
    ['24h', 86400],
    ['90m', 5400],
    ['1h30m', 5400],
    ['3600s', 3600],
    ['2d', 172800],
  ])('parses %p as %p seconds', (input, seconds) => expect(parseDuration(input)).toBe(seconds));
  it.each(['forever', '1x', 'h', '', '1h 30m', -5, 1.5])('rejects %p', (input) =>
    expect(parseDuration(input)).toBeUndefined(),
  );
  it('formats hours up to three days', () => {
    expect(formatDuration(86400)).toBe('24h');
    expect(formatDuration(5400)).toBe('1h30m');
    expect(formatDuration(28 * 86400)).toBe('28d');
  });
});

describe('GPU lists', () => {
  it.each([
    ['0,1,2,3,4,5', [0, 1, 2, 3, 4, 5]],
    ['0-5', [0, 1, 2, 3, 4, 5]],
    ['6,7', [6, 7]],
    ['0-3,6', [0, 1, 2, 3, 6]],
    [' 7, 6 ', [6, 7]],
    ['', []],
    [
      [1, 0, 1],
      [0, 1],
    ],
  ])('parses %p', (input, gpus) => expect(parseGpuList(input as string)).toEqual(gpus));
  it.each(['a', '5-3', '1,,2', '-1', [1.5]])('rejects %p', (input) =>
    expect(parseGpuList(input as string)).toBeUndefined(),
  );
});
