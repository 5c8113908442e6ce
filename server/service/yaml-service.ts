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
import { generateSchema } from '../../runtime/config/schema-gen';

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

/** Parses a new document version into yaml-language-server's cache ahead of the next completion request. */
export function primeYamlParse(doc: TextDocument): void {
  const parsed = yamlDocumentsCache.getYamlDocument(doc, { customTags: [], yamlVersion: '1.1' }, true);
  // Completion copies each document's line comments, collected on first use: collect them now, once per version.
  for (const d of parsed.documents) void d.lineComments;
}
