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
input[type=checkbox] { min-width: 0; }
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
#log-panel p { margin: 0 0 6px; } #log-panel .bad { color: var(--bad); font-weight: 600; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: 12px 24px; }
.facts div > span { display: block; font-size: 11px; text-transform: uppercase; letter-spacing: .5px; color: var(--ink-3); font-weight: 600; }
.facts div b { font-weight: 600; overflow-wrap: anywhere; }
.timeline { padding: 6px 0 10px; }
.span { display: grid; grid-template-columns: 260px 1fr 72px; align-items: center; gap: 12px; padding: 3px 20px; }
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
.span.marked { background: #eef2ff; box-shadow: inset 3px 0 0 #6366f1; }
.span .name a { color: inherit; text-decoration: none; }
.span .name a:hover { text-decoration: underline; }
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
#runs td { overflow-wrap: normal; padding: 9px 8px; }
#runs td .agent b { font-weight: 600; }
#runs .clip b { font-weight: 600; }
#runs th { padding: 9px 8px; }
.nowrap { white-space: nowrap; }
.empty { color: var(--ink-3); padding: 18px 20px; }
.error-box { background: var(--bad-soft); color: var(--bad); border: 1px solid #f5c2c2; border-radius: 10px; padding: 12px 16px; }
.kv td:first-child { color: var(--ink-2); width: 30%; font-family: var(--mono); font-size: 12.5px; }
.seq { color: var(--ink-3); font-variant-numeric: tabular-nums; }
.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
.title-row { gap: 10px; margin-bottom: 2px; }
.small { font-size: 12px; }
.hint { color: var(--ink-2); font-size: 12.5px; margin: 8px 0 0; }
.outcomes { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 14px; margin-bottom: 18px; align-items: start; }
.outcomes > .verdict, .outcomes > .outcome { margin-bottom: 0; }
.outcome { display: flex; gap: 14px; align-items: flex-start; border-radius: 12px; padding: 16px 20px; border: 1px solid var(--line); background: var(--card); }
.outcome .icon { width: 30px; height: 30px; border-radius: 50%; display: grid; place-items: center; font-weight: 800; color: #fff; flex: none; background: #64748b; }
.outcome h2 { margin: 0 0 2px; font-size: 16px; }
.outcome.completed .icon { background: var(--ok); }
.outcome.failed { background: var(--bad-soft); border-color: #f5c2c2; border-width: 2px; }
.outcome.failed .icon { background: var(--bad); }
.outcome.failed h2 { color: var(--bad); }
.outcome.cancelled { background: var(--warn-soft); border-color: #f7dca8; }
.outcome.cancelled .icon { background: var(--warn); }
.outcome.running .icon { background: var(--run); }
code.reason { display: block; white-space: pre-wrap; overflow-wrap: anywhere; color: #7f1d1d; background: #fff; border: 1px solid #f5c2c2; border-radius: 8px; padding: 6px 10px; margin-top: 4px; }
.verdict.unchecked { background: var(--warn-soft); border-color: #f7dca8; }
.verdict.unchecked .icon { background: var(--warn); }
.vbadge { display: inline-flex; align-items: center; gap: 5px; padding: 2px 9px 2px 3px; border-radius: 999px; font-size: 12px; font-weight: 600; white-space: nowrap; border: 1px solid; }
.vbadge .vicon { width: 16px; height: 16px; border-radius: 50%; display: inline-grid; place-items: center; font-size: 10px; color: #fff; }
.vbadge.v-verified { color: var(--ok); border-color: #bfe8cf; background: var(--ok-soft); }
.vbadge.v-verified .vicon { background: var(--ok); }
.vbadge.v-does_not_verify { color: #fff; border-color: var(--bad); background: var(--bad); }
.vbadge.v-does_not_verify .vicon { background: #fff; color: var(--bad); }
.vbadge.v-cannot_check { color: var(--warn); border-color: #f7dca8; background: var(--warn-soft); }
.vbadge.v-cannot_check .vicon { background: var(--warn); }
.vbadge.v-running, .vbadge.v-pending { color: var(--ink-2); border-color: var(--line); background: #f8fafc; }
.vbadge.v-running .vicon, .vbadge.v-pending .vicon { background: #94a3b8; }
.hidden-mark { color: var(--ink-3); font-style: italic; font-weight: 500; border-bottom: 1px dotted var(--ink-3); cursor: help; }
.bad-card { border-color: #f5c2c2; }
.bad-card > h2 { color: var(--bad); }
tr.err td { background: #fff5f5; }
tr.err td:first-child { box-shadow: inset 3px 0 0 var(--bad); }
.tag.t-err { background: var(--bad); color: #fff; font-family: var(--sans); font-weight: 600; }
.tag.t-span { background: #e2e8f0; color: #334155; }
.tag.t-hook_called { background: #eef2ff; color: #3730a3; }
.tag.t-span_recorded { background: #f1f5f9; color: #475569; }
.tag.t-telemetry_problem, .tag.t-telemetry_blocked { background: var(--bad-soft); color: var(--bad); }
.st-ok { color: var(--ok); font-weight: 600; }
.st-error { color: var(--bad); font-weight: 700; }
.st-refused { color: #c2410c; font-weight: 700; }
.st-running { color: var(--run); font-weight: 600; }
.clickable { cursor: pointer; }
tr.sel td, .span.sel { background: #eef2ff !important; }
tr.sel td:first-child { box-shadow: inset 3px 0 0 var(--accent); }
.span.error .name { color: var(--bad); font-weight: 600; }
.span.refused .name { color: #c2410c; font-weight: 600; }
.span .bar.refused { background: repeating-linear-gradient(135deg, #ea580c, #ea580c 4px, #fdba74 4px, #fdba74 8px); }
.workbench { display: grid; grid-template-columns: minmax(0, 1fr) 420px; gap: 18px; align-items: start; }
.wb-side { position: sticky; top: 72px; max-height: calc(100vh - 90px); overflow: auto; background: var(--card); border: 1px solid var(--line); border-radius: 12px; margin-bottom: 18px; box-shadow: 0 1px 2px rgba(16,24,40,.04); }
.panel-in { position: relative; padding: 14px 16px; }
.panel-in .empty { padding: 8px 0; }
.panel-in > .close { position: absolute; right: 10px; top: 10px; padding: 0 8px; font-size: 18px; line-height: 24px; }
.dhead { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; padding-right: 30px; margin-bottom: 6px; overflow-wrap: anywhere; }
.dsec { margin-top: 12px; }
.dsec h3 { font-size: 11px; text-transform: uppercase; letter-spacing: .5px; color: var(--ink-3); margin: 0 0 6px; font-weight: 700; }
.detail .kv td { padding: 4px 6px; font-size: 12.5px; }
.detail .kv td:first-child { width: 34%; }
.detail .answer { max-height: 16em; font-size: 13.5px; }
pre.json.small { max-height: 200px; margin: 0; }
a.seqlink { margin-right: 6px; font-family: var(--mono); font-size: 12px; }
td.content { max-width: 320px; }
td.content .summary { display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: var(--ink-2); font-size: 12.5px; }
.chat { display: flex; flex-direction: column; gap: 8px; }
.msg { border-radius: 10px; padding: 8px 12px; border: 1px solid var(--line); background: #fff; overflow-wrap: anywhere; }
.msg .role { font-size: 10.5px; text-transform: uppercase; letter-spacing: .5px; font-weight: 700; color: var(--ink-3); margin-bottom: 3px; }
.msg .say { white-space: pre-wrap; font-size: 13.5px; max-height: 24em; overflow: auto; }
.msg.r-system { background: #f8fafc; border-style: dashed; }
.msg.r-system .say { color: var(--ink-2); font-size: 12.5px; }
.msg.r-user { background: #eff6ff; border-color: #cfe0fb; margin-right: 24px; }
.msg.r-assistant { background: #faf8ff; border-color: #e4dcfb; margin-left: 24px; }
.msg.reply { border-color: #a78bfa; box-shadow: 0 0 0 1px #ddd6fe; }
.msg.r-tool { background: #fffaf0; border-color: #f6e0b5; margin-left: 24px; }
.msg .call { margin-top: 4px; border-left: 3px solid #d97706; padding: 2px 8px; }
.msg .call.result { border-left-color: #0d9488; }
.msg .call.result.error { border-left-color: var(--bad); background: var(--bad-soft); }
.msg .call-head { font-size: 12.5px; }
.msg pre.args { margin: 4px 0 0; font: 12px/1.45 var(--mono); white-space: pre-wrap; word-break: break-word; max-height: 14em; overflow: auto; background: rgba(15,23,42,.04); padding: 6px 8px; border-radius: 6px; }
.msg details.thinking summary { font-size: 12px; color: var(--ink-3); }
#conversation .chat { max-height: 720px; overflow: auto; padding-right: 6px; }
.errchip { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 999px; background: var(--bad); color: #fff; font-size: 11px; font-weight: 700; }
#runs table { table-layout: fixed; }
#runs th:nth-child(1), #runs td:nth-child(1) { width: 34px; }
#runs th:nth-child(2), #runs td:nth-child(2) { width: 238px; }
#runs th:nth-child(3), #runs td:nth-child(3) { width: 112px; }
#runs th:nth-child(4), #runs td:nth-child(4) { width: 150px; }
#runs th:nth-child(6), #runs td:nth-child(6) { width: 120px; }
#runs th:nth-child(7), #runs td:nth-child(7) { width: 88px; }
#runs th:nth-child(8), #runs td:nth-child(8) { width: 64px; }
#runs th:nth-child(9), #runs td:nth-child(9) { width: 60px; }
#runs th:nth-child(10), #runs td:nth-child(10) { width: 92px; }
#runs th:nth-child(11), #runs td:nth-child(11) { width: 62px; }
#runs th { white-space: normal; font-size: 11px; }
.clip { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#runs tr.failed td:first-child { box-shadow: inset 3px 0 0 var(--bad); }
#runs tr.tampered td { background: #fff5f5; }
#runs tr.tampered td:first-child { box-shadow: inset 3px 0 0 var(--bad); }
form.filters input[type=search] { min-width: 260px; }
form.filters label.field.grow input { width: 100%; }
form.filters input[type=number] { min-width: 0; width: 96px; }
form.filters input[type=date] { min-width: 0; }
form.filters select { min-width: 0; }
#search input:not([type]), #search input[type=text] { min-width: 0; width: 150px; }
.search-note { background: var(--run-soft); border-color: #c7d7fb; color: #1e3a8a; }
.side-label { display: inline-grid; place-items: center; width: 22px; height: 22px; border-radius: 6px; background: #0f172a; color: #fff; font-weight: 700; font-size: 12px; }
.reason-line { margin: 8px 0 0; color: var(--bad); font-size: 13px; }
.reason-line code { font-family: var(--mono); font-size: 12.5px; }
.dpart { background: #fde68a; border-radius: 4px; padding: 0 3px; }
tr.diff td { background: #fffbeb; }
tr.first-div td { background: #fef3c7; }
tr.first-div td:first-child { box-shadow: inset 3px 0 0 var(--warn); }
p.pad { padding: 0 20px; margin: 0 0 12px; }
.pad-h { padding: 16px 20px 0; }
.pad-h h2 { margin: 0; }
td.pre { white-space: pre-wrap; }
input.runid { min-width: 340px; }
#spec td:first-child { width: 26%; }
tr.new td { animation: flash 1.4s ease-out; }
@keyframes flash { from { background: #eef2ff; } to { background: transparent; } }
`;
