"""The script that turns the forms' text fields into keyboard-friendly comboboxes in the browser.

ipywidgets' `Combobox` is an `<input>` with a `<datalist>`: what the browser
does with a datalist varies (Chromium shows it on a click, never on Tab,
Firefox on a double click, headless browsers not at all). This script, shown
once per form as a JavaScript output, gives every `.mcp-combobox` input of the
form one behaviour everywhere: the suggestions open under the field as an
overlay (so the form's layout never moves), all of them when it gets focus and
those that match as you type, the first of them highlighted; ↑/↓ move
through them, Enter or a click takes the highlighted one, Escape closes them.
Enter with no suggestion highlighted closes the list and goes on to the
widget, which tells the kernel (the form then moves to the next field, or
renders from the last).

Keys typed in the form stay in it (`keys_script`): no key typed in a field or
on a button reaches the notebook's shortcuts, and Escape with no list open
gives the focus back to the notebook.

It reads the suggestions from the datalist that ipywidgets keeps up to date,
so the kernel side stays plain ipywidgets. Where scripts do not run, the
datalist stays in place and the browser's own drop-down is used instead. The
script holds no data of the form: values travel only through the widgets.
"""

from __future__ import annotations

from .keys_script import KEEP_KEYS

__all__ = ["COMBOBOX_SCRIPT"]

COMBOBOX_SCRIPT = (
    r"""
(function (scope) {
"""
    + KEEP_KEYS
    + r"""
  const form = scope && scope.closest && scope.closest('.mcp-prompt-form');
  const root = form || document.body;
  // Keys typed in the form stay in it (keys_script). The output runs before the front end puts it on the
  // page: the form is found once it is there.
  let tries = 0;
  const placed = () => {
    const found = scope && scope.closest && scope.closest('.mcp-prompt-form');
    if (found) keepKeys(found);
    else if (scope && tries++ < 300) requestAnimationFrame(placed);
  };
  placed();
  const css = (name, fallback) => 'var(' + name + ', ' + fallback + ')';

  function enhance(input) {
    const listId = input.getAttribute('list');
    const datalist = listId ? document.getElementById(listId) : null;
    if (!datalist || input.dataset.mcpCombobox) return;
    input.dataset.mcpCombobox = 'on';
    input.removeAttribute('list');  // this list replaces the browser's own drop-down
    const popup = document.createElement('div');
    popup.id = listId + '-suggestions';
    popup.className = 'mcp-combobox-list';
    popup.setAttribute('role', 'listbox');
    Object.assign(popup.style, {
      position: 'fixed', zIndex: '10000', display: 'none', maxHeight: '14em', overflowY: 'auto',
      boxSizing: 'border-box', background: css('--jp-layout-color1', '#fff'),
      color: css('--jp-ui-font-color1', '#000'), border: '1px solid ' + css('--jp-border-color1', '#bbb'),
      boxShadow: css('--jp-elevation-z4', '0 2px 6px rgba(0,0,0,.3)'),
      fontFamily: css('--jp-ui-font-family', 'sans-serif'), fontSize: css('--jp-ui-font-size1', '13px'),
    });
    Object.entries({role: 'combobox', 'aria-autocomplete': 'list', 'aria-expanded': 'false',
                    'aria-controls': popup.id, autocomplete: 'off'})
      .forEach(([k, v]) => input.setAttribute(k, v));
    let items = [];
    let active = -1;
    let quiet = false;  // closed by a choice or Escape: stays closed until the user types or moves again
    let typed = false;  // since the field got focus: until then every suggestion shows, unfiltered

    const matches = () => {
      const values = Array.from(datalist.options, (o) => o.value);
      if (!typed) return values;
      const text = input.value.toLowerCase();
      return values.filter((v) => v !== input.value && v.toLowerCase().includes(text));
    };
    const close = () => {
      popup.style.display = 'none';
      input.setAttribute('aria-expanded', 'false');
      input.removeAttribute('aria-activedescendant');
      active = -1;
      if (!input.isConnected) popup.remove();
    };
    const accept = (index) => {
      input.value = items[index];
      quiet = true;
      close();
      input.dispatchEvent(new Event('input', {bubbles: true}));
      input.dispatchEvent(new Event('change', {bubbles: true}));
    };
    const open = () => {
      items = matches();
      if (quiet || !items.length || document.activeElement !== input) { close(); return; }
      if (active >= items.length) active = -1;
      if (typed && active < 0) active = 0;  // what was typed narrows the list: Enter takes the first match
      popup.replaceChildren(...items.map((value, i) => {
        const option = document.createElement('div');
        option.id = popup.id + '-' + i;
        option.className = 'mcp-combobox-option' + (i === active ? ' mcp-active' : '');
        option.setAttribute('role', 'option');
        option.setAttribute('aria-selected', String(i === active));
        option.textContent = value;
        Object.assign(option.style, {
          padding: '2px 8px', cursor: 'pointer', whiteSpace: 'pre', overflow: 'hidden', textOverflow: 'ellipsis',
          background: i === active ? css('--jp-brand-color1', '#1976d2') : '',
          color: i === active ? css('--jp-ui-inverse-font-color1', '#fff') : '',
        });
        option.addEventListener('mousedown', (event) => { event.preventDefault(); accept(i); });
        return option;
      }));
      if (!popup.isConnected) document.body.appendChild(popup);
      const box = input.getBoundingClientRect();
      Object.assign(popup.style, {left: box.left + 'px', top: box.bottom + 'px', minWidth: box.width + 'px',
                                  display: 'block'});
      input.setAttribute('aria-expanded', 'true');
      if (active >= 0) {
        input.setAttribute('aria-activedescendant', popup.children[active].id);
        popup.children[active].scrollIntoView({block: 'nearest'});
      } else {
        input.removeAttribute('aria-activedescendant');
      }
    };

    input.addEventListener('focus', () => { quiet = false; typed = false; active = -1; open(); });
    input.addEventListener('click', () => { if (popup.style.display === 'none') { quiet = false; open(); } });
    input.addEventListener('blur', close);
    input.addEventListener('input', (event) => {
      if (event.isTrusted) { quiet = false; typed = true; active = -1; open(); }
    });
    // Capture on the input runs before the widget's own handlers, so a key used here never reaches them.
    input.addEventListener('keydown', (event) => {
      const shown = popup.style.display !== 'none';
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        items = matches();
        if (!items.length) return;
        const step = event.key === 'ArrowDown' ? 1 : -1;
        active = active < 0 ? (step > 0 ? 0 : items.length - 1) : (active + step + items.length) % items.length;
        quiet = false;
        open();
      } else if (event.key === 'Enter' && shown && active >= 0) {
        accept(active);
      } else if (event.key === 'Escape' && shown) {
        quiet = true;
        close();
      } else {
        if (event.key === 'Enter') { quiet = true; close(); }  // on to the widget: the next field, or render
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
    }, true);
    new MutationObserver(() => { if (document.activeElement === input) open(); })
      .observe(datalist, {childList: true, subtree: true, attributes: true});
    const follow = () => {
      if (!input.isConnected) { document.removeEventListener('scroll', follow, true); popup.remove(); return; }
      if (popup.style.display !== 'none') open();
    };
    document.addEventListener('scroll', follow, true);
  }

  let scheduled = false;
  const scan = () => {
    scheduled = false;
    root.querySelectorAll('.mcp-combobox input:not([data-mcp-combobox])').forEach(enhance);
  };
  new MutationObserver(() => {
    if (!scheduled) { scheduled = true; requestAnimationFrame(scan); }
  }).observe(root, {childList: true, subtree: true});
  scan();
})(typeof element !== 'undefined' ? (element.jquery ? element[0] : element) : null);
"""
)
