// The page shell every console page is rendered in: a skip link, the navigation (the current page marked
// for assistive technology), who is signed in and a sign-out button, a one-time message, then the page.
// Styles and scripts come only from /console/assets (the CSP allows nothing inline).
import type { ConsoleSession } from './session.ts';
import { csrfField } from './csrf.ts';
import { html, type Html } from './html.ts';

export type NavKey = 'overview' | 'events' | 'dead-letters' | 'needs-mapping' | 'quarantine' | 'documents' | 'mappings' | 'audit';

const NAV: { key: NavKey; href: string; label: string }[] = [
  { key: 'overview', href: '/console', label: 'Overview' },
  { key: 'events', href: '/console/events', label: 'Events' },
  { key: 'dead-letters', href: '/console/dead-letters', label: 'Dead letters' },
  { key: 'needs-mapping', href: '/console/needs-mapping', label: 'Needs mapping' },
  { key: 'quarantine', href: '/console/quarantine', label: 'Quarantine' },
  { key: 'documents', href: '/console/documents', label: 'Documents' },
  { key: 'mappings', href: '/console/mappings', label: 'Mappings' },
  { key: 'audit', href: '/console/audit', label: 'Audit' },
];

export const asset = (name: string): string => `/console/assets/${name}`;

export interface PageOptions {
  title: string;
  body: Html;
  /** Signed in: the navigation and the sign-out button. */
  session?: ConsoleSession;
  current?: NavKey;
  /** A one-time message shown above the page (what an action did). */
  flash?: string;
  /** Extra assets of this page (besides console.css, widgets.css and console.js). */
  styles?: string[];
  scripts?: string[];
}

function header(o: PageOptions): Html {
  if (!o.session) return html`<header class="top"><span class="brand">emr-bridge console</span></header>`;
  const { actor } = o.session;
  const links = NAV.map((n) => html`<li><a href="${n.href}"${n.key === o.current ? html` aria-current="page"` : ''}>${n.label}</a></li>`);
  return html`<header class="top">
  <a class="brand" href="/console">emr-bridge console</a>
  <nav aria-label="Console"><ul>${links}</ul></nav>
  <form class="who" method="post" action="/console/sign-out">
    <span>Signed in as <strong>${actor.name}</strong> <span class="role">(${actor.role})</span></span>
    ${csrfField(o.session.csrf)}
    <button type="submit" class="secondary">Sign out</button>
  </form>
</header>`;
}

export function renderPage(o: PageOptions): string {
  const styles = ['console.css', 'widgets.css', ...(o.styles ?? [])].map((s) => html`<link rel="stylesheet" href="${asset(s)}">`);
  const scripts = ['console.js', ...(o.scripts ?? [])].map((s) => html`<script src="${asset(s)}" defer></script>`);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · emr-bridge console</title>
${styles}
${scripts}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${header(o)}
<main id="main" tabindex="-1">
${o.flash ? html`<p class="flash" role="status">${o.flash}</p>` : ''}
<h1>${o.title}</h1>
${o.body}
</main>
</body>
</html>
`.text;
}
