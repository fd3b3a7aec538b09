// A build-time patch of string-width (Ink's and huddle's measure of text on screen) that keeps its
// answers and drops its start-up cost. As published, loading it builds an Intl.Segmenter and the
// /^\p{RGI_Emoji}$/v expression, and its first non-ASCII string compiles that expression: ~50 ms
// of a console's first frame on a quiet machine. Patched:
// - both are made when first needed;
// - a string whose characters each stand alone as a grapheme (no marks, joiners, variation
//   selectors, Hangul jamo, characters beyond the BMP…) is measured character by character: East
//   Asian Width, or 2 for an emoji shown as one by default (Emoji_Presentation).
// test/scripts/string-width-fast-path.test.ts checks the patched function against the published one
// over every code point and many strings.

/** Characters that each form their own grapheme cluster next to any other such character. */
export const OWN_CLUSTERS = String.raw`^[^\p{M}\p{Grapheme_Extend}\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u1100-\u11FF\uA960-\uA97F\uD7B0-\uD7FF\u0E33\u0EB3\u0D4E\u{10000}-\u{10FFFF}]*$`;

const STEPS = [
  [
    'const segmenter = new Intl.Segmenter();',
    'let segmenterMade;\nconst segmenter = {segment: (text) => (segmenterMade ??= new Intl.Segmenter()).segment(text)};',
  ],
  [
    'const rgiEmojiRegex = /^\\p{RGI_Emoji}$/v;',
    [
      'let rgiEmojiMade;',
      "const rgiEmojiRegex = {test: (text) => (rgiEmojiMade ??= new RegExp('^\\\\p{RGI_Emoji}$', 'v')).test(text)};",
      `const ownClusters = /${OWN_CLUSTERS}/u;`,
      'const emojiPresentation = /\\p{Emoji_Presentation}/u;',
    ].join('\n'),
  ],
  [
    '\tlet width = 0;\n\tconst eastAsianWidthOptions = {ambiguousAsWide: !ambiguousIsNarrow};\n',
    [
      '\tlet width = 0;',
      '\tconst eastAsianWidthOptions = {ambiguousAsWide: !ambiguousIsNarrow};',
      '\tif (ownClusters.test(string)) {',
      '\t\tfor (const character of string) width += emojiPresentation.test(character) ? 2 : eastAsianWidth(character.codePointAt(0), eastAsianWidthOptions);',
      '\t\treturn width;',
      '\t}',
      '',
    ].join('\n'),
  ],
];

/** string-width's index.js patched, or undefined when its text is not the one this patch knows (another version). */
export function patchStringWidth(source) {
  let patched = source;
  for (const [from, to] of STEPS) {
    if (!patched.includes(from)) return undefined;
    patched = patched.replace(from, () => to);
  }
  return patched;
}

/** @type {import('esbuild').Plugin} */
export const stringWidthFastPath = {
  name: 'string-width-fast-path',
  setup(build) {
    build.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(args.path, 'utf8');
      const patched = patchStringWidth(source);
      // string-width 4 (cli-highlight's yargs) and versions this patch does not know are bundled as they are.
      return patched === undefined ? undefined : { contents: patched, loader: 'js' };
    });
  },
};
