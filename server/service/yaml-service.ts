/**
 * yaml-language-server's language service, one per Trinity release, fed that release's generated schema.
 * Used for what it does well on plain YAML: schema-driven key/value completion with snippets, formatting that
 * keeps comments, document symbols, folding and selection ranges. Trinity semantics live in our own modules.
 */
import { getLanguageService, SchemaPriority, type LanguageService } from 'yaml-language-server';
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
