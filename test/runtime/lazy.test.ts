import { describe, expect, it } from 'vitest';
import { lazy } from '../../src/runtime/lazy.js';

describe('lazy', () => {
  it('builds nothing until the first call, then once, and returns the same value', () => {
    let builds = 0;
    const value = lazy(() => ({ n: ++builds }));
    expect(builds).toBe(0);
    const first = value();
    expect(value()).toBe(first);
    expect(builds).toBe(1);
  });

  it('keeps an undefined result as built', () => {
    let builds = 0;
    const value = lazy(() => void builds++);
    value();
    value();
    expect(builds).toBe(1);
  });

  it('builds again after a build that threw (nothing was kept)', () => {
    let builds = 0;
    const value = lazy(() => {
      if (++builds === 1) throw new Error('first');
      return builds;
    });
    expect(() => value()).toThrow('first');
    expect(value()).toBe(2);
  });
});
