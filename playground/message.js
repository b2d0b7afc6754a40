// The message bar under the header: one sentence for the person (an
// example's note, a link that did not read, the engine restarting), with
// a button that dismisses it.

import { h } from "./views.js";

const bar = () => document.querySelector('[data-testid="message"]');

// showMessage shows text, of kind "info", "warn" or "error", followed by
// any extra elements (an Undo button).
export function showMessage(text, kind = "info", ...extra) {
  const m = bar();
  m.replaceChildren(h("span", {}, text), ...extra, h("button", { class: "link", "aria-label": "dismiss", onclick: hideMessage }, "×"));
  m.dataset.kind = kind;
  m.hidden = false;
}

export function hideMessage() {
  bar().hidden = true;
}
