/**
 * yaml-language-server's language service, one per Trinity release, fed that release's generated schema.
 * Used for what it does well on plain YAML: schema-driven key/value completion with snippets, formatting that
 * keeps comments, document symbols, folding and selection ranges. Trinity semantics live in our own modules.
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { getLanguageService, SchemaPriority, type LanguageService } from 'yaml-language-server';
// yaml-language-server caches each document version's parse here (a deep import: pinned to 1.25.0).
import { yamlDocumentsCache } from 'yaml-language-server/out/server/src/languageservice/parser/yaml-documents';
import type { Release } from '../../runtime/config/releases';
import { generateSchema } from '../../runtime/config/codegen/schema-gen';

const services = new Map<Release, LanguageService>();

export function yamlService(release: Release): LanguageService {
  let ls = services.get(release);
  if (!ls) {
    const schema = generateSchema(release);
    const uri = `trinity-workbench://schemas/trinity-${release}.schema.json`;
    ls = getLanguageService({
      schemaRequestService: async () => JSON.stringify(schema),
      workspaceContext: { resolveRelativePath: (rel: string, base: string) => new URL(rel, base).toString() },
    });
    ls.configure({
      validate: false,
      hover: false,
      completion: true,
      format: true,
      isKubernetes: false,
      yamlVersion: '1.1',
      schemas: [{ uri, fileMatch: ['*'], schema, priority: SchemaPriority.Settings }],
    });
    services.set(release, ls);
  }
  return ls;
}

/** What completion does with a parsed document: yaml-language-server deep-copies it first, then edits the copy. */
interface Clonable {
  clone(): Clonable;
  uri?: string;
  isKubernetes?: boolean;
  currentDocIndex?: number;
  disableAdditionalProperties?: boolean;
}

/**
 * Parses a new document version into yaml-language-server's cache ahead of the next completion request, and makes
 * that request's copy of each YAML document too: completion deep-copies the document before it edits its tree, and
 * that copy (the `yaml` package's descriptor-based clone) is over half of its time. Made here, right after the edit
 * settles, the copy costs the request nothing; each copy is handed out once, and later requests copy as before
 * (`SingleYAMLDocument.clone` of yaml-language-server 1.25.0, pinned).
 */
export function primeYamlParse(doc: TextDocument): void {
  const parsed = yamlDocumentsCache.getYamlDocument(doc, { customTags: [], yamlVersion: '1.1' }, true);
  const primed = parsed.documents.map((d) => {
    // Completion copies each document's line comments, collected on first use: collect them now, once per version.
    void d.lineComments;
    return d as unknown as Clonable;
  });
  // Only the file edited last keeps spare copies: an editor full of open files does not hold a copy of each.
  for (const [d, drop] of spares) if (!primed.includes(d)) drop();
  spares = new Map(primed.map((d) => [d, spares.get(d) ?? prepareCopy(d)]));
}

/** The documents primed last, each with a way to drop its spare copy. */
let spares = new Map<Clonable, () => void>();

/** Gives `d` a spare copy for the next completion request; returns how to drop it. */
function prepareCopy(d: Clonable): () => void {
  const copyOf = Object.getPrototypeOf(d).clone as (this: Clonable) => Clonable;
  let spare: Clonable | undefined = copyOf.call(d);
  d.clone = function (this: Clonable): Clonable {
    const copy = spare ?? copyOf.call(this);
    spare = undefined;
    // Set on the original just before completion copies it; the spare was made before.
    copy.uri = this.uri;
    copy.isKubernetes = this.isKubernetes;
    copy.currentDocIndex = this.currentDocIndex;
    copy.disableAdditionalProperties = this.disableAdditionalProperties;
    return copy;
  };
  return () => {
    spare = undefined;
  };
}
