"""The style sheet and the script of a chart's web page (``html_page``), written into the
page itself: the page loads nothing (its Content-Security-Policy allows no request at all,
only these two, by their hashes).

The script steps through the scene (buttons; Right or Page Down for the next step, Left or
Page Up for the previous one, Home and End; ``#step-N`` in the address opens step N) and
shows an element's tooltip (its ``data-tip``) while the pointer is over it or it has the
keyboard's focus, and after a tap on it until the next tap elsewhere; Escape hides it. It
writes nothing but the page's own elements."""

from __future__ import annotations

# {scheme}, {bg} and {fg}: the theme's colour scheme (light or dark), background and foreground;
# {ratio}: the chart's width over its height.
STYLE = """\
:root { color-scheme: {scheme}; --bg: {bg}; --fg: {fg}; }
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--fg);
  font-family: "DejaVu Sans", Verdana, Arial, Helvetica, sans-serif; font-size: 16px; line-height: 1.4; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5em 1.5em; padding: 0.5em 1em; }
h1 { font-size: 1.25em; margin: 0; }
nav { display: flex; align-items: center; gap: 0.75em; }
button { font: inherit; color: var(--fg); background: var(--bg); border: 2px solid var(--fg);
  border-radius: 0.3em; padding: 0.25em 0.8em; cursor: pointer; }
button:disabled { opacity: 0.4; cursor: default; }
button:focus-visible, a:focus-visible, h2:focus-visible, .ops:focus-visible {
  outline: 3px solid var(--fg); outline-offset: 2px; }
a { color: inherit; }
main { padding: 0 1em 1em; }
.step h2 { font-size: 1em; font-weight: normal; margin: 0.25em 0; }
/* as wide as the window unless that makes the chart taller than it; the chart keeps its
   page's proportions, as in its PNG */
figure { margin: 0 auto; max-width: calc((100vh - 4em) * {ratio}); }
svg.chart { display: block; width: 100%; height: auto; }
svg .tip { cursor: help; }
svg .tip:focus { outline: none; }
svg .tip:focus-visible { outline: 3px solid var(--fg); outline-offset: 3px; }
svg g.tip:focus-visible > polyline:first-child { stroke-width: 6; }
#tip { position: fixed; z-index: 2; max-width: min(36em, 90vw); padding: 0.4em 0.6em; white-space: pre-line;
  background: var(--fg); color: var(--bg); border-radius: 0.3em; font-size: 0.9em; pointer-events: none; }
.ops { overflow-x: auto; margin: 1em 0; }  /* a wide table scrolls on a phone, not the page */
table { border-collapse: collapse; font-size: 0.9em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
th, td { padding: 0.2em 0.6em; border-bottom: 1px solid color-mix(in srgb, var(--fg) 30%, var(--bg)); }
th { text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.keys { font-size: 0.85em; opacity: 0.8; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%);
  white-space: nowrap; }
@media (max-width: 700px) {
  /* the chart's own caption is too small to read on a phone: the page writes it */
  .step h2.sr-only { position: static; width: auto; height: auto; overflow: visible; clip-path: none;
    white-space: normal; }
}
@media print {
  header nav, .keys, #tip, .ops { display: none !important; }
  .step, .step[hidden] { display: block !important; break-after: page; break-inside: avoid; }
  .step:last-child { break-after: auto; }
  figure { max-width: none; }
  svg.chart { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
"""

SCRIPT = """\
(function () {
  "use strict";
  var steps = Array.prototype.slice.call(document.querySelectorAll("section.step"));
  var prev = document.getElementById("prev"), next = document.getElementById("next");
  var counter = document.getElementById("counter"), tip = document.getElementById("tip");
  var said = document.getElementById("said");  // read out by a screen reader on each step
  var current = 0, started = false;

  function hideTip() { tip.hidden = true; tip.textContent = ""; }

  function showTip(target, x, y) {
    tip.textContent = target.getAttribute("data-tip");
    tip.hidden = false;
    var box = tip.getBoundingClientRect(), room = 12;
    var left = Math.min(x + room, window.innerWidth - box.width - room);
    var top = y + room + box.height > window.innerHeight ? y - room - box.height : y + room;
    tip.style.left = Math.max(room, left) + "px";
    tip.style.top = Math.max(room, top) + "px";
  }

  function tipOf(node) { return node && node.closest ? node.closest(".tip") : null; }

  function show(index) {
    index = Math.max(0, Math.min(steps.length - 1, index));
    var focused = steps[current].contains(document.activeElement);
    steps.forEach(function (step, i) { step.hidden = i !== index; });
    current = index;
    hideTip();
    if (counter) { counter.textContent = "Step " + (index + 1) + " of " + steps.length; }
    if (said && started) { said.textContent = steps[index].querySelector("h2").textContent; }
    if (prev) { prev.disabled = index === 0; }
    if (next) { next.disabled = index === steps.length - 1; }
    if (steps.length > 1 && started) {  // (the first step shown keeps the address it was opened with)
      try { history.replaceState(null, "", "#step-" + (index + 1)); } catch (e) { /* a sandboxed page */ }
    }
    if (focused) { steps[index].querySelector("h2").focus(); }
    started = true;
  }

  if (prev) { prev.addEventListener("click", function () { show(current - 1); }); }
  if (next) { next.addEventListener("click", function () { show(current + 1); }); }
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    var moves = {ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1};
    var focused = document.activeElement;
    var inTable = focused && focused.closest && focused.closest(".ops");
    if (inTable && event.key.indexOf("Arrow") === 0) { return; }  // (arrows scroll a wide table)
    if (event.key in moves) { show(current + moves[event.key]); }
    else if (event.key === "Home") { show(0); }
    else if (event.key === "End") { show(steps.length - 1); }
    else if (event.key === "Escape") { hideTip(); return; }
    else { return; }
    event.preventDefault();
  });
  document.addEventListener("pointerover", function (event) {
    var target = tipOf(event.target);
    if (target) { showTip(target, event.clientX, event.clientY); }
  });
  document.addEventListener("pointerout", function (event) {
    var target = tipOf(event.target);
    if (target && tipOf(event.relatedTarget) !== target) { hideTip(); }
  });
  // A tap on a phone: the pointer leaves as the finger lifts, and the click that follows
  // shows the tooltip again until the next tap elsewhere.
  document.addEventListener("click", function (event) {
    var target = tipOf(event.target);
    if (target) { showTip(target, event.clientX, event.clientY); } else { hideTip(); }
  });
  document.addEventListener("focusin", function (event) {
    var target = tipOf(event.target);
    if (target) {
      var box = target.getBoundingClientRect();
      showTip(target, box.right, box.bottom);
    }
  });
  document.addEventListener("focusout", function (event) { if (tipOf(event.target)) { hideTip(); } });

  var asked = /^#step-(\\d+)$/.exec(window.location.hash);
  show(asked ? parseInt(asked[1], 10) - 1 : parseInt(document.body.getAttribute("data-start") || "0", 10));
}());
"""
