/**
 * The viewer's style sheet, served as `/assets/app.css`: a string in the module tree, so a compiled binary has
 * it and no page fetches anything from the network.
 * @module
 */

/** The style sheet. */
export const APP_CSS: string = String.raw`
:root {
  --bg: #f5f6f8; --card: #ffffff; --ink: #111827; --ink-2: #4b5563; --ink-3: #8a93a3; --line: #e4e7ec;
  --accent: #4338ca; --accent-soft: #eef0ff; --ok: #15803d; --ok-soft: #e8f7ee; --bad: #b91c1c;
  --bad-soft: #fdeeee; --run: #1d4ed8; --run-soft: #e8effe; --warn: #b45309; --warn-soft: #fff6e5;
  --mono: ui-monospace, "SF Mono", "JetBrains Mono", Menlo, Consolas, monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.5 var(--sans); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, .mono { font-family: var(--mono); font-size: 12.5px; }
header.top {
  background: #0f172a; color: #e2e8f0; display: flex; align-items: center; gap: 28px;
  padding: 0 28px; height: 56px; position: sticky; top: 0; z-index: 5;
}
header.top .brand { font-weight: 700; letter-spacing: .2px; color: #fff; font-size: 15px; display: flex; gap: 10px; align-items: center; }
header.top .brand .mark {
  width: 24px; height: 24px; border-radius: 6px; display: inline-grid; place-items: center;
  background: linear-gradient(135deg, #6366f1, #22d3ee); color: #0f172a; font-size: 13px; font-weight: 800;
}
header.top nav { display: flex; gap: 4px; }
header.top nav a { color: #cbd5e1; padding: 6px 12px; border-radius: 8px; font-weight: 500; }
header.top nav a:hover { background: #1e293b; text-decoration: none; color: #fff; }
header.top nav a.on { background: #1e293b; color: #fff; }
header.top .where { margin-left: auto; font-size: 12px; color: #94a3b8; display: flex; gap: 14px; align-items: center; }
header.top .where .level { background: #1e293b; color: #e2e8f0; padding: 3px 10px; border-radius: 999px; }
main { max-width: 1280px; margin: 0 auto; padding: 28px; }
h1 { font-size: 22px; margin: 0 0 4px; font-weight: 650; letter-spacing: -.2px; }
h1.mono { font-family: var(--mono); font-size: 19px; }
h2 { font-size: 15px; margin: 0 0 12px; font-weight: 650; }
.sub { color: var(--ink-2); margin: 0 0 20px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 18px 20px; margin-bottom: 18px; box-shadow: 0 1px 2px rgba(16,24,40,.04); }
.card.flush { padding: 0; overflow-x: auto; }
.card.flush > h2 { padding: 16px 20px 0; }
.row { display: flex; gap: 16px; align-items: center; flex-wrap: wrap; }
.grow { flex: 1; }
.muted { color: var(--ink-3); }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-weight: 600; color: var(--ink-2); font-size: 12px; text-transform: uppercase; letter-spacing: .4px; padding: 10px 14px; border-bottom: 1px solid var(--line); background: #fafbfc; white-space: nowrap; }
td { padding: 10px 14px; border-bottom: 1px solid var(--line); vertical-align: top; }
tr:last-child td { border-bottom: 0; }
tbody tr:hover { background: #fafbff; }
.pill { display: inline-flex; align-items: center; gap: 6px; padding: 2px 10px; border-radius: 999px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.pill::before { content: ""; width: 7px; height: 7px; border-radius: 50%; background: currentColor; }
.pill.completed { background: var(--ok-soft); color: var(--ok); }
.pill.failed { background: var(--bad-soft); color: var(--bad); }
.pill.cancelled { background: var(--warn-soft); color: var(--warn); }
.pill.running { background: var(--run-soft); color: var(--run); }
.pill.running::before { animation: pulse 1.2s infinite; }
.pill.incomplete, .pill.cut, .pill.unreadable, .pill.unknown { background: #f1f2f4; color: var(--ink-2); }
@keyframes pulse { 50% { opacity: .25; } }
.tag { display: inline-block; padding: 1px 8px; border-radius: 6px; background: #f1f3f7; color: var(--ink-2); font-size: 12px; font-family: var(--mono); }
.tag.t-model_called, .tag.t-chat { background: #f1edff; color: #5b21b6; }
.tag.t-tool_called { background: #fff4e0; color: #92400e; }
.tag.t-step_failed, .tag.t-run_failed, .tag.t-access_denied { background: var(--bad-soft); color: var(--bad); }
.tag.t-run_completed { background: var(--ok-soft); color: var(--ok); }
.tag.t-input_staged, .tag.t-snapshot_materialized, .tag.t-input_verified { background: #e6f7f6; color: #0f766e; }
.tag.t-access_granted, .tag.t-access_requested { background: #eaf2ff; color: #1e40af; }
form.filters { display: flex; gap: 10px; flex-wrap: wrap; align-items: end; }
label.field { display: flex; flex-direction: column; gap: 4px; font-size: 12px; color: var(--ink-2); font-weight: 600; }
input, select, textarea, button { font: inherit; }
input, select, textarea { border: 1px solid #d5d9e0; border-radius: 8px; padding: 7px 10px; background: #fff; color: var(--ink); min-width: 150px; }
input:focus, select:focus, textarea:focus { outline: 2px solid #c7d2fe; border-color: #818cf8; }
button { border: 1px solid #d5d9e0; background: #fff; border-radius: 8px; padding: 7px 14px; cursor: pointer; font-weight: 600; color: var(--ink); }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button:disabled { opacity: .45; cursor: default; }
.pager { display: flex; gap: 10px; align-items: center; justify-content: space-between; padding: 12px 16px; border-top: 1px solid var(--line); color: var(--ink-2); }
.verdict { display: flex; gap: 14px; align-items: flex-start; border-radius: 12px; padding: 16px 20px; margin-bottom: 18px; border: 1px solid; }
.verdict .icon { width: 30px; height: 30px; border-radius: 50%; display: grid; place-items: center; font-weight: 800; color: #fff; flex: none; }
.verdict.ok { background: var(--ok-soft); border-color: #bfe8cf; }
.verdict.ok .icon { background: var(--ok); }
.verdict.bad { background: var(--bad-soft); border-color: #f5c2c2; }
.verdict.bad .icon { background: var(--bad); }
.verdict.live { background: var(--run-soft); border-color: #c7d7fb; }
.verdict.live .icon { background: var(--run); }
.verdict h2 { margin: 0 0 2px; font-size: 16px; }
.verdict ul { margin: 8px 0 0; padding-left: 18px; }
.verdict li { font-family: var(--mono); font-size: 12.5px; margin: 2px 0; }
.note { background: var(--warn-soft); border: 1px solid #f7dca8; color: #7c4a03; padding: 10px 14px; border-radius: 10px; margin-bottom: 18px; font-size: 13px; }
.untrusted { background: repeating-linear-gradient(135deg, #fff5f5, #fff5f5 10px, #ffecec 10px, #ffecec 20px); border: 2px solid var(--bad); color: var(--bad); font-weight: 700; padding: 10px 14px; border-radius: 10px; margin-bottom: 18px; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: 12px 24px; }
.facts div span { display: block; font-size: 11px; text-transform: uppercase; letter-spacing: .5px; color: var(--ink-3); font-weight: 600; }
.facts div b { font-weight: 600; overflow-wrap: anywhere; }
.timeline { padding: 6px 0 10px; }
.span { display: grid; grid-template-columns: 300px 1fr 84px; align-items: center; gap: 12px; padding: 3px 20px; }
.span:hover { background: #fafbff; }
.span .name { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-size: 13px; }
.span .name .tw { color: var(--ink-3); }
.span .track { position: relative; height: 18px; background: #f3f4f7; border-radius: 5px; }
.span .bar { position: absolute; top: 3px; bottom: 3px; min-width: 3px; border-radius: 4px; background: #64748b; }
.span .bar.k-chat { background: linear-gradient(90deg, #7c3aed, #a78bfa); }
.span .bar.k-execute_tool { background: linear-gradient(90deg, #d97706, #fbbf24); }
.span .bar.k-input_staged { background: linear-gradient(90deg, #0d9488, #5eead4); }
.span .bar.k-root { background: linear-gradient(90deg, #334155, #64748b); }
.span .bar.error { background: linear-gradient(90deg, #b91c1c, #f87171); }
.span .bar.running { background: linear-gradient(90deg, #1d4ed8, #60a5fa); animation: pulse 1.2s infinite; }
.span .dur { text-align: right; color: var(--ink-2); font-variant-numeric: tabular-nums; font-size: 12px; }
.answer { border-left: 3px solid #7c3aed; background: #faf8ff; padding: 12px 16px; border-radius: 0 10px 10px 0; white-space: pre-wrap; margin: 0 0 10px; font-size: 14.5px; max-height: 28em; overflow-y: auto; overflow-wrap: anywhere; }
.cut { display: block; margin-top: 8px; color: var(--ink-2); font-size: 12.5px; white-space: normal; }
.answer .cut { position: sticky; bottom: -12px; background: #faf8ff; padding: 6px 0 4px; border-top: 1px dashed #d8cff5; }
a.whole { font-weight: 600; }
.answer .who { display: block; font-size: 11px; color: var(--ink-3); text-transform: uppercase; letter-spacing: .5px; margin-bottom: 4px; font-weight: 600; }
.answer.streaming::after { content: "▍"; color: #7c3aed; animation: pulse 1s infinite; }
details summary { cursor: pointer; color: var(--accent); font-size: 12.5px; }
pre.json { margin: 6px 0 0; background: #0f172a; color: #e2e8f0; border-radius: 8px; padding: 10px 12px; font: 12px/1.5 var(--mono); overflow: auto; max-height: 360px; white-space: pre-wrap; word-break: break-word; }
.hash { font-family: var(--mono); font-size: 12px; color: var(--ink-2); }
.split { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 18px; }
td.mono, .kv td, td.hash { overflow-wrap: anywhere; }
#runs td { overflow-wrap: normal; padding: 10px 11px; }
#runs th { padding: 10px 11px; }
.nowrap { white-space: nowrap; }
.diff { background: #fff7d6; }
.empty { color: var(--ink-3); padding: 18px 20px; }
.error-box { background: var(--bad-soft); color: var(--bad); border: 1px solid #f5c2c2; border-radius: 10px; padding: 12px 16px; }
.kv td:first-child { color: var(--ink-2); width: 30%; font-family: var(--mono); font-size: 12.5px; }
.seq { color: var(--ink-3); font-variant-numeric: tabular-nums; }
.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.new td { animation: flash 1.4s ease-out; }
@keyframes flash { from { background: #eef2ff; } to { background: transparent; } }
`;
