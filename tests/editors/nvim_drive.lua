-- Drives an example configuration in a headless Neovim, as a user would, and writes what it saw as JSON.
--
-- Environment: DRIVE_OUT (the JSON file), DRIVE_FILE (the document), DRIVE_MODE:
--   "use":  wait for the slash commands, complete a command, its arguments and a value, render a line
--           with the configuration's <leader>mr mapping, then quit;
--   "first": ask for `/` once as soon as the client is attached (result.first), then wait for the servers;
--   "quit": wait for the servers, write the editor's pid, wait for DRIVE_GO to exist, then :qa!.
-- DRIVE_READY names the completion label that says the servers are up.

local out = os.getenv('DRIVE_OUT')
local mode = os.getenv('DRIVE_MODE')
local ready_label = os.getenv('DRIVE_READY') or '/nb:greet'
local result = { pid = vim.fn.getpid(), version = tostring(vim.version()) }

local function write()
  local file = assert(io.open(out, 'w'))
  file:write(vim.json.encode(result))
  file:close()
end

local function labels(line, character, trigger)
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(0),
    position = { line = line, character = character },
    context = trigger and { triggerKind = 2, triggerCharacter = trigger } or { triggerKind = 1 },
  }
  local found = {}
  local answers = vim.lsp.buf_request_sync(0, 'textDocument/completion', params, 5000) or {}
  for _, answer in pairs(answers) do
    local list = answer.result or {}
    for _, item in ipairs(list.items or list) do
      table.insert(found, item.label)
    end
  end
  return found
end

local function has(list, wanted)
  for _, value in ipairs(list) do
    if value == wanted then
      return true
    end
  end
  return false
end

local ok, problem = pcall(function()
  vim.cmd.edit(os.getenv('DRIVE_FILE'))
  assert(
    vim.wait(30000, function()
      return #vim.lsp.get_clients({ bufnr = 0, name = 'mcp_notebook' }) > 0
    end, 50),
    'the mcp_notebook client never attached'
  )
  local client = vim.lsp.get_clients({ bufnr = 0, name = 'mcp_notebook' })[1]
  result.root_dir = client.config.root_dir
  result.triggers = client.server_capabilities.completionProvider.triggerCharacters
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { '/' })
  if mode == 'first' then
    result.first = labels(0, 1, '/') -- at once: what the first `/` typed after opening the file lists
  end
  assert(
    vim.wait(60000, function()
      return has(labels(0, 1, '/'), ready_label)
    end, 200),
    'the servers never came up: no ' .. ready_label
  )
  result.commands = labels(0, 1, '/')
  if mode == 'first' then
    assert(vim.wait(60000, function()
      return not has(labels(0, 1, '/'), 'connecting to 1 server…')
    end, 200), 'the fresh list never came')
    result.commands = labels(0, 1, '/')
    return
  end
  if mode == 'quit' then
    write()
    local go = os.getenv('DRIVE_GO')
    assert(vim.wait(120000, function()
      return vim.uv.fs_stat(go) ~= nil
    end, 20))
    vim.cmd('qa!')
    return
  end
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { '/nb:greet ', '/nb:greet name=', 'Plain prose ' })
  result.arguments = labels(0, 10, ' ')
  result.values = labels(1, 15, '=')
  result.prose = labels(2, 12, ' ')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { '# Notes', '/nb:greet name=Ada and more', 'the end' })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.api.nvim_feedkeys(vim.keycode('<leader>mr'), 'x', false)
  assert(vim.wait(30000, function()
    return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] ~= '/nb:greet name=Ada and more'
  end, 50), 'rendering never changed the line')
  result.rendered = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end)

if not ok then
  result.error = tostring(problem)
end
write()
vim.cmd('qa!')
