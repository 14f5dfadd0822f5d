import {execFileSync} from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Every relative link and anchor in README.md and docs/*.md resolves: the file or folder exists
 * (relative to the page), and an anchor names a heading of the page it points to, slugged as
 * GitHub slugs headings. Links in code (fenced blocks, inline code) are not links; absolute URLs
 * are not checked (the suite runs offline). Older benchmark runs are linked by commit, as inline
 * code `git show <commit>:<path>`: each must name a file of that commit in this clone's history.
 */
const root = path.resolve(__dirname, '..');

function pages(): string[] {
  const docs = path.join(root, 'docs');
  const inDocs = fs.existsSync(docs) ? fs.readdirSync(docs).filter(f => f.endsWith('.md')).map(f => path.join(docs, f)) : [];
  return [path.join(root, 'README.md'), ...inDocs];
}

/** The page's text with fenced code blocks and inline code blanked out (line numbers kept). */
function prose(markdown: string): string {
  let inFence = false;
  return markdown.split('\n').map(line => {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line.replace(/`[^`]*`/g, '``');
  }).join('\n');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  page: string;
  line: number;
  target: string;
}

function relativeLinks(page: string): Link[] {
  const links: Link[] = [];
  prose(fs.readFileSync(page, 'utf8')).split('\n').forEach((text, i) => {
    for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;  // http:, https:, mailto: …
      links.push({page, line: i + 1, target});
    }
    for (const match of text.matchAll(/<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(match[1])) links.push({page, line: i + 1, target: match[1]});
    }
  });
  return links;
}

/** What is wrong with a link, or undefined when it resolves. */
function problemOf(link: Link): string | undefined {
  const [filePart, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const resolved = filePart === '' ? link.page : path.resolve(path.dirname(link.page), decodeURIComponent(filePart));
  if (!resolved.startsWith(root + path.sep) && resolved !== root) return 'points outside the repository';
  if (!fs.existsSync(resolved)) return `${path.relative(root, resolved)} does not exist`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith('.md')) return `has an anchor into ${path.relative(root, resolved)}, which is not Markdown`;
  const anchors = headingAnchors(fs.readFileSync(resolved, 'utf8'));
  return anchors.has(decodeURIComponent(anchor)) ? undefined :
      `#${anchor} is not a heading of ${path.relative(root, resolved)} (headings: ${[...anchors].join(', ')})`;
}

interface GitShowReference {
  page: string;
  line: number;
  /** `<commit>:<path>` as `git cat-file` takes it. */
  object: string;
}

function gitShowReferences(page: string): GitShowReference[] {
  const references: GitShowReference[] = [];
  fs.readFileSync(page, 'utf8').split('\n').forEach((text, i) => {
    for (const match of text.matchAll(/`git show ([0-9a-f]{7,40}:[^`\s]+)`/g)) references.push({page, line: i + 1, object: match[1]});
  });
  return references;
}

/** Why the history cannot be checked here, or undefined when it can. */
function historyUnavailable(): string | undefined {
  try {
    const shallow = execFileSync('git', ['rev-parse', '--is-shallow-repository'], {cwd: root, encoding: 'utf8', stdio: 'pipe'}).trim();
    return shallow === 'true' ? 'this clone is shallow: older commits are not in it' : undefined;
  } catch (e) {
    return `no git history here (${String((e as Error).message).split('\n')[0]})`;
  }
}

/** The references whose object is not in the history, with `git cat-file --batch-check`'s answer. */
function missingObjects(references: readonly GitShowReference[]): string[] {
  if (references.length === 0) return [];
  const answers = execFileSync('git', ['cat-file', '--batch-check'], {
    cwd: root, encoding: 'utf8', input: references.map(r => r.object).join('\n') + '\n', stdio: ['pipe', 'pipe', 'pipe'],
  }).trim().split('\n');
  return references.flatMap((r, i) => / blob \d+$/.test(answers[i] ?? '') ? [] :
      [`${path.relative(root, r.page)}:${r.line} (git show ${r.object}): ${answers[i] ?? 'no answer'}`]);
}

describe('documentation links', () => {
  it('finds README.md and the docs/ pages', () => {
    const names = pages().map(p => path.relative(root, p));
    expect(names).toContain('README.md');
    expect(names).toContain(path.join('docs', 'design.md'));
  });

  it('slugs headings as GitHub does', () => {
    const anchors = headingAnchors([
      '# Two commands', '## The demo: `npm start`', '### cpu and wasm: `npm run bench`', '## Two commands',
      '```', '# not a heading', '```', '## Training tfjs\'s own layers: drop-in gradients',
    ].join('\n'));
    expect([...anchors]).toEqual([
      'two-commands', 'the-demo-npm-start', 'cpu-and-wasm-npm-run-bench', 'two-commands-1',
      'training-tfjss-own-layers-drop-in-gradients',
    ]);
  });

  for (const page of pages()) {
    it(`resolve in ${path.relative(root, page)}`, () => {
      const links = relativeLinks(page);
      const broken = links.flatMap(link => {
        const problem = problemOf(link);
        return problem === undefined ? [] : [`${path.relative(root, link.page)}:${link.line} (${link.target}): ${problem}`];
      });
      expect(broken).withContext(`${broken.length} broken of ${links.length}`).toEqual([]);
    });
  }

  it('name files of their commits where older runs are linked by `git show <commit>:<path>`', () => {
    const references = pages().flatMap(gitShowReferences);
    expect(references.length).withContext('README.md and docs/ link older runs by commit').toBeGreaterThan(0);
    const unavailable = historyUnavailable();
    if (unavailable !== undefined) {
      pending(`git show references not checked: ${unavailable}`);
      return;
    }
    const missing = missingObjects(references);
    expect(missing).withContext(`${missing.length} missing of ${references.length}`).toEqual([]);
  });
});
