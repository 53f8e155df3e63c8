// The form of a prompt's arguments, the same in the prompts panel and in the chat: required arguments marked
// and said missing beside the field, values completed by the server in a list under the field (arrow keys,
// Enter, a click; Escape closes it), and a status line for what it does and what the server refused.
import { IArgument, IPrompt, complete, render } from './api';

/** How long a field waits before asking again for values the server had not given in time (`pending`). */
const PENDING_RETRY_MS = 300;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

export function messageOf(error: unknown): string {
  return String((error as Error)?.message ?? error);
}

/**
 * A prompt's form: `node` holds `body` (its description, `warning` if any, one field per argument) and the
 * buttons and `status` the caller adds where it wants them.
 */
export class PromptForm {
  constructor(
    private server: string,
    private prompt: IPrompt,
    warning = ''
  ) {
    this.node.noValidate = true; // the form says itself what is missing, beside each field
    this.node.appendChild(this.body);
    if (prompt.description) {
      this.body.appendChild(el('p', 'jp-mcp-description', prompt.description));
    }
    if (warning) {
      this.body.appendChild(el('p', 'jp-mcp-warning', warning));
    }
    for (const arg of prompt.arguments) {
      this.body.appendChild(this._field(arg));
    }
    this.status.setAttribute('role', 'status');
  }

  readonly node = el('form', 'jp-mcp-form');
  readonly body = el('div', 'jp-mcp-form-body');
  readonly status = el('div', 'jp-mcp-status');

  /** The values typed in, empty ones left out. */
  values(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, input] of this._inputs) {
      if (input.value !== '') {
        out[name] = input.value;
      }
    }
    return out;
  }

  /** The first field, to focus when the form opens. */
  first(): HTMLInputElement | null {
    return this._inputs.values().next().value ?? null;
  }

  /** The prompt rendered with the values, or null when a required one is missing or the server refused (said). */
  async render(): Promise<string | null> {
    if (this._missing()) {
      return null;
    }
    this.say('busy', 'Rendering…');
    try {
      return (await render(this.server, this.prompt.name, this.values())).markdown;
    } catch (error) {
      this.say('error', messageOf(error));
      return null;
    }
  }

  /** The status line: what it is doing, what it did, or what went wrong (first line; the rest folded). */
  say(kind: 'busy' | 'done' | 'error', text: string): void {
    const status = this.status;
    status.className = `jp-mcp-status jp-mcp-status-${kind}${kind === 'error' ? ' jp-mcp-error' : ''}`;
    status.textContent = '';
    delete status.dataset.missing;
    if (!text) {
      return;
    }
    const [first, ...rest] = text.trim().split('\n');
    status.appendChild(el('span', 'jp-mcp-status-text', first));
    if (rest.join('').trim()) {
      const details = el('details', 'jp-mcp-status-details');
      details.appendChild(el('summary', '', 'Details'));
      details.appendChild(el('pre', '', rest.join('\n')));
      status.appendChild(details);
    }
  }

  /** Marks the required fields left empty and focuses the first; whether there was one. */
  private _missing(): boolean {
    let first: HTMLInputElement | null = null;
    for (const arg of this.prompt.arguments) {
      const input = this._inputs.get(arg.name)!;
      const empty = !!arg.required && input.value.trim() === '';
      this._errors.get(arg.name)!.textContent = empty ? 'Required: fill this in.' : '';
      input.closest('.jp-mcp-field')?.classList.toggle('jp-mcp-invalid', empty);
      first = first ?? (empty ? input : null);
    }
    if (first) {
      first.focus();
      this.say('error', 'Fill in the fields marked *, then try again.');
      this.status.dataset.missing = '1';
    }
    return !!first;
  }

  private _field(arg: IArgument): HTMLElement {
    const field = el('div', 'jp-mcp-field');
    const id = `jp-mcp-arg-${Private.nextId++}`;
    const label = el('label', 'jp-mcp-field-name', arg.name);
    label.htmlFor = id;
    if (arg.required) {
      const mark = el('span', 'jp-mcp-required', '*');
      mark.title = 'required';
      label.appendChild(mark);
    }
    field.appendChild(label);
    const box = el('div', 'jp-mcp-box');
    const input = el('input', 'jp-mcp-input jp-mod-styled');
    input.id = id;
    input.name = arg.name;
    input.autocomplete = 'off';
    input.setAttribute('aria-required', String(!!arg.required));
    input.placeholder = arg.required ? 'required' : arg.default ? `optional, default: ${arg.default}` : 'optional';
    const list = el('ul', 'jp-mcp-values');
    list.id = `${id}-values`;
    box.appendChild(input);
    box.appendChild(list);
    field.appendChild(box);
    if (arg.description) {
      field.appendChild(el('span', 'jp-mcp-field-description', arg.description));
    }
    const error = el('span', 'jp-mcp-field-error');
    error.setAttribute('aria-live', 'polite');
    field.appendChild(error);
    this._inputs.set(arg.name, input);
    this._errors.set(arg.name, error);
    input.addEventListener('input', () => {
      error.textContent = '';
      field.classList.remove('jp-mcp-invalid');
      if (this.status.dataset.missing && !this.node.querySelector('.jp-mcp-invalid')) {
        this.say('done', ''); // every field it asked for is filled in now
      }
    });
    new ValueList(input, list, async (value: string) => {
      const context = this.values();
      delete context[arg.name];
      return complete(this.server, this.prompt.name, arg.name, value, context);
    });
    return field;
  }

  private _inputs = new Map<string, HTMLInputElement>();
  private _errors = new Map<string, HTMLElement>();
}

/** The suggested values under an argument's input: asked as it gets focus and as it is typed in. */
class ValueList {
  constructor(
    private input: HTMLInputElement,
    private list: HTMLUListElement,
    private ask: (value: string) => Promise<{ values: string[]; pending?: boolean }>
  ) {
    input.setAttribute('role', 'combobox');
    input.setAttribute('aria-autocomplete', 'list');
    input.setAttribute('aria-controls', list.id);
    list.setAttribute('role', 'listbox');
    this._show([]);
    input.addEventListener('focus', () => void this._update());
    input.addEventListener('input', () => void this._update());
    input.addEventListener('blur', () => this._show([]));
    input.addEventListener('keydown', event => this._key(event));
  }

  private async _update(): Promise<void> {
    const ticket = ++this._ticket;
    const value = this.input.value;
    let answer: { values: string[]; pending?: boolean };
    try {
      answer = await this.ask(value);
    } catch {
      answer = { values: [] }; // no suggestions: the field stays free text
    }
    if (ticket !== this._ticket || document.activeElement !== this.input) {
      return; // typed on, or left: a newer question (or none) is wanted
    }
    this._show(answer.values.filter(v => v !== value));
    if (answer.pending) {
      // The server was slow: its answer is kept for the same question, asked again in a moment.
      window.setTimeout(() => ticket === this._ticket && void this._update(), PENDING_RETRY_MS);
    }
  }

  private _show(values: string[]): void {
    this.list.textContent = '';
    this._active = -1;
    for (const value of values) {
      const item = el('li', 'jp-mcp-value', value);
      item.setAttribute('role', 'option');
      item.addEventListener('mousedown', event => event.preventDefault()); // the input keeps the focus
      item.addEventListener('click', () => this._pick(value));
      this.list.appendChild(item);
    }
    this.list.hidden = !values.length;
    this.input.setAttribute('aria-expanded', String(!this.list.hidden));
  }

  private _pick(value: string): void {
    this.input.value = value;
    this.input.dispatchEvent(new Event('input', { bubbles: true }));
    this._ticket++; // picked: no list for the value just picked
    this._show([]);
  }

  private _key(event: KeyboardEvent): void {
    const items = Array.from(this.list.children) as HTMLElement[];
    if (this.list.hidden || !items.length) {
      return;
    }
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      this._active = (this._active + step + items.length) % items.length;
      items.forEach((item, index) => item.setAttribute('aria-selected', String(index === this._active)));
      items[this._active].scrollIntoView({ block: 'nearest' });
    } else if (event.key === 'Enter' && this._active >= 0) {
      event.preventDefault(); // picks the value, does not submit the form
      event.stopPropagation();
      this._pick(items[this._active].textContent ?? '');
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation(); // closes the list, not what holds the form
      this._ticket++;
      this._show([]);
    }
  }

  private _ticket = 0;
  private _active = -1;
}

namespace Private {
  export let nextId = 0;
}
