-- list_dir: list a directory of the workspace with the dsh.fs capability
-- module. The call blocks this Lua instance until the listing is read; the
-- read is cancelled with the call.
local dsh = require("dsh")

dsh.tools.register(dsh.define_tool {
  name = "list_dir",
  description = "List the entries of a directory in the workspace.",
  parameters = {
    path = { type = "string", description = "The directory, relative to the workspace (default: the workspace)." },
    limit = { type = "integer", description = "At most this many entries." },
  },
  output = {
    schema = {
      type = "object",
      additionalProperties = false,
      properties = {
        path = { type = "string", required = true },
        entries = {
          type = "array",
          required = true,
          items = {
            type = "object",
            additionalProperties = false,
            properties = {
              name = { type = "string", required = true },
              type = { type = "string", required = true },
              size = { type = "integer", required = true },
            },
          },
        },
        truncated = { type = "boolean", required = true },
      },
    },
    render = function(args, value)
      local lines = {}
      for _, e in ipairs(value.entries) do
        lines[#lines + 1] = e.type == "dir" and (e.name .. "/") or e.name
      end
      if value.truncated then
        lines[#lines + 1] = "…"
      end
      local text = #lines > 0 and table.concat(lines, "\n") or "(empty)"
      return { { type = "text", text = text } }
    end,
  },
  is_concurrency_safe = function() return true end,
  timeout_ms = 10000,
  execute = function(args, exec)
    local opts = {}
    if args.limit then opts.limit = args.limit end
    local listing = dsh.fs.read_dir(args.path or ".", opts)
    local entries = dsh.array {}
    for _, e in ipairs(listing.entries) do
      entries[#entries + 1] = { name = e.name, type = e.type, size = e.size }
    end
    return { path = listing.path, entries = entries, truncated = listing.truncated }
  end,
  present_call = function(args)
    return { card = "generic", title = "List " .. (args.path or "."), kind = "read" }
  end,
})
