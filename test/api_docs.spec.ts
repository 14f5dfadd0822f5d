import {spawnSync} from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Every export of the package root (kernels/index.ts) and of `tfjs-conv-backprop-filters/gradients`
 * (kernels/gradients.ts), and every field of an exported interface, has a doc comment, read as TypeDoc reads it (`npm run docs` renders them
 * into docs/api/). The compiler API comes from the TypeScript that TypeDoc runs on
 * (scripts/typedoc: TypeScript 7's npm package, the project's compiler, has none).
 */
const root = path.resolve(__dirname, '..');
const ENTRIES = ['kernels/index.ts', 'kernels/gradients.ts'];

/** TypeScript 5.9's compiler API, as scripts/typedoc installs it. */
type Ts = typeof import('../scripts/typedoc/node_modules/typescript');

interface ExportDoc {
  entry: string;
  name: string;
  documentation: string;
}

function exportDocs(): ExportDoc[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ts = require(require.resolve('typescript', {paths: [path.join(root, 'scripts/typedoc/node_modules/typedoc')]})) as Ts;
  const configPath = path.join(root, 'tsconfig.build.json');
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: d => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  })!;
  const program = ts.createProgram(ENTRIES.map(e => path.join(root, e)), {...config.options, noEmit: true});
  const checker = program.getTypeChecker();
  return ENTRIES.flatMap(entry => {
    const source = program.getSourceFile(path.join(root, entry))!;
    const moduleSymbol = checker.getSymbolAtLocation(source)!;
    const documentation = (symbol: import('../scripts/typedoc/node_modules/typescript').Symbol) =>
        ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
    return checker.getExportsOfModule(moduleSymbol).flatMap(exported => {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const docs: ExportDoc[] = [{entry, name: exported.getName(), documentation: documentation(symbol)}];
      // The fields of an exported interface are part of the reference too (inherited ones included).
      if (symbol.flags & ts.SymbolFlags.Interface) {
        for (const member of checker.getDeclaredTypeOfSymbol(symbol).getProperties()) {
          docs.push({entry, name: `${exported.getName()}.${member.getName()}`, documentation: documentation(member)});
        }
      }
      return docs;
    });
  });
}

describe('the API reference', () => {
  let docs: ExportDoc[];
  beforeAll(() => {
    docs = exportDocs();
  });

  it('reads the exports of both entries', () => {
    const names = (entry: string) => docs.filter(d => d.entry === entry).map(d => d.name);
    expect(names('kernels/index.ts')).toEqual(jasmine.arrayContaining(
        ['convolutionBackpropFilters', 'fromSpecAttrs', 'ConvTransposeBackwardWeights', 'installDropInGradients']));
    expect(names('kernels/gradients.ts')).toEqual(jasmine.arrayContaining(['installDropInGradients', 'DROP_IN_GRADIENT_KERNELS']));
  });

  it('has a doc comment on every export and every field of an exported interface', () => {
    const undocumented = docs.filter(d => d.documentation.length === 0).map(d => `${d.entry}: ${d.name}`);
    expect(undocumented).withContext(`${undocumented.length} of ${docs.length} exports`).toEqual([]);
  });
});

describe('npm run docs', () => {
  it('renders the reference with TypeDoc, warnings treated as errors', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'typedoc-'));
    try {
      const typedoc = path.join(root, 'scripts/typedoc/node_modules/typedoc/bin/typedoc');
      const run = spawnSync(process.execPath, [typedoc, '--out', out], {cwd: root, encoding: 'utf8'});
      expect(run.status).withContext(`${run.stdout}\n${run.stderr}`).toBe(0);
      expect(fs.existsSync(path.join(out, 'index.html'))).toBe(true);
    } finally {
      fs.rmSync(out, {recursive: true, force: true});
    }
  }, 120000);
});
