// The Jupyter chat (jupyterlab-chat, Jupyter AI 3): every prompt of the user's servers is a `/server:prompt`
// command in the chat's own command menu. Choosing one opens a form for its arguments (values completed by
// the server, required ones marked); the rendered prompt replaces the command in the chat input. A prompt
// without arguments is rendered at once.
//
// @jupyter/chat is shared and never bundled: its command registry is the chat's own singleton. It is loaded
// on demand, so without jupyterlab-chat the import fails here and the rest of the extension is unaffected.
import type { ChatCommand, IChatCommandProvider, IChatCommandRegistry, IInputModel } from '@jupyter/chat';
import { JupyterFrontEnd } from '@jupyterlab/application';
import { LabIcon } from '@jupyterlab/ui-components';
import { IArgument, IPrompt, IServer, PromptStore, complete, render } from './api';

const PROVIDER_ID = 'mcp-notebook:prompts';
// A `/server:prompt` command followed by whitespace: chosen from the menu (the chat adds the space), or typed.
const COMMAND = /(^|\s)\/([^\s:/]+):(\S+)(?=\s)/g;
const DESCRIPTION_LIMIT = 90;
// How long to wait before asking again when the server's values were not there yet (`pending`).
const PENDING_RETRY_MS = 300;

/**
 * Offers the prompts in the Jupyter chat when jupyterlab-chat is installed and enabled.
 * Resolves to whether it did.
 */
export async function addChatCommands(app: JupyterFrontEnd, store: PromptStore, icon: LabIcon): Promise<boolean> {
  let chat: typeof import('@jupyter/chat');
  try {
    chat = await import('@jupyter/chat');
  } catch {
    return false; // jupyterlab-chat is not installed
  }
  let registry: IChatCommandRegistry | null = null;
  try {
    registry = await app.resolveOptionalService(chat.IChatCommandRegistry);
  } catch (error) {
    console.warn('mcp-notebook: the chat command registry could not be activated:', error);
  }
  if (!registry) {
    return false; // installed but disabled
  }
  registry.addProvider(new PromptCommands(store, icon));
  return true;
}

interface IChosen {
  server: string;
  prompt: IPrompt;
  /** `/server:prompt` as written in the input, and where. */
  command: string;
  at: number;
}

function commandName(server: string, prompt: IPrompt): string {
  return `/${server}:${prompt.name}`;
}

function shorten(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > DESCRIPTION_LIMIT ? line.slice(0, DESCRIPTION_LIMIT - 1).trimEnd() + '…' : line;
}

/** The prompts as chat commands, and what happens when one is chosen. */
export class PromptCommands implements IChatCommandProvider {
  constructor(
    private store: PromptStore,
    private icon: LabIcon
  ) {}

  readonly id = PROVIDER_ID;

  async listCommandCompletions(input: IInputModel): Promise<ChatCommand[]> {
    this._watch(input);
    const word = input.currentWord ?? '';
    if (!word.startsWith('/') || /\s/.test(word)) {
      return [];
    }
    if (this.store.lists.version < 0) {
      await this.store.ready; // the lists were asked for when JupyterLab started: answered at once
    } else {
      this.store.refreshSoon(); // as every `/` of the Markdown menu: newer lists for the next keys
    }
    const typed = word.slice(1).toLowerCase();
    const out: ChatCommand[] = [];
    for (const { server, prompt } of this._entries()) {
      const name = commandName(server.name, prompt);
      if (typed && !name.slice(1).toLowerCase().startsWith(typed) && !prompt.name.toLowerCase().startsWith(typed)) {
        continue;
      }
      out.push({
        name,
        providerId: this.id,
        icon: this.icon,
        description: shorten(prompt.title && prompt.title !== prompt.name ? prompt.title : prompt.description || ''),
        spaceOnAccept: true
      });
    }
    return out;
  }

  /** The prompts, servers in the server's order, each server's by name (as the `/` menu of Markdown). */
  private _entries(): { server: IServer; prompt: IPrompt }[] {
    const rank = new Map(this.store.lists.servers.map((server, index) => [server, index]));
    return this.store
      .entries()
      .sort((a, b) => rank.get(a.server)! - rank.get(b.server)! || a.prompt.name.localeCompare(b.prompt.name));
  }

  async onSubmit(_input: IInputModel): Promise<void> {
    // A command is rendered when it is chosen, not when the message is sent.
  }

  /** Follows an input's text: a command just completed there (chosen, or typed and a space) is opened. */
  private _watch(input: IInputModel): void {
    if (this._watched.has(input)) {
      return;
    }
    this._watched.add(input);
    let previous = input.value;
    const changed = (_: IInputModel, value: string) => {
      const before = previous;
      previous = value;
      if (this._writing || this._busy.has(input)) {
        return;
      }
      const chosen = this._justCompleted(before, value);
      if (chosen) {
        void this._use(input, chosen);
      }
    };
    input.valueChanged.connect(changed);
    input.onDisposed.connect(() => input.valueChanged.disconnect(changed));
  }

  /** The known command that the change from `before` to `after` completed, if any. */
  private _justCompleted(before: string, after: string): IChosen | null {
    let same = 0;
    while (same < before.length && same < after.length && before[same] === after[same]) {
      same++;
    }
    for (const match of after.matchAll(COMMAND)) {
      const at = match.index! + match[1].length;
      const command = match[0].slice(match[1].length);
      // The command, or the space after it, is where the text changed.
      if (at + command.length + 1 <= same) {
        continue;
      }
      const prompt = this.store.find(match[2], match[3]);
      if (prompt) {
        return { server: match[2], prompt, command, at };
      }
    }
    return null;
  }

  private async _use(input: IInputModel, chosen: IChosen): Promise<void> {
    this._busy.add(input);
    // After the key that chose the command is done with: its Enter is not the form's.
    await new Promise(done => requestAnimationFrame(done));
    try {
      let markdown: string | null;
      if (chosen.prompt.arguments.length) {
        markdown = await new ArgumentsForm(chosen.server, chosen.prompt).run();
      } else {
        markdown = await render(chosen.server, chosen.prompt.name, {})
          .then(rendered => rendered.markdown)
          .catch(async error => {
            await new ArgumentsForm(chosen.server, chosen.prompt, String(error.message ?? error)).run();
            return null;
          });
      }
      if (markdown !== null) {
        this._replace(input, chosen, markdown);
      }
    } finally {
      this._busy.delete(input);
      input.focus();
    }
  }

  /** The command (and the space after it) in the input becomes the rendered prompt. */
  private _replace(input: IInputModel, chosen: IChosen, markdown: string): void {
    const value = input.value;
    let at = value.startsWith(chosen.command, chosen.at) ? chosen.at : value.indexOf(chosen.command);
    let end = at + chosen.command.length;
    if (at < 0) {
      at = end = value.length;
    } else if (value[end] === ' ') {
      end++;
    }
    this._writing = true;
    try {
      input.value = value.slice(0, at) + markdown + value.slice(end);
      input.cursorIndex = at + markdown.length;
    } finally {
      this._writing = false;
    }
  }

  private _watched = new WeakSet<IInputModel>();
  private _busy = new WeakSet<IInputModel>();
  private _writing = false;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/**
 * A modal form for a prompt's arguments over the page, in JupyterLab's dialog style. `run()` resolves to the
 * rendered Markdown, or null when cancelled. A failed rendering keeps the form open with the server's message.
 */
class ArgumentsForm {
  constructor(
    private server: string,
    private prompt: IPrompt,
    private error = ''
  ) {}

  run(): Promise<string | null> {
    return new Promise(resolve => {
      this._resolve = resolve;
      this._build();
    });
  }

  private _build(): void {
    const backdrop = el('div', 'jp-Dialog jp-ThemedContainer jp-mcp-chat-dialog');
    const form = el('form', 'jp-Dialog-content jp-mcp-chat-form');
    form.noValidate = true; // required fields are checked here, with a message in the form
    form.setAttribute('aria-label', `Arguments of ${commandName(this.server, this.prompt)}`);
    const header = el('div', 'jp-Dialog-header');
    header.appendChild(el('code', 'jp-mcp-chat-command', commandName(this.server, this.prompt)));
    if (this.prompt.title && this.prompt.title !== this.prompt.name) {
      header.appendChild(el('span', 'jp-mcp-chat-title', this.prompt.title));
    }
    form.appendChild(header);
    const body = el('div', 'jp-Dialog-body');
    if (this.prompt.description) {
      body.appendChild(el('p', 'jp-mcp-chat-description', this.prompt.description));
    }
    for (const arg of this.prompt.arguments) {
      body.appendChild(this._field(arg));
    }
    this._status = el('p', 'jp-mcp-chat-status');
    this._status.setAttribute('role', 'status');
    if (this.error) {
      this._fail(this.error);
    }
    body.appendChild(this._status);
    form.appendChild(body);
    const footer = el('div', 'jp-Dialog-footer');
    const cancel = el('button', 'jp-Dialog-button jp-mod-reject jp-mod-styled');
    cancel.type = 'button';
    cancel.appendChild(el('div', 'jp-Dialog-buttonLabel', 'Cancel'));
    cancel.addEventListener('click', () => this._close(null));
    const insert = el('button', 'jp-Dialog-button jp-mod-accept jp-mod-styled jp-mcp-chat-insert');
    insert.type = 'submit';
    insert.appendChild(el('div', 'jp-Dialog-buttonLabel', 'Insert in chat'));
    const buttons = el('div', 'jp-Dialog-footerButtons');
    buttons.appendChild(cancel);
    buttons.appendChild(insert);
    footer.appendChild(buttons);
    form.appendChild(footer);
    form.addEventListener('input', () => this._recheck());
    form.addEventListener('change', () => this._recheck());
    form.addEventListener('submit', event => {
      event.preventDefault();
      void this._submit();
    });
    backdrop.addEventListener('keydown', event => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        this._close(null);
      }
    });
    backdrop.addEventListener('mousedown', event => {
      if (event.target === backdrop) {
        this._close(null);
      }
    });
    backdrop.appendChild(form);
    document.body.appendChild(backdrop);
    this._node = backdrop;
    const first = form.querySelector('input') ?? insert;
    first.focus();
  }

  private _field(arg: IArgument): HTMLElement {
    const field = el('div', 'jp-mcp-chat-field');
    const id = `jp-mcp-chat-arg-${Private.nextId++}`;
    const label = el('label', 'jp-mcp-chat-name', arg.name);
    label.htmlFor = id;
    if (arg.required) {
      const mark = el('span', 'jp-mcp-chat-required', ' *');
      mark.title = 'required';
      label.appendChild(mark);
    }
    field.appendChild(label);
    const box = el('div', 'jp-mcp-chat-box');
    const input = el('input', 'jp-mod-styled jp-mcp-chat-input');
    input.id = id;
    input.name = arg.name;
    input.autocomplete = 'off';
    input.required = !!arg.required;
    input.setAttribute('role', 'combobox');
    input.setAttribute('aria-autocomplete', 'list');
    input.setAttribute('aria-expanded', 'false');
    if (arg.default) {
      input.placeholder = arg.default;
    }
    box.appendChild(input);
    const list = el('ul', 'jp-mcp-chat-values');
    list.id = `${id}-values`;
    list.setAttribute('role', 'listbox');
    list.hidden = true;
    input.setAttribute('aria-controls', list.id);
    box.appendChild(list);
    field.appendChild(box);
    if (arg.description) {
      field.appendChild(el('span', 'jp-mcp-chat-help', arg.description));
    }
    this._inputs.set(arg.name, input);
    new ValueList(input, list, (value: string) => this._ask(arg.name, value));
    return field;
  }

  /** The server's values for an argument, given what is typed and the other arguments. */
  private async _ask(argument: string, value: string): Promise<{ values: string[]; pending: boolean }> {
    const context = this._values();
    delete context[argument];
    const answer = await complete(this.server, this.prompt.name, argument, value, context);
    return { values: answer.values, pending: !!(answer as { pending?: boolean }).pending };
  }

  private _values(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, input] of this._inputs) {
      if (input.value !== '') {
        out[name] = input.value;
      }
    }
    return out;
  }

  /** The required arguments left empty, marked (and said) once the user tried to insert. */
  private _missing(): IArgument[] {
    const missing = this.prompt.arguments.filter(arg => arg.required && !this._inputs.get(arg.name)!.value);
    for (const [name, input] of this._inputs) {
      input.classList.toggle(
        'jp-mcp-chat-missing',
        missing.some(arg => arg.name === name)
      );
    }
    if (missing.length) {
      this._fail(`Fill in ${missing.map(arg => arg.name).join(', ')}: required.`);
    } else if (this._checked) {
      this._status.className = 'jp-mcp-chat-status';
      this._status.textContent = '';
    }
    this._checked = missing.length > 0;
    return missing;
  }

  private _recheck(): void {
    if (this._checked) {
      this._missing();
    }
  }

  private async _submit(): Promise<void> {
    const missing = this._missing();
    if (missing.length) {
      this._inputs.get(missing[0].name)!.focus();
      return;
    }
    this._status.className = 'jp-mcp-chat-status';
    this._status.textContent = 'Rendering…';
    try {
      const rendered = await render(this.server, this.prompt.name, this._values());
      this._close(rendered.markdown);
    } catch (error) {
      this._fail(String((error as Error).message ?? error));
    }
  }

  private _fail(message: string): void {
    this._status.className = 'jp-mcp-chat-status jp-mcp-chat-error';
    this._status.textContent = message;
  }

  private _close(markdown: string | null): void {
    this._node?.remove();
    this._node = null;
    this._resolve(markdown);
  }

  private _inputs = new Map<string, HTMLInputElement>();
  private _checked = false;
  private _status!: HTMLElement;
  private _node: HTMLElement | null = null;
  private _resolve: (markdown: string | null) => void = () => undefined;
}

/** The suggested values under an argument's input: asked as it gets focus and as it is typed in. */
class ValueList {
  constructor(
    private input: HTMLInputElement,
    private list: HTMLUListElement,
    private ask: (value: string) => Promise<{ values: string[]; pending: boolean }>
  ) {
    input.addEventListener('focus', () => void this._update());
    input.addEventListener('input', () => void this._update());
    input.addEventListener('blur', () => this._show([]));
    input.addEventListener('keydown', event => this._key(event));
  }

  private async _update(retried = false): Promise<void> {
    const ticket = ++this._ticket;
    const value = this.input.value;
    let answer: { values: string[]; pending: boolean };
    try {
      answer = await this.ask(value);
    } catch {
      answer = { values: [], pending: false }; // no suggestions: the field stays free text
    }
    if (ticket !== this._ticket || document.activeElement !== this.input) {
      return;
    }
    this._show(answer.values.filter(v => v !== value));
    if (answer.pending && !retried) {
      window.setTimeout(() => {
        if (ticket === this._ticket) {
          void this._update(true);
        }
      }, PENDING_RETRY_MS);
    }
  }

  private _show(values: string[]): void {
    this.list.textContent = '';
    this._active = -1;
    for (const value of values) {
      const item = el('li', 'jp-mcp-chat-value', value);
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
    this._ticket++;
    this._show([]);
    this.input.dispatchEvent(new Event('change', { bubbles: true }));
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
      event.preventDefault();
      event.stopPropagation();
      this._pick(items[this._active].textContent ?? '');
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation(); // closes the list, not the form
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
