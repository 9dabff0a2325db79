// The dispatch board's page (docs/api.md, "The dispatch board"): static HTML
// whose script (script.ts) asks for the credentials, keeps them in
// sessionStorage and draws GET /api/v1/board. Nothing inline: the page's
// Content-Security-Policy allows only this origin's script and style.

export const BOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dispatch board</title>
<link rel="icon" href="/board.svg" type="image/svg+xml">
<link rel="stylesheet" href="/board.css">
<script src="/board.js" defer></script>
</head>
<body>
<header><h1>Dispatch board</h1></header>
<main>
<noscript><p>The board needs JavaScript.</p></noscript>
<div id="problem" role="alert" hidden></div>
<form id="sign-in" hidden>
<h2>Sign in</h2>
<p>Your organisation id and an API key (a <code>read</code> key is enough). This tab keeps them until it is closed; they are never put in the address.</p>
<p><label for="org-id">Organisation id</label><input id="org-id" autocomplete="off" spellcheck="false" required></p>
<p><label for="api-key">API key</label><input id="api-key" type="password" autocomplete="off" spellcheck="false" required></p>
<p><button type="submit">Show the board</button></p>
</form>
<section id="board" hidden aria-labelledby="day">
<nav class="bar" aria-label="Day">
<button type="button" id="previous">Previous</button>
<button type="button" id="today">Today</button>
<button type="button" id="next">Next</button>
<label for="date">Date</label><input type="date" id="date">
<button type="button" id="sign-out">Sign out</button>
</nav>
<h2 id="day" tabindex="-1"></h2>
<p id="updated"></p>
<div id="timeline" role="region" aria-label="Timeline" tabindex="0"></div>
</section>
</main>
</body>
</html>
`;

/** The tab's icon, so that the browser asks for no /favicon.ico (a 404 in its console). */
export const BOARD_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d4ed8"/><rect x="3" y="4" width="6" height="3" fill="#fff"/><rect x="6" y="9" width="7" height="3" fill="#fff"/></svg>';
