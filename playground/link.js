// The share link in the header and the address bar: the state now,
// encoded by share.js, written a moment after the typing pauses; and a
// link read back into the state.

import { encodeState, LINK_WARN, LINK_MAX } from "./share.js";

// linkState is what a link keeps of the state.
export function linkState(st) {
  return { ref: st.ref, input: st.inputText, edits: Object.fromEntries(st.ws.edits), file: st.active };
}

// fromLink is a decoded link (share.js decodeState) applied to the rules
// the page has: {ref, edits, file, input, warning}. An edit that reads
// as served is no edit; an edit of a file the rules do not have is left
// out, and so is a version they do not have (ref stays the one shown),
// with a warning for the person.
export function fromLink(ws, linked, ref) {
  const edits = new Map();
  const unknown = [];
  for (const [p, text] of Object.entries(linked.edits)) {
    if (!ws.originals.has(p)) unknown.push(p);
    else if (ws.originals.get(p) !== text) edits.set(p, text);
  }
  const known = ws.refs.includes(linked.ref);
  let warning = "";
  if (!known) warning = `The link names ${linked.ref}, which these rules do not have; showing ${ref}.`;
  else if (unknown.length) warning = `The link edits ${unknown.join(", ")}, which these rules do not have; those edits were left out.`;
  return { ref: known ? linked.ref : ref, edits, file: linked.file ?? "", input: linked.input, warning };
}

// ShareLink keeps the link element and the address bar in step with the
// state.
export class ShareLink {
  constructor(st, el) {
    this.st = st;
    this.el = el;
    this.timer = 0;
  }

  // schedule writes the link once changes pause for 150 ms.
  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.update(), 150);
  }

  // update writes the link now, and the address bar unless a link that
  // did not read is kept there (st.keepHash). Past LINK_MAX it writes no
  // link and says why.
  async update() {
    const { st, el } = this;
    const frag = await encodeState(linkState(st));
    if (frag.length > LINK_MAX) {
      el.removeAttribute("href");
      el.textContent = "link: too long";
      el.title = `The state takes ${(frag.length / 1048576).toFixed(1)} MiB as a link, over the ${LINK_MAX >> 20} MiB a page makes; download the rules instead.`;
      return;
    }
    st.writtenHash = "#" + frag;
    if (location.hash !== st.writtenHash && !st.keepHash) history.replaceState(null, "", st.writtenHash);
    el.href = st.writtenHash;
    const kb = (el.href.length / 1024).toFixed(1);
    el.textContent = `link (${kb} KB)`;
    el.classList.toggle("long", frag.length > LINK_WARN);
    el.title = frag.length > LINK_WARN
      ? `This link is ${kb} KB: some chat tools and trackers cut links over 8 KB. The download keeps everything.`
      : "A link to this state: rule set, input and edits";
  }
}
