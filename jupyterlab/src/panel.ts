// The prompts panel (left sidebar): every prompt the user can reach, with search and the same form as
// `%mcp form`; and, for the open notebook, which cells are published and its format warnings.
import { Clipboard } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { refreshIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { INotebookReport, IPrompt, IPromptLists, IServer, PromptStore, notebookReport } from './api';
import { PromptForm, el, messageOf } from './form';

const STATE_TEXT: Record<string, string> = {
  connecting: 'connecting…',
  failed: 'failed',
  'not-trusted': 'not trusted'
};

const KIND_TEXT: Record<string, string> = {
  notebooks: "this server's notebooks",
  config: 'configured',
  kernel: 'kernel'
};

export class PromptsPanel extends Widget {
  constructor(
    private store: PromptStore,
    private notebooks: INotebookTracker
  ) {
    super();
    this.id = 'mcp-notebook-prompts';
    this.addClass('jp-mcp-panel');
    this.title.caption = 'MCP prompts';

    const header = el('div', 'jp-mcp-panel-header');
    const top = el('div', 'jp-mcp-panel-top');
    top.appendChild(el('h2', 'jp-mcp-panel-title', 'MCP prompts'));
    const refresh = el('button', 'jp-mcp-refresh jp-Button jp-mod-minimal');
    refresh.title = 'Ask the servers for their prompts again';
    refresh.setAttribute('aria-label', 'Refresh the prompt lists');
    refreshIcon.element({ container: refresh, tag: 'span' });
    refresh.addEventListener('click', () => {
      void this._store().refresh();
      void this.refreshNotebook();
    });
    top.appendChild(refresh);
    header.appendChild(top);
    this._search = el('input', 'jp-mcp-search jp-mod-styled');
    this._search.type = 'search';
    this._search.placeholder = 'Search prompts';
    this._search.setAttribute('aria-label', 'Search prompts');
    this._search.addEventListener('input', () => this._renderList());
    header.appendChild(this._search);
    const toggle = el('label', 'jp-mcp-magics');
    this._magics = el('input');
    this._magics.type = 'checkbox';
    this._magics.addEventListener('change', () => this._showMagics(this._magics.checked));
    toggle.appendChild(this._magics);
    toggle.appendChild(document.createTextNode(' Show magic prompts of kernels'));
    toggle.title = 'The IPython magics a kernel running %mcp serve publishes; left out unless you ask';
    header.appendChild(toggle);
    this.node.appendChild(header);

    this._notebookBox = el('section', 'jp-mcp-notebook');
    this.node.appendChild(this._notebookBox);
    this._list = el('section', 'jp-mcp-list');
    this.node.appendChild(this._list);

    store.changed.connect(this._onLists, this);
    notebooks.currentChanged.connect(() => this._watchNotebook());
    this._watchNotebook();
    this._renderList();
  }

  /** The notebook report, asked again now (after a save, or when another notebook becomes current). */
  async refreshNotebook(): Promise<void> {
    const panel = this.notebooks.currentWidget;
    const asked = ++this._asked;
    if (!panel) {
      this._report = null;
      this._reportError = '';
      this._renderNotebook(null, false);
      return;
    }
    this._renderNotebook(panel, true);
    let report: INotebookReport | null = null;
    let error = '';
    try {
      report = await notebookReport(panel.context.path);
    } catch (reason) {
      error = messageOf(reason);
    }
    if (asked !== this._asked || this.notebooks.currentWidget !== panel) {
      return; // another notebook (or a newer answer) took its place
    }
    this._report = report;
    this._reportError = error;
    this._renderNotebook(panel, false);
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._follow();
  }

  /** While the panel is shown, its lists follow the servers (and kernels that start or stop). */
  private _follow(): void {
    const store = this._store();
    void store.follow(() => this.isVisible && !this.isDisposed && this._store() === store);
  }

  /** A cell's tags changed (the toolbar published it): show what the next save will serve. */
  tagsChanged(): void {
    this._renderNotebook(this.notebooks.currentWidget, false);
  }

  private _renderNotebook(panel: NotebookPanel | null, reading: boolean): void {
    const box = this._notebookBox;
    box.textContent = '';
    const title = el('h3', 'jp-mcp-section-title', 'This notebook');
    box.appendChild(title);
    if (!panel) {
      box.appendChild(el('p', 'jp-mcp-muted', 'Open a notebook to see which of its cells are served as prompts.'));
      return;
    }
    const where = el('span', 'jp-mcp-notebook-path', panel.context.localPath);
    where.title = panel.context.localPath;
    title.appendChild(where);
    const body = el('div', 'jp-mcp-notebook-body');
    box.appendChild(body);
    if (reading) {
      body.appendChild(el('p', 'jp-mcp-muted jp-mcp-loading', 'Reading what it serves…'));
      return;
    }
    if (this._reportError) {
      body.appendChild(el('p', 'jp-mcp-error', this._reportError));
      return;
    }
    const report = this._report;
    if (!report) {
      return;
    }
    const served = new Set(report.prompts.map(p => p.name));
    const tagged = panel.context.model.dirty ? taggedNames(panel).filter(t => !served.has(t.name)) : [];
    if (report.served_as === null) {
      body.appendChild(el('p', 'jp-mcp-muted', 'Not served.'));
    } else if (!report.prompts.length && !tagged.length) {
      body.appendChild(
        el('p', 'jp-mcp-muted', 'No cell is published. Use "Publish as prompt" in a cell\'s toolbar, then save.')
      );
    } else {
      if (report.prompts.length) {
        body.appendChild(el('p', 'jp-mcp-muted', 'Served since its last save:'));
      }
      const list = el('ul', 'jp-mcp-published');
      for (const prompt of report.prompts) {
        const item = el('li', 'jp-mcp-published-item');
        item.dataset.prompt = prompt.name;
        const name = el('code', 'jp-mcp-published-name', `/${report.served_as}:${prompt.name}`);
        name.title = prompt.title ? `${prompt.title}` : '';
        item.appendChild(name);
        const where = [prompt.kind !== 'prompt' ? prompt.kind : '', cellText(prompt.cell_number)].filter(Boolean);
        if (where.length) {
          item.appendChild(el('span', 'jp-mcp-cell-ref', where.join(' · ')));
        }
        this._linkToCell(item, panel, prompt.cell_number);
        list.appendChild(item);
      }
      for (const { name, index } of tagged) {
        const item = el('li', 'jp-mcp-published-item jp-mcp-pending');
        item.dataset.pending = name;
        item.appendChild(el('code', 'jp-mcp-published-name', `/${report.served_as}:${name}`));
        item.appendChild(el('span', 'jp-mcp-cell-ref', 'served once you save'));
        this._linkToCell(item, panel, index + 1);
        list.appendChild(item);
      }
      body.appendChild(list);
    }
    if (report.warnings.length) {
      const list = el('ul', 'jp-mcp-warnings');
      list.setAttribute('aria-label', 'Format warnings');
      for (const warning of report.warnings) {
        const item = el('li', 'jp-mcp-warning', warning.message);
        this._linkToCell(item, panel, warning.cell_number);
        list.appendChild(item);
      }
      body.appendChild(list);
    }
  }

  /** A click on `node` selects the notebook's cell number `number` (1-based) and shows it. */
  private _linkToCell(node: HTMLElement, panel: NotebookPanel, number: number | null): void {
    if (!number) {
      return;
    }
    node.classList.add('jp-mcp-links');
    node.title = node.title || `Go to cell ${number}`;
    node.addEventListener('click', () => {
      const notebook = panel.content;
      if (number <= notebook.widgets.length) {
        notebook.activeCellIndex = number - 1;
        void notebook.scrollToItem(number - 1);
      }
    });
  }

  private _watchNotebook(): void {
    if (this._watched) {
      this._watched.context.saveState.disconnect(this._onSave, this);
    }
    this._watched = this.notebooks.currentWidget;
    this._report = null;
    if (this._watched) {
      const watched = this._watched;
      watched.context.saveState.connect(this._onSave, this);
      this._renderNotebook(watched, true);
      void watched.context.ready.then(() => {
        if (this._watched === watched) {
          void this.refreshNotebook();
        }
      });
    } else {
      void this.refreshNotebook();
    }
  }

  private _onSave(_: unknown, state: string): void {
    if (state === 'completed') {
      void this.refreshNotebook();
      void this._store().refresh();
    }
  }

  private _store(): PromptStore {
    return this._magicStore && this._magics.checked ? this._magicStore : this.store;
  }

  private _showMagics(on: boolean): void {
    if (on && !this._magicStore) {
      this._magicStore = new PromptStore({ magics: true });
      this._magicStore.changed.connect(this._onLists, this);
    } else if (on) {
      void this._magicStore?.refresh();
    }
    this._renderList();
    this._follow();
  }

  private _onLists(sender: PromptStore, _: IPromptLists): void {
    if (sender === this._store()) {
      this._renderList();
    }
  }

  private _renderList(): void {
    const store = this._store();
    const query = this._search.value.trim().toLowerCase();
    const list = this._list;
    // An open form is kept as it is (what was typed, the focus in it) when the lists are drawn again.
    const kept = new Map<string, HTMLElement>();
    list.querySelectorAll<HTMLElement>('.jp-mcp-prompt').forEach(row => {
      if (row.querySelector('.jp-mcp-form') && row.dataset.spec) {
        kept.set(row.dataset.spec, row);
      }
    });
    const focused = document.activeElement;
    const typing = focused instanceof HTMLInputElement && list.contains(focused) ? focused : null;
    const selection = typing ? [typing.selectionStart, typing.selectionEnd] : null;
    list.textContent = '';
    this._renderLists(store, query, list, kept);
    if (typing && typing.isConnected) {
      typing.focus();
      if (selection && selection[0] !== null && selection[1] !== null) {
        typing.setSelectionRange(selection[0], selection[1]);
      }
    }
  }

  private _renderLists(store: PromptStore, query: string, list: HTMLElement, kept: Map<string, HTMLElement>): void {
    if (store.error && !store.lists.servers.length) {
      list.appendChild(
        el(
          'p',
          'jp-mcp-error',
          `The prompt lists cannot be read: ${store.error}. Check that the mcp-notebook server extension ` +
            'is enabled (jupyter server extension list), then refresh.'
        )
      );
      return;
    }
    if (store.lists.version < 0) {
      list.appendChild(el('p', 'jp-mcp-muted jp-mcp-loading', 'Reading the prompt lists…'));
      return;
    }
    for (const problem of store.lists.problems ?? []) {
      list.appendChild(el('p', 'jp-mcp-warning jp-mcp-problem', problem));
    }
    let shown = 0;
    for (const server of store.lists.servers) {
      // Magic prompts only when the toggle asks (the `/` menu's own setting may have them in the shared lists).
      const prompts = server.prompts.filter(p => (this._magics.checked || !p.magic) && matches(server, p, query));
      if (query && !prompts.length) {
        continue;
      }
      const section = el('div', 'jp-mcp-server');
      section.dataset.server = server.name;
      section.dataset.kind = server.kind;
      section.dataset.state = server.state;
      const title = el('h3', 'jp-mcp-section-title jp-mcp-server-title');
      title.appendChild(el('span', 'jp-mcp-server-name', server.name));
      title.appendChild(el('span', 'jp-mcp-kind', KIND_TEXT[server.kind] ?? server.kind));
      const state = STATE_TEXT[server.state];
      if (state) {
        title.appendChild(el('span', `jp-mcp-state jp-mcp-state-${server.state}`, state));
      }
      section.appendChild(title);
      if (server.state !== 'ready' && server.detail) {
        section.appendChild(detailOf(server));
      }
      if (!prompts.length && server.state === 'ready') {
        section.appendChild(el('p', 'jp-mcp-muted', 'No prompts.'));
      }
      for (const prompt of prompts) {
        const spec = `${server.name}:${server.state}:${JSON.stringify(prompt)}`;
        const row = kept.get(spec) ?? this._promptRow(server, prompt);
        row.dataset.spec = spec;
        section.appendChild(row);
        shown++;
      }
      list.appendChild(section);
    }
    if (query && !shown) {
      list.appendChild(el('p', 'jp-mcp-muted jp-mcp-empty', `No prompt matches "${this._search.value.trim()}".`));
    } else if (!store.lists.servers.length) {
      list.appendChild(
        el(
          'p',
          'jp-mcp-muted jp-mcp-empty',
          'No prompts yet. Publish a notebook cell, add MCP servers to your configuration, or run %mcp serve in a kernel.'
        )
      );
    }
  }

  private _promptRow(server: IServer, prompt: IPrompt): HTMLElement {
    const row = el('div', 'jp-mcp-prompt');
    row.dataset.prompt = `${server.name}:${prompt.name}`;
    const key = `${server.name}:${prompt.name}`;
    const head = el('button', 'jp-mcp-prompt-head');
    head.type = 'button';
    head.setAttribute('aria-expanded', String(this._open.has(key)));
    head.appendChild(el('code', 'jp-mcp-prompt-name', `/${server.name}:${prompt.name}`));
    if (prompt.magic) {
      row.dataset.magic = 'true'; // its name says so already (`magic`, `magic.<name>`)
    }
    const about = prompt.title && prompt.title !== prompt.name ? prompt.title : prompt.description;
    if (about) {
      head.appendChild(el('span', 'jp-mcp-prompt-title', about));
    }
    head.title = [`/${server.name}:${prompt.name}`, prompt.title, prompt.description].filter(Boolean).join('\n');
    row.appendChild(head);
    head.addEventListener('click', () => {
      const open = row.querySelector('.jp-mcp-form');
      if (open) {
        open.remove();
        this._open.delete(key);
      } else {
        const form = this._form(server, prompt);
        row.appendChild(form);
        this._open.add(key);
        form.querySelector('input')?.focus();
      }
      head.setAttribute('aria-expanded', String(this._open.has(key)));
    });
    if (this._open.has(key)) {
      row.appendChild(this._form(server, prompt));
    }
    return row;
  }

  /** The form of a prompt: its arguments (values completed by the server), render into a cell or copy. */
  private _form(server: IServer, prompt: IPrompt): HTMLElement {
    const state = STATE_TEXT[server.state] ?? server.state;
    const warning = server.state === 'ready' ? '' : `${server.name} is ${state}: rendering may fail.`;
    const form = new PromptForm(server.name, prompt, warning);
    const buttons = el('div', 'jp-mcp-buttons');
    const toCell = el('button', 'jp-mcp-to-cell jp-Button jp-mod-styled jp-mod-accept', 'Insert cell');
    toCell.type = 'submit';
    toCell.title = 'Render the prompt into a new Markdown cell below the active cell';
    const copy = el('button', 'jp-mcp-copy jp-Button jp-mod-styled', 'Copy');
    copy.type = 'button';
    copy.title = 'Render the prompt and copy it to the clipboard';
    buttons.append(toCell, copy);
    form.node.append(buttons, form.status);
    const run = async (target: 'cell' | 'clipboard') => {
      const notebook = this.notebooks.currentWidget;
      if (target === 'cell' && !notebook) {
        form.say('error', 'Open a notebook to insert the prompt into, or use Copy.');
        return;
      }
      const markdown = await form.render();
      if (markdown === null) {
        return;
      }
      if (target === 'clipboard') {
        await copyText(markdown);
        form.say('done', 'Copied to the clipboard.');
      } else if (notebook && !notebook.isDisposed) {
        insertMarkdownCell(notebook, markdown);
        form.say('done', `Inserted into ${notebook.context.localPath}.`);
      }
    };
    form.node.addEventListener('submit', event => {
      event.preventDefault();
      void run('cell');
    });
    copy.addEventListener('click', () => void run('clipboard'));
    return form.node;
  }

  private _search: HTMLInputElement;
  private _magics: HTMLInputElement;
  private _magicStore: PromptStore | null = null;
  private _notebookBox: HTMLElement;
  private _list: HTMLElement;
  private _open = new Set<string>();
  private _watched: NotebookPanel | null = null;
  private _report: INotebookReport | null = null;
  private _reportError = '';
  private _asked = 0;
}

/** Why a server is not ready; for one not trusted, the command that trusts it first and the rest folded. */
function detailOf(server: IServer): HTMLElement {
  const box = el('div', 'jp-mcp-detail');
  const trust = /`(mcp-notebook trust [^`]+)`/.exec(server.detail);
  if (server.state !== 'not-trusted' || !trust) {
    box.textContent = server.detail;
    return box;
  }
  box.appendChild(el('span', '', 'Not started until you trust its file. Read the file, then run:'));
  box.appendChild(el('code', 'jp-mcp-command', trust[1]));
  const details = el('details', 'jp-mcp-status-details');
  details.appendChild(el('summary', '', 'What it would start'));
  details.appendChild(el('pre', '', server.detail));
  box.appendChild(details);
  return box;
}

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    Clipboard.copyToSystem(text); // browsers without the async clipboard (or without permission)
  }
}

function cellText(number: number | null): string {
  return number ? `cell ${number}` : '';
}

/** The names cells of `panel` are tagged with in `metadata.mcp.prompt` now (saved or not), with their index. */
function taggedNames(panel: NotebookPanel): { name: string; index: number }[] {
  const out: { name: string; index: number }[] = [];
  panel.content.widgets.forEach((cell, index) => {
    const mcp = cell.model.getMetadata('mcp') as { prompt?: unknown } | undefined;
    if (mcp && typeof mcp === 'object' && typeof mcp.prompt === 'string' && mcp.prompt) {
      out.push({ name: mcp.prompt, index });
    }
  });
  return out;
}

function matches(server: IServer, prompt: IPrompt, query: string): boolean {
  if (!query) {
    return true;
  }
  const text = `${server.name}:${prompt.name} ${prompt.title ?? ''} ${prompt.description ?? ''}`.toLowerCase();
  return query.split(/\s+/).every(word => text.includes(word));
}

/** A Markdown cell holding `markdown`, below the active cell of `panel`. */
export function insertMarkdownCell(panel: NotebookPanel, markdown: string): void {
  const notebook = panel.content;
  const model = notebook.model;
  if (!model) {
    return;
  }
  const index = Math.max(notebook.activeCellIndex, -1) + 1;
  model.sharedModel.insertCell(index, { cell_type: 'markdown', source: markdown });
  notebook.activeCellIndex = index;
  void notebook.scrollToItem(index);
}
