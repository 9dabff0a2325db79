// The dispatch board's style: a row per technician, their hours shaded, each
// visit a block coloured by status (its buffer lighter), holds hatched, a
// line at now; a visible focus on every control.

export const BOARD_CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.4 system-ui,sans-serif;color:#0f172a;background:#f8fafc}
header{background:#0f172a;color:#fff;padding:.5rem 1rem}
h1{font-size:1.25rem;margin:0}
main{padding:1rem}
h2{font-size:1.1rem;margin:.75rem 0 .25rem}
h3{font-size:.95rem;margin:0}
#problem{border:2px solid #b91c1c;background:#fef2f2;padding:.5rem .75rem;margin-bottom:1rem;max-width:48rem}
form{max-width:28rem}
label{display:block;font-weight:600}
input{font:inherit;padding:.35rem .5rem;border:1px solid #64748b;border-radius:4px}
#sign-in input{width:100%}
button{font:inherit;padding:.35rem .8rem;border:1px solid #1e3a8a;border-radius:4px;background:#1d4ed8;color:#fff;cursor:pointer}
button:hover{background:#1e40af}
:focus-visible,input:focus-within{outline:3px solid #f59e0b;outline-offset:2px}
.bar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.bar label{display:inline;margin-left:.75rem}
#sign-out{margin-left:auto;background:#fff;color:#1e3a8a}
#updated{color:#475569;margin:0 0 .5rem;font-size:.85rem}
#timeline{overflow-x:auto;background:#fff;border:1px solid #cbd5e1;border-radius:4px}
.row{display:flex;min-width:76rem;border-top:1px solid #e2e8f0}
.row:first-child{border-top:0}
.who{flex:0 0 11rem;padding:.4rem .6rem;border-right:1px solid #e2e8f0}
.who p{margin:.15rem 0 0;font-size:.8rem;color:#475569}
.track{position:relative;flex:1;min-height:5rem;background:#e2e8f0}
.ticks{min-height:1.6rem;background:#fff}
.tick{position:absolute;top:.3rem;font-size:.75rem;color:#475569;transform:translateX(-50%)}
.duty{position:absolute;top:0;bottom:0;background:#fff}
.items{list-style:none;margin:0;padding:0}
.item{position:absolute;height:4.6rem;margin-top:.2rem;padding:.15rem .3rem;overflow:hidden;font-size:.75rem;line-height:1.15;border:1px solid #64748b;border-left-width:4px;border-radius:3px;background:#f1f5f9}
.item span{display:block;white-space:nowrap}
.item .when{font-weight:700;white-space:normal}
.scheduled{background:#dbeafe;border-color:#1d4ed8}
.completed{background:#dcfce7;border-color:#15803d}
.no_show{background:#fee2e2;border-color:#b91c1c}
.held{background:repeating-linear-gradient(135deg,#fef3c7 0 6px,#fde68a 6px 12px);border-color:#b45309;border-style:dashed}
.buffer{position:absolute;height:4.6rem;margin-top:.2rem;background:#cbd5e1;border-radius:0 3px 3px 0;opacity:.7}
.now{position:absolute;top:0;bottom:0;width:2px;background:#dc2626}
`;
