import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The most text of one MCP result the model is given back; the rest is cut with a note. */
export const MCP_RESULT_MAX_CHARS = 32_000;

/**
 * An MCP tool result as text for the model: its text items in order, a short note for each other item (image,
 * audio, resource), the structured content when there is no text; cut at {@link MCP_RESULT_MAX_CHARS}.
 */
export function resultText(result: CallToolResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        parts.push(item.text);
        break;
      case 'image':
      case 'audio':
        parts.push(`[${item.type} ${item.mimeType}, ${Math.floor((item.data.length * 3) / 4)} bytes]`);
        break;
      case 'resource':
        parts.push('text' in item.resource ? item.resource.text : `[resource ${item.resource.uri}]`);
        break;
      case 'resource_link':
        parts.push(`[resource link ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
        break;
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  if (text.length <= MCP_RESULT_MAX_CHARS) return text;
  return `${text.slice(0, MCP_RESULT_MAX_CHARS)}\n[cut: the result was ${text.length} characters]`;
}
