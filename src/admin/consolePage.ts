/**
 * The operator console's page: a shell that loads the bundle `npm run build` makes from
 * `console/` (TypeScript, preact; `consoleRoutes.ts` serves it as `/console/app.js`), so the page
 * needs nothing from elsewhere and works offline. The styles are here so the page is readable
 * before the script runs.
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gslbd console</title>
<link rel="icon" href="data:,">
<style>
body { font-family: system-ui, sans-serif; margin: 1rem 2rem; color: #111; background: #fff; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.5rem; } h3 { font-size: 1rem; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 1rem; }
table { border-collapse: collapse; margin: 0.5rem 0; } th, td { border: 1px solid #888; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
.up { color: #0a5d0a; } .down { color: #a00000; } .unknown { color: #5a4a00; }
[data-status="degraded"] { color: #a00000; font-weight: bold; }
label { margin-right: 0.5rem; } input, select, textarea { margin-left: 0.25rem; } button { margin: 0.1rem; }
ol.steps li { margin: 0.2rem 0; } code { background: #f0f0f0; }
.refused { color: #a00000; font-weight: bold; } .done { color: #0a5d0a; }
svg.map { border: 1px solid #888; background: #eef4fa; max-width: 100%; height: auto; }
svg.map .land { fill: #d9d9d9; stroke: #fff; stroke-width: 0.3; }
svg.map .dc { fill: #a00000; } svg.map .clients { fill: #1f4e99; fill-opacity: 0.6; } svg.map .flow { stroke: #1f4e99; stroke-opacity: 0.4; }
</style>
</head>
<body>
<div id="app"><p>Loading the console…</p></div>
<noscript>The console needs JavaScript; the same data is at /console/state and /status.</noscript>
<script src="/console/app.js"></script>
</body>
</html>
`;
