import { createHash, randomBytes } from 'node:crypto';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f4f5f7;color:#1d2433}
main{max-width:26rem;margin:0 auto;padding:1.5rem 1rem}
.card{background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.25rem;margin:0 0 1rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem;margin:0 0 1.25rem}
dt{color:#5b6475}dd{margin:0;font-weight:600;word-break:break-all}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
button,.button{flex:1;min-width:8rem;font-size:1rem;padding:.8rem 1rem;border-radius:8px;border:0;cursor:pointer;text-align:center;text-decoration:none}
.approve{background:#1a7f37;color:#fff}.decline{background:#cf222e;color:#fff}.neutral{background:#e7e9ee;color:#1d2433}
.status{font-size:1.1rem;font-weight:700}.SUCCESS{color:#1a7f37}.FAILED,.BLOCKED{color:#cf222e}
.note{color:#5b6475;font-size:.85rem;margin-top:1rem}
table{border-collapse:collapse;width:100%;margin-bottom:1rem;font-size:.9rem}td{border-top:1px solid #e7e9ee;padding:.35rem .5rem;vertical-align:top}
code{background:#eef0f4;padding:0 .2rem;border-radius:4px}
input{font-size:1rem;padding:.6rem;border:1px solid #c9ced8;border-radius:8px;width:100%;box-sizing:border-box;margin-bottom:.75rem}
label{display:block;font-weight:600;margin-bottom:.3rem}
.field input{margin-bottom:.2rem}.field{margin-bottom:.8rem}
.row{display:flex;gap:.75rem}.row .field{flex:1;min-width:0}
.invalid input{border-color:#cf222e;border-width:2px}
.error{color:#cf222e;font-size:.9rem;margin:.2rem 0 0}.alert{margin:0 0 1rem;font-weight:600}
input:focus,button:focus,.button:focus{outline:3px solid #0969da;outline-offset:2px}
.methods{display:flex;flex-direction:column;gap:.75rem}
.method{display:block;width:100%;text-align:left;background:#fff;color:#1d2433;border:1px solid #c9ced8}
.method .label{display:block;font-weight:700}.method .hint{display:block;color:#5b6475;font-size:.9rem;margin-top:.2rem}
`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * A complete hosted page: no scripts at all, inline style allowed by hash only, forms posting back to us
 * (and, for the redirect that follows, to the merchant's origin).
 */
export function renderPage(options: {
  title: string;
  body: string;
  formTargets?: string[];
  refreshSeconds?: number;
}) {
  const formAction = ["'self'", ...(options.formTargets ?? [])].join(' ');
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    "img-src 'self' data:",
    `form-action ${formAction}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  const refresh = options.refreshSeconds
    ? `<meta http-equiv="refresh" content="${options.refreshSeconds}">`
    : '';
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">${refresh}
<title>${escapeHtml(options.title)}</title><style>${STYLE}</style></head>
<body><main><div class="card">${options.body}</div></main></body></html>`;
  return { html, csp };
}

export function newNonce(): string {
  return randomBytes(18).toString('base64url');
}
