"""The script that lets the prompt picker be used from the keyboard in the browser.

ipywidgets' `Select` is a native list box: each ↑/↓ would choose (and open)
the next prompt, and in JupyterLab the keys would also reach the notebook (↑
moves the active cell, Enter puts a cell into edit mode). This script, shown
once per picker as a JavaScript output, makes the search box and the lists one
keyboard list:

* ↑/↓ (in the search box or a list) move a highlight across every server's
  prompts, without opening anything;
* Enter opens the highlighted prompt's form, or the only one the search left;
* Escape drops the highlight and goes back to the search box; in the search
  box, it gives the focus back to the notebook.

No key typed in the picker (or in the form it opens) reaches the notebook's
shortcuts (`keys_script`). Opening goes through the list's own `change` event,
so the kernel side stays plain ipywidgets; without scripts, a click opens a
prompt and Enter in the search box opens the only match (the kernel handles
that one). The script holds no data of the picker.
"""

from __future__ import annotations

from .keys_script import KEEP_KEYS

__all__ = ["PICKER_SCRIPT"]

PICKER_SCRIPT = (
    r"""
(function (scope) {
"""
    + KEEP_KEYS
    + r"""
  // The output runs before the front end puts it on the page: wait (a few seconds at most) to find the picker.
  let tries = 0;
  const find = () => {
    const picker = scope && scope.closest && scope.closest('.mcp-prompt-picker');
    if (picker) setUp(picker);
    else if (scope && tries++ < 300) requestAnimationFrame(find);
  };
  requestAnimationFrame(find);

function setUp(picker) {
  if (picker.dataset.mcpPickerKeys) return;
  picker.dataset.mcpPickerKeys = 'on';
  keepKeys(picker);  // no key typed in the picker or its form reaches the notebook's shortcuts

  const lists = () => Array.from(picker.querySelectorAll('.mcp-picker-list select'))
    .filter((select) => select.offsetParent !== null && !select.closest('.mcp-prompt-form'));
  const entries = () => lists().flatMap((select) => Array.from(select.options, (_, index) => ({select, index})));
  const position = (all) => all.findIndex((e) => e.select.selectedIndex === e.index);
  const highlight = (all, at, focus) => {
    const entry = all[at];
    lists().forEach((select) => { if (select !== entry.select) select.selectedIndex = -1; });
    entry.select.selectedIndex = entry.index;  // no `change` event: nothing opens yet
    if (focus) entry.select.focus();
    entry.select.options[entry.index].scrollIntoView({block: 'nearest'});
  };
  const open = (entry) => {
    entry.select.selectedIndex = entry.index;
    entry.select.dispatchEvent(new Event('change', {bubbles: true}));  // the widget tells the kernel
  };

  // Capture on the picker runs before the list box's own keys and the widgets' handlers.
  picker.addEventListener('keydown', (event) => {
    const target = event.target;
    const inList = target.closest && target.closest('.mcp-picker-list');
    const inSearch = target.closest && target.closest('.mcp-picker-search');
    if (!inList && !inSearch) return;  // an open form's fields have keys of their own
    const all = entries();
    const at = position(all);
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      if (!all.length) return;
      const step = event.key === 'ArrowDown' ? 1 : -1;
      const next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
      highlight(all, next, Boolean(inList));
    } else if (event.key === 'Enter') {
      if (at >= 0) open(all[at]);
      else if (all.length === 1) open(all[0]);
      else return;
    } else if (event.key === 'Escape') {
      lists().forEach((select) => { select.selectedIndex = -1; });
      const search = picker.querySelector('.mcp-picker-search input');
      if (search) search.focus();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  }, true);
}
})(typeof element !== 'undefined' ? (element.jquery ? element[0] : element) : null);
"""
)
