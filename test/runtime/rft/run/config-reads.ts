/**
 * The config keys a body of code reads, exactly: a property read (`m.seed`, `const { seed } = m`, `m['seed']`) whose
 * type the TypeScript checker resolves to a field of a section interface of runtime/config/types.generated.ts, named
 * `Section.field` (so `InferenceModelConfig.seed` is not read by `ModelConfig.seed`'s code, nor by a workflow's
 * `raw.seed`), and every string literal that is a whole dotted config path (`'buffer.trainer_input.experience_buffer.
 * schema_type'`, the check's reads), named by the model's field at that path.
 */
import ts from 'typescript';
import { join } from 'node:path';
import { schemaAt } from '../../../../runtime/config/model/index';
import type { Release } from '../../../../runtime/config/releases';

const ROOT = join(__dirname, '..', '..', '..', '..');
const GENERATED = join(ROOT, 'runtime', 'config', 'types.generated.ts');

/** The section field a property symbol is declared as, or undefined. */
function fieldOf(symbol: ts.Symbol | undefined): string[] {
  return (symbol?.declarations ?? []).flatMap((d) =>
    d.getSourceFile().fileName === GENERATED && ts.isPropertySignature(d) && ts.isInterfaceDeclaration(d.parent)
      ? [`${d.parent.name.text}.${d.name.getText()}`]
      : [],
  );
}

const DOTTED = /^[a-z_]+(\.[a-z0-9_]+)+$/;

/** `Section.field` of every key `files` read (see the module's comment). */
export function configReads(files: readonly string[], release: Release): Set<string> {
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    esModuleInterop: true,
    resolveJsonModule: true,
  });
  const checker = program.getTypeChecker();
  const read = new Set<string>();
  const add = (ids: string[]) => ids.forEach((id) => read.add(id));
  const visit = (n: ts.Node): void => {
    if (ts.isPropertyAccessExpression(n)) add(fieldOf(checker.getSymbolAtLocation(n.name)));
    else if (ts.isElementAccessExpression(n) && ts.isStringLiteralLike(n.argumentExpression))
      add(fieldOf(checker.getSymbolAtLocation(n.argumentExpression)));
    else if (ts.isBindingElement(n) && ts.isObjectBindingPattern(n.parent))
      add(fieldOf(checker.getTypeAtLocation(n.parent).getProperty((n.propertyName ?? n.name).getText())));
    else if (ts.isStringLiteralLike(n) && DOTTED.test(n.text)) {
      const { field } = schemaAt(
        n.text.split('.').map((k) => (/^\d+$/.test(k) ? Number(k) : k)),
        release,
      );
      if (field) read.add(`${field.section.name}.${field.key}`);
    }
    ts.forEachChild(n, visit);
  };
  for (const f of files) visit(program.getSourceFile(f)!);
  return read;
}
