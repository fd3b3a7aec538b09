// The prompt templates' filler (src/agents/prompts/templates.ts, docs/contract.md#injected-turns): a placeholder
// without a value or a value without a placeholder is an error, never a silent blank; sections keep or drop their
// text; a value is inserted as it is.
import { describe, expect, it } from 'vitest';
import { fill, render, TemplateError } from '../../../src/agents/prompts/templates.ts';

describe('prompt templates', () => {
  it('fills placeholders, and a value is never read again for tags', () => {
    expect(fill('identity-line', { name: 'alice', role: 'coder', team: '{{team}}' })).toBe("You are 'alice', role: coder, team: {{team}}.");
  });

  it('a missing value and an unknown one are errors that name them', () => {
    expect(() => fill('identity-line', { name: 'alice', role: 'coder' })).toThrow(new TemplateError('template identity-line: no value for team'));
    expect(() => fill('identity-line', { name: 'alice', role: 'coder', team: 't', teem: 't' })).toThrow(
      new TemplateError('template identity-line: no placeholder for teem'),
    );
    // A value only a dropped section uses is still required: a template's names do not depend on the case.
    expect(() => render('{{#a}}{{b}}{{/a}}', { a: false })).toThrow(/no value for b/);
  });

  it('keeps a section when its value is truthy and an inverted one when it is not', () => {
    const text = 'x{{#n}} n={{n}}{{/n}}{{^n}} none{{/n}}';
    expect(render(text, { n: 2 })).toBe('x n=2');
    expect(render(text, { n: 0 })).toBe('x none');
    expect(render(text, { n: '' })).toBe('x none');
    expect(render('{{#a}}A{{#b}}B{{/b}}{{/a}}', { a: true, b: true })).toBe('AB');
    expect(render('{{#a}}A{{#b}}B{{/b}}{{/a}}', { a: true, b: false })).toBe('A');
  });

  it('an unclosed section or a stray close is an error, even where the values would drop it', () => {
    expect(() => render('{{#a}}open', { a: true })).toThrow(/unclosed section or a malformed tag/);
    expect(() => render('text{{/a}}', { a: true })).toThrow(/unclosed section or a malformed tag/);
    expect(() => render('{{#a}}{{#b}}x{{/a}}', { a: false, b: true })).toThrow(/unclosed section or a malformed tag/);
  });
});
