import { z } from 'zod';

/** An MCP server's name: a plain name, the prefix of its tools' names (`<server>__<tool>`). */
export const MCP_SERVER_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]|_(?!_))*$/;

const stringMap = z.record(z.string().min(1), z.string());

/** One server of `mcp.yaml`: a stdio `command` (with `args`, `env`, `cwd`) or a streamable HTTP `url`. */
export const McpServerEntry = z
  .strictObject({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    env: stringMap.default({}),
    cwd: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/, error: 'url must be an http:// or https:// URL' }).optional(),
    headers: stringMap.default({}),
    startup_timeout_seconds: z.number().positive().max(600).default(30),
    max_restarts: z.number().int().nonnegative().max(100).default(5),
  })
  .superRefine((entry, ctx) => {
    if ((entry.command === undefined) === (entry.url === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'a server has either a command (stdio, with args, env and cwd) or a url (streamable HTTP), not both',
      });
    }
    if (entry.url !== undefined && (entry.args.length > 0 || Object.keys(entry.env).length > 0 || entry.cwd)) {
      ctx.addIssue({ code: 'custom', message: 'args, env and cwd are for a stdio command, not for a url server' });
    }
    if (entry.command !== undefined && Object.keys(entry.headers).length > 0) {
      ctx.addIssue({ code: 'custom', message: 'headers are for a url server, not for a stdio command' });
    }
  });

/** `agent/mcp.yaml`: the MCP tool servers of an Agent Core, by name. Optional: a core without one has none. */
export const McpFile = z.strictObject({
  schema_version: z.literal(1),
  servers: z
    .record(z.string(), McpServerEntry)
    .superRefine((servers, ctx) => {
      for (const name of Object.keys(servers)) {
        if (name.length > 24 || !MCP_SERVER_NAME_PATTERN.test(name)) {
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message: `server name "${name}": a server name is at most 24 lower-case letters, digits, - and single _ (its tools are named <server>__<tool>)`,
          });
        }
      }
    })
    .default({}),
});
export type McpFile = z.output<typeof McpFile>;
