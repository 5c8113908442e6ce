/**
 * The Trinity language service: pure functions of a document and its analysis. No LSP transport here — the host
 * (server/host) owns connections, timing and I/O, and passes the outside world in through AnalysisContext.
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type {
  CodeAction,
  CompletionList,
  Diagnostic,
  DocumentLink,
  InlayHint,
  Range,
  SemanticTokens,
  FoldingRange,
  FormattingOptions,
  Hover,
  Location,
  Position,
  SelectionRange,
  DocumentSymbol,
  TextEdit,
} from 'vscode-languageserver-types';
import { AnalysisCache, type Analysis, type AnalysisContext } from './analyze';
import { codeActions, migrationAction } from './code-actions';
import { placeDatasetFindings, type DatasetFindings } from './dataset-findings';
import { pluginDirActions } from './plugin-dir-actions';
import { complete } from './complete';
import { definition, references } from './definition';
import { documentLinks } from './document-links';
import { inlayHints } from './inlay-hints';
import { keyLocation, type KeyLocation } from './key-location';
import { semanticTokens } from './semantic-tokens';
import { hover } from './hover';
import { resolvedConfig, type ResolvedConfigResponse } from './resolved-config';
import { healthDiagnostics, type StageMetrics } from './run-metrics';
import { metricDrivers } from '../../runtime/config/model/metric-drivers';
import { NEWEST_RELEASE } from '../../runtime/config/releases';
import type { ConfigDiagnostic } from '../../runtime/config/diagnostics';
import { runPlan, type RunPlanResponse } from './run-plan';
import { DEFAULT_SETTINGS, type ServiceSettings } from './settings';
import { validate } from './validate';
import { primeYamlParse, yamlService } from './yaml-service';

export class TrinityLanguageService {
  private readonly cache = new AnalysisCache();
  private settings: ServiceSettings = DEFAULT_SETTINGS;
  /** Migrating parses and prints the whole file: once per analysis (document version and release), not per cursor move. */
  private readonly migrations = new WeakMap<Analysis, CodeAction | null>();
  /** Each document's last (or live) run, per stage, as the host last read it from the job directories. */
  private readonly runs = new Map<string, readonly StageMetrics[]>();
  /** Each document's dataset findings, as the host's last pass over it found them. */
  private readonly datasets = new Map<string, DatasetFindings>();

  constructor(private context: AnalysisContext) {}

  configure(settings: Partial<ServiceSettings>): void {
    this.settings = { ...DEFAULT_SETTINGS, ...settings };
    this.cache.clear();
  }

  setContext(context: Partial<AnalysisContext>): void {
    this.context = { ...this.context, ...context };
    this.cache.clear();
  }

  analyze(doc: TextDocument): Analysis {
    return this.cache.get(doc, this.settings, this.context);
  }

  /** Drops a document's analysis: its next use checks the disk again (files it names came or went). */
  refresh(uri?: string): void {
    if (uri) this.cache.delete(uri);
    else this.cache.clear();
  }

  forget(uri: string): void {
    this.cache.delete(uri);
    this.runs.delete(uri);
    this.datasets.delete(uri);
  }

  /** What the host's pass over a document's datasets found (checkDatasetsOf); validate shows it from then on. */
  setDatasetFindings(uri: string, found: DatasetFindings): void {
    this.datasets.set(uri, found);
  }

  /** The dataset findings as validate shows them on the document's current version. */
  datasetDiagnostics(doc: TextDocument): ConfigDiagnostic[] {
    const found = this.datasets.get(doc.uri);
    return found ? placeDatasetFindings(this.analyze(doc), found) : [];
  }

  /** The metrics of a document's last run (none: forget them); used by validate (run health) and hover. */
  setRunMetrics(uri: string, stages: readonly StageMetrics[] | undefined): void {
    if (stages?.length) this.runs.set(uri, stages);
    else this.runs.delete(uri);
  }

  validate(doc: TextDocument): Diagnostic[] {
    const analysis = this.analyze(doc);
    const out = validate(doc, analysis, this.settings, this.datasetDiagnostics(doc));
    const stages = this.runs.get(doc.uri);
    if (!stages) return out;
    const disabled = new Set(this.settings.disabledRules.map((c) => c.toUpperCase()));
    return out.concat(
      healthDiagnostics(doc, analysis, stages, this.settings.runHealth).filter((d) => !disabled.has(String(d.code))),
    );
  }

  /** Work worth doing right after an edit settles (not per keystroke): the YAML parse completion will need. */
  prepare(doc: TextDocument): void {
    primeYamlParse(doc);
  }

  complete(doc: TextDocument, position: Position): Promise<CompletionList> {
    return complete(doc, this.analyze(doc), position, this.context.env);
  }

  hover(doc: TextDocument, position: Position): Hover | null {
    return hover(doc, this.analyze(doc), position, this.runs.get(doc.uri));
  }

  definition(doc: TextDocument, position: Position): Location[] {
    return definition(doc, this.analyze(doc), position);
  }

  references(doc: TextDocument, position: Position): Location[] {
    return references(doc, this.analyze(doc), position);
  }

  symbols(doc: TextDocument): DocumentSymbol[] {
    return yamlService(this.analyze(doc).release).findDocumentSymbols2(doc, {});
  }

  folding(doc: TextDocument): FoldingRange[] {
    return yamlService(this.analyze(doc).release).getFoldingRanges(doc, {}) ?? [];
  }

  selectionRanges(doc: TextDocument, positions: Position[]): SelectionRange[] {
    return yamlService(this.analyze(doc).release).getSelectionRanges(doc, positions);
  }

  format(doc: TextDocument, options: FormattingOptions): Promise<TextEdit[]> {
    return Promise.resolve(
      yamlService(this.analyze(doc).release).doFormat(doc, { ...options, printWidth: 120, proseWrap: 'preserve' }),
    );
  }

  codeActions(doc: TextDocument, diagnostics: Diagnostic[]): CodeAction[] {
    const analysis = this.analyze(doc);
    let migration = this.migrations.get(analysis);
    if (migration === undefined) {
      migration = migrationAction(doc, analysis, { readFile: this.context.readFile }) ?? null;
      this.migrations.set(analysis, migration);
    }
    const near = this.context.pluginFoldersNear;
    const plugins = near ? pluginDirActions(analysis, diagnostics, () => near(doc.uri)) : [];
    return [...plugins, ...codeActions(doc, analysis, diagnostics, migration ?? undefined)];
  }

  inlayHints(doc: TextDocument, range: Range): InlayHint[] {
    return this.settings.inlayHints ? inlayHints(doc, this.analyze(doc), range) : [];
  }

  documentLinks(doc: TextDocument): DocumentLink[] {
    return documentLinks(doc, this.analyze(doc));
  }

  semanticTokens(doc: TextDocument): SemanticTokens {
    return semanticTokens(doc, this.analyze(doc));
  }

  /** Where the document's run writes (relative to the working directory unless absolute): its own dir and each stage's. */
  runDirs(doc: TextDocument): { jobDir: string; stages: { run: number; jobDir: string }[] } {
    const plan = runPlan(this.analyze(doc), []);
    return { jobDir: plan.jobDir, stages: plan.stages.map((s, run) => ({ run, jobDir: s.jobDir })) };
  }

  /** The config keys that drive each metric tag, in the document's release (else the newest). */
  metricDrivers(tags: readonly string[], doc?: TextDocument): Record<string, string[]> {
    const release = doc ? this.analyze(doc).release : NEWEST_RELEASE;
    const out: Record<string, string[]> = {};
    for (const t of tags) out[t] = metricDrivers(t, release);
    return out;
  }

  keyLocation(doc: TextDocument, key: string): KeyLocation | null {
    return keyLocation(doc, this.analyze(doc), key);
  }

  runPlan(doc: TextDocument): RunPlanResponse {
    return runPlan(this.analyze(doc), this.validate(doc));
  }

  resolvedConfig(doc: TextDocument): ResolvedConfigResponse {
    return resolvedConfig(this.analyze(doc));
  }
}
