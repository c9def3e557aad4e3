import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pageStart } from './doc.ts';

/**
 * GET /docs: the API reference a person reads, drawn in the browser from /openapi.json by Swagger UI
 * (swagger-ui-dist, served by the gateway itself from its node_modules: no CDN). What the page adds to Swagger UI's
 * own bundle is small: a language, a title and a main landmark, links back to the front door, colours that reach
 * WCAG AA contrast where Swagger UI's own do not, and names or keyboard focus for what it draws without them.
 */

/** The package's directory: Node's resolver finds it from the source; in dist/ it is where the build resolved it. */
const DIST = fileURLToPath(new URL('.', import.meta.resolve('swagger-ui-dist/package.json')));
const VERSION: string = JSON.parse(readFileSync(`${DIST}package.json`, 'utf8')).version;

/** The files the page loads, by the name /docs/<name> serves them under. */
export const REFERENCE_ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui-bundle.js': { file: `${DIST}swagger-ui-bundle.js`, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { file: `${DIST}swagger-ui.css`, type: 'text/css; charset=utf-8' },
};
/** Strong ETag of an asset: the package version names its bytes. */
export const assetTag = (name: string) => `"swagger-ui-dist@${VERSION}/${name}"`;

// Swagger UI's colours that fail 4.5:1 (white on its method badges, version stamps and Execute button, its light
// blue links, its grey "Expand all" and parameter places, its red Cancel) darkened until they pass; hues kept, so
// GET stays blue and POST green.
const METHODS: Record<string, string> = {
  get: '#1565c0',
  post: '#187a4d',
  put: '#b35c00',
  delete: '#c62828',
  patch: '#0d7a66',
  head: '#6b5ed1',
  options: '#1d5fa8',
};
const STYLE = [
  'body{margin:0}',
  '.reference-nav{font:14px/1.5 system-ui,sans-serif;padding:.5rem 1.25rem;border-bottom:1px solid #ddd}',
  '.reference-nav a{color:#0645ad;margin-right:1rem}',
  ...Object.entries(METHODS).map(
    ([m, c]) =>
      `.swagger-ui .opblock.opblock-${m} .opblock-summary-method{background:${c}}` +
      `.swagger-ui .opblock.opblock-${m}{border-color:${c}}` +
      `.swagger-ui .opblock.opblock-${m} .opblock-summary{border-color:${c}}`,
  ),
  '.swagger-ui .info .title small{background:#5b6270}',
  '.swagger-ui .info .title small.version-stamp{background:#4b6a00}',
  '.swagger-ui .info a,.swagger-ui .info .url,.swagger-ui .link,.swagger-ui a.nostyle{color:#1d5fa8}',
  '.swagger-ui .btn.authorize{color:#187a4d;border-color:#187a4d}.swagger-ui .btn.authorize svg{fill:#187a4d}',
  '.swagger-ui .json-schema-2020-12-expand-deep-button{color:#505050}',
  '.swagger-ui .btn.execute{background:#1d5fa8;border-color:#1d5fa8}',
  '.swagger-ui .btn.cancel{color:#c62828;border-color:#c62828}',
  '.swagger-ui .parameter__in,.swagger-ui .parameter__deprecated{color:#595959}',
].join('');

/**
 * Swagger UI, told where the document is, with plain (unhighlighted) examples: its highlighter's colours fail
 * contrast. What it draws without a name or a way in gets one as it appears: its servers menu (in a label with no
 * text), a parameter's field or its menu of allowed values (a Sandbox-Trigger), a header parameter it offers as a file picker (a base64 value), the request body's text box, and the scrolling example blocks (which
 * must take keyboard focus to be scrolled without a mouse).
 */
const START = `
window.ui = SwaggerUIBundle({
  url: '/openapi.json', dom_id: '#reference', validatorUrl: null, syntaxHighlight: { activated: false },
});
const root = document.getElementById('reference');
new MutationObserver(() => {
  const servers = document.getElementById('servers');
  if (servers && !servers.hasAttribute('aria-label')) servers.setAttribute('aria-label', 'Server');
  for (const field of root.querySelectorAll('tr[data-param-name] :is(input, select):not([aria-label])')) {
    const row = field.closest('tr');
    field.setAttribute('aria-label', row.dataset.paramName + ' (' + row.dataset.paramIn + ')');
  }
  for (const body of root.querySelectorAll('textarea.body-param__text:not([aria-label])'))
    body.setAttribute('aria-label', 'Request body (JSON)');
  for (const pre of root.querySelectorAll('pre:not([tabindex])')) pre.setAttribute('tabindex', '0');
}).observe(root, { childList: true, subtree: true });
`;

export function referencePage(): string {
  return [
    ...pageStart('Vehicle Capability Service — API reference', [
      '<link rel="stylesheet" href="/docs/swagger-ui.css">',
      `<style>${STYLE}</style>`,
    ]),
    '<nav class="reference-nav" aria-label="Service">',
    '<a href="/llms.txt">Front door</a><a href="/catalog">Catalog</a><a href="/openapi.json">OpenAPI document</a>',
    '</nav>',
    '<main id="reference"><noscript>This reference is drawn by script from ' +
      '<a href="/openapi.json">/openapi.json</a>; the <a href="/catalog">catalog</a> reads without one.</noscript></main>',
    '<script src="/docs/swagger-ui-bundle.js"></script>',
    `<script>${START}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
