"""The part of the forms' scripts that keeps keys typed in a form or the picker away from the notebook.

JupyterLab (and Notebook 7, the same application) runs a notebook command for
a key unless the element the key was typed in, or one of its parents *before*
the element the command is bound to, carries `data-lm-suppress-shortcuts`. A
button, a checkbox or a list box matches the command-mode shortcuts itself
(they apply to any focused element that is not editable), so the attribute on
the form alone does not cover them: `m` on a button would turn the form's cell
into Markdown. This script puts the attribute on the form or picker and on
every part of it that can take the focus, now and as parts are added.

It also makes the keyboard's way in and out of a form short (the `¶` toggles
are out of the Tab order: ipywidgets' `tabbable`, so Tab goes from field to field):

* Tab on the form's cell (the notebook in command mode, the cell active)
  goes straight to the form's first field;
* Escape, when nothing in the form uses it (an open suggestion list closes
  first), gives the focus back to the notebook: its cell becomes the active
  cell in command mode, nothing else changes.

`KEEP_KEYS` defines the JavaScript functions `keepKeys(root)` and
`backToNotebook(root)`; the form's and the picker's scripts include it.
"""

from __future__ import annotations

__all__ = ["KEEP_KEYS"]

KEEP_KEYS = r"""
  const backToNotebook = (root) => {
    // The cell holding the form, focused as JupyterLab focuses its active cell in command mode.
    const cell = root.closest('.jp-Cell');
    if (cell) cell.focus();
    else if (document.activeElement && root.contains(document.activeElement)) document.activeElement.blur();
  };
  const firstField = (root) => Array.from(root.querySelectorAll('input, select, textarea, button'))
    .find((part) => part.tabIndex >= 0 && !part.disabled && part.offsetParent !== null);
  const keepKeys = (root) => {
    if (root.dataset.mcpKeepKeys) return;
    root.dataset.mcpKeepKeys = 'on';
    // Tab on the form's cell in command mode goes straight into the form (not to the cell's toolbar first).
    const cell = root.closest('.jp-Cell');
    if (cell && !cell.dataset.mcpTabIn) {
      cell.dataset.mcpTabIn = 'on';
      cell.addEventListener('keydown', (event) => {
        if (event.key !== 'Tab' || event.shiftKey || event.target !== cell) return;
        const form = cell.querySelector('[data-mcp-keep-keys]');
        const field = form && firstField(form);
        if (!field) return;
        event.preventDefault();
        field.focus();
      });
    }
    const focusable = 'button, input, select, textarea, a[href], [tabindex], [contenteditable]';
    const mark = () => {
      root.setAttribute('data-lm-suppress-shortcuts', 'true');
      root.querySelectorAll(focusable).forEach((part) => {
        if (!part.hasAttribute('data-lm-suppress-shortcuts')) part.setAttribute('data-lm-suppress-shortcuts', 'true');
      });
    };
    mark();
    new MutationObserver(mark).observe(root, {childList: true, subtree: true});
    // Capture: the widgets' own text fields stop their keys from going further up.
    root.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return;
      const target = event.target;
      if (target.getAttribute && target.getAttribute('aria-expanded') === 'true') return;  // its list closes first
      if (target.closest && target.closest('.mcp-picker-list')) return;  // the picker: back to its search box
      event.preventDefault();
      event.stopImmediatePropagation();
      backToNotebook(root);
    }, true);
  };
"""
