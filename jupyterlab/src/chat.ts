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
import { IPrompt, IServer, PromptStore, render } from './api';
import { PromptForm, el } from './form';

const PROVIDER_ID = 'mcp-notebook:prompts';
// A `/server:prompt` command followed by whitespace: chosen from the menu (the chat adds the space), or typed.
const COMMAND = /(^|\s)\/([^\s:/]+):(\S+)(?=\s)/g;
const DESCRIPTION_LIMIT = 90;

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

/**
 * The prompt's form over the page, in JupyterLab's dialog style. `run()` resolves to the rendered Markdown,
 * or null when cancelled. A failed rendering keeps the form open with the server's message.
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
    const form = new PromptForm(this.server, this.prompt);
    const node = form.node;
    node.classList.add('jp-Dialog-content', 'jp-mcp-chat-form');
    node.setAttribute('aria-label', `Arguments of ${commandName(this.server, this.prompt)}`);
    const header = el('div', 'jp-Dialog-header');
    header.appendChild(el('code', 'jp-mcp-chat-command', commandName(this.server, this.prompt)));
    if (this.prompt.title && this.prompt.title !== this.prompt.name) {
      header.appendChild(el('span', 'jp-mcp-chat-title', this.prompt.title));
    }
    node.insertBefore(header, form.body);
    form.body.classList.add('jp-Dialog-body');
    form.body.appendChild(form.status);
    if (this.error) {
      form.say('error', this.error);
    }
    const footer = el('div', 'jp-Dialog-footer');
    const cancel = el('button', 'jp-Dialog-button jp-mod-reject jp-mod-styled');
    cancel.type = 'button';
    cancel.appendChild(el('div', 'jp-Dialog-buttonLabel', 'Cancel'));
    cancel.addEventListener('click', () => this._close(null));
    const insert = el('button', 'jp-Dialog-button jp-mod-accept jp-mod-styled jp-mcp-chat-insert');
    insert.type = 'submit';
    insert.appendChild(el('div', 'jp-Dialog-buttonLabel', 'Insert in chat'));
    const buttons = el('div', 'jp-Dialog-footerButtons');
    buttons.append(cancel, insert);
    footer.appendChild(buttons);
    node.appendChild(footer);
    node.addEventListener('submit', async event => {
      event.preventDefault();
      const markdown = await form.render();
      if (markdown !== null) {
        this._close(markdown);
      }
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
    backdrop.appendChild(node);
    document.body.appendChild(backdrop);
    this._node = backdrop;
    (form.first() ?? insert).focus();
  }

  private _close(markdown: string | null): void {
    this._node?.remove();
    this._node = null;
    this._resolve(markdown);
  }

  private _node: HTMLElement | null = null;
  private _resolve: (markdown: string | null) => void = () => undefined;
}
