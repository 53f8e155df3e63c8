// The REST API of mcp-notebook's Jupyter Server extension (docs: LAB_API in the repository).
// Every call goes through ServerConnection, so Jupyter's auth and XSRF apply; the browser never
// sees an MCP token.
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

const REFRESH_MS = 2000; // a `/` asks for the lists again when they were last asked for longer ago than this

export interface IArgument {
  name: string;
  description?: string;
  required?: boolean;
  default?: string | null;
}

export interface IPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments: IArgument[];
  magic?: boolean;
}

export interface IServer {
  name: string;
  kind: 'notebooks' | 'config' | 'kernel';
  state: 'ready' | 'connecting' | 'failed' | 'not-trusted';
  detail: string;
  prompts: IPrompt[];
}

export interface IPromptLists {
  servers: IServer[];
  refreshing: boolean;
  version: number;
  /** Configuration files that could not be read: one line each. */
  problems?: string[];
}

export interface IRendered {
  messages: { role: string; text: string }[];
  markdown: string;
}

export interface ICompletionValues {
  values: string[];
  hasMore: boolean;
  total?: number;
  /** The server had not answered in 0.2 s: ask again in a moment for its values. */
  pending?: boolean;
}

export interface INotebookReport {
  path: string;
  /** The server name its prompts are served under; null when the notebook is not served. */
  served_as: string | null;
  prompts: { name: string; title?: string | null; cell_id: string | null; cell_number: number | null; kind: string }[];
  warnings: { cell_id: string | null; cell_number: number | null; message: string }[];
}

export interface INameCheck {
  ok: boolean;
  message?: string;
  suggestion?: string;
}

/** A call of the API: JSON in, JSON out; an error carries the server's message. */
export async function request<T>(endpoint: string, init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'mcp-notebook/api', endpoint);
  const response = await ServerConnection.makeRequest(url, init, settings);
  let data: any = {};
  try {
    data = await response.json();
  } catch {
    data = {};
  }
  if (!response.ok) {
    const message = data && data.message ? data.message : response.statusText;
    throw new Error(message || `HTTP ${response.status}`);
  }
  return data as T;
}

function post<T>(endpoint: string, body: unknown): Promise<T> {
  return request<T>(endpoint, { method: 'POST', body: JSON.stringify(body) });
}

export function render(server: string, prompt: string, args: Record<string, string>): Promise<IRendered> {
  return post<IRendered>('render', { server, prompt, arguments: args });
}

export function complete(
  server: string,
  prompt: string,
  argument: string,
  value: string,
  context: Record<string, string>
): Promise<ICompletionValues> {
  return post<ICompletionValues>('complete', { server, prompt, argument, value, context });
}

export function notebookReport(path: string): Promise<INotebookReport> {
  return request<INotebookReport>(`notebook?path=${encodeURIComponent(path)}`);
}

export function checkName(name: string): Promise<INameCheck> {
  return post<INameCheck>('check-name', { name });
}

/**
 * The prompt lists, asked for once when JupyterLab starts (the server answers at once with its last
 * known lists) and kept fresh by long-polling `?since=version` while the server refreshes.
 */
export class PromptStore {
  /** `magics`: the magic prompts of kernels too (the panel's toggle); the `/` menu leaves them out. */
  constructor(options: { magics?: boolean } = {}) {
    this._magics = !!options.magics;
    this._first = this._load();
  }

  /** The lists as last received (empty until the first answer). */
  get lists(): IPromptLists {
    return this._lists;
  }

  /** Resolves once the first answer is there. */
  get ready(): Promise<void> {
    return this._first;
  }

  get changed(): ISignal<this, IPromptLists> {
    return this._changed;
  }

  /** Every prompt with its server, servers in the order the server gives. */
  entries(): { server: IServer; prompt: IPrompt }[] {
    const out: { server: IServer; prompt: IPrompt }[] = [];
    for (const server of this._lists.servers) {
      for (const prompt of server.prompts) {
        out.push({ server, prompt });
      }
    }
    return out;
  }

  find(serverName: string, promptName: string): IPrompt | undefined {
    const server = this._lists.servers.find(s => s.name === serverName);
    return server?.prompts.find(p => p.name === promptName);
  }

  /**
   * Ask again now (the panel's refresh button): `changed` fires even when the lists are the same, so what
   * shows them is drawn afresh (an error cleared, kernels looked at again).
   */
  async refresh(): Promise<void> {
    await this._load();
    this._changed.emit(this._lists);
  }

  /**
   * Keep the lists fresh while `active()` says so (the panel is shown): long-polls `?since=version`, which also
   * has the server look at its configuration and running kernels again. Stops at the first error.
   */
  async follow(active: () => boolean): Promise<void> {
    if (this._following) {
      return;
    }
    this._following = true;
    try {
      await this._first;
      while (active()) {
        const magics = this._magics;
        const lists = await request<IPromptLists>(this._query(this._lists.version));
        this.error = '';
        this._set(lists, magics);
      }
    } catch (error) {
      this.error = String((error as Error).message ?? error);
      this._changed.emit(this._lists);
    } finally {
      this._following = false;
    }
  }

  /**
   * Whether kernels' magic prompts (`magic`, `magic.*`) are asked for too (the `magics` setting; off, they
   * stay out of the lists). Changing it asks again.
   */
  get magics(): boolean {
    return this._magics;
  }

  set magics(on: boolean) {
    if (on !== this._magics) {
      this._magics = on;
      void this._load();
    }
  }

  /**
   * Ask again unless the lists were asked for a moment ago or are being waited for (every `/` calls this):
   * the server answers at once with what it has and reads the configuration and the kernels again in the
   * background; `changed` fires when newer lists come.
   */
  refreshSoon(): void {
    if (this._polling || this._loading || Date.now() - this._asked < REFRESH_MS) {
      return;
    }
    void this._load();
  }

  private _query(since?: number): string {
    const query = [since === undefined ? '' : `since=${since}`, this._magics ? 'magics=1' : ''].filter(q => q);
    return 'prompts' + (query.length ? '?' + query.join('&') : '');
  }

  private async _load(): Promise<void> {
    this._asked = Date.now();
    this._loading = true;
    try {
      const magics = this._magics;
      this._set(await request<IPromptLists>(this._query()), magics);
      this.error = '';
    } catch (error) {
      this.error = String((error as Error).message ?? error);
      this._changed.emit(this._lists);
    } finally {
      this._loading = false;
    }
    if (this._lists.refreshing) {
      void this._poll();
    }
  }

  private async _poll(): Promise<void> {
    if (this._polling) {
      return;
    }
    this._polling = true;
    try {
      while (this._lists.refreshing) {
        const lists = await request<IPromptLists>(this._query(this._lists.version));
        this._set(lists, this._listsMagics);
      }
    } catch (error) {
      this.error = String((error as Error).message ?? error);
    } finally {
      this._polling = false;
    }
  }

  private _set(lists: IPromptLists, magics: boolean): void {
    // The same version asked with or without magics is another list; otherwise nothing changed (an open menu
    // keeps its selection).
    const changed = lists.version !== this._lists.version || magics !== this._listsMagics;
    this._lists = lists;
    this._listsMagics = magics;
    if (changed || this._lists.servers.length === 0) {
      this._changed.emit(lists);
    }
  }

  error = '';
  private _lists: IPromptLists = { servers: [], refreshing: false, version: -1 };
  private _first: Promise<void>;
  private _polling = false;
  private _following = false;
  private _loading = false;
  private _asked = 0;
  private _magics = false;
  private _listsMagics = false;
  private _changed = new Signal<this, IPromptLists>(this);
}
