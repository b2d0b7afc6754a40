// The examples menu: a <select> whose first option is a prompt. A choice
// from the open list (a click, or Enter in it) applies at once; on the
// closed menu an arrow key only moves the choice, as a closed <select>
// changes its value on one, and Enter applies it. After each choice the
// menu shows its prompt again, so the same example can be picked twice.

// examplesMenu fills select with examples ({id, title}) and calls
// apply(id) for each choice.
export function examplesMenu(select, examples, apply) {
  select.append(...examples.map((e) => new Option(e.title, e.id)));
  let keyed = false; // the value changed by a key on the closed menu
  const choose = () => {
    keyed = false;
    const id = select.value;
    select.value = "";
    apply(id);
  };
  select.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && select.value) {
      e.preventDefault();
      choose();
      return;
    }
    keyed = (!e.altKey && MOVES.has(e.key)) || (e.key.length === 1 && e.key !== " ");
  });
  select.addEventListener("change", () => {
    if (keyed) keyed = false;
    else choose();
  });
  select.addEventListener("blur", () => {
    keyed = false;
    select.value = "";
  });
}

const MOVES = new Set(["ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"]);
