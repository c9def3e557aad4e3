import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as Client2,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport as Transport2,
} from '@modelcontextprotocol/client';

/**
 * The official MCP clients, as a host would set them up against POST /mcp: the 1.x client (`@modelcontextprotocol/sdk`,
 * MCP 2025-11-25), and the 2.x client (`@modelcontextprotocol/client`) negotiating 2026-07-28 by server/discover,
 * without and with x402's `org.x402/payment` extension in its capabilities (which binding a payment-required takes).
 */
export const MCP_CLIENTS = [
  { name: 'SDK 1.x on 2025-11-25', revision: '2025-11-25', binding: 'tool-result' },
  { name: 'SDK 2.x on 2026-07-28', revision: '2026-07-28', binding: 'tool-result' },
  { name: 'SDK 2.x on 2026-07-28 with org.x402/payment', revision: '2026-07-28', binding: 'extension' },
] as const;
export type McpClientKind = (typeof MCP_CLIENTS)[number];

/** One JSON-RPC exchange as it crossed the wire: the request's method and the response's `result` or `error`. */
export interface Exchange {
  method: string;
  status: number;
  result?: Record<string, any>;
  error?: { code: number; message: string; data?: unknown };
}

/** A tools/call as the host sees it: what the wire carried, and what the official client made of it. */
export interface ToolCall {
  wire: Record<string, any>;
  /** The client's CallToolResult, or undefined when the client refused the result (`refused`). */
  result?: { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: any; _meta?: any };
  refused?: SdkError;
}

export interface McpSession {
  kind: McpClientKind;
  /** Every exchange of this session, in order. */
  wire: Exchange[];
  client: Client1 | Client2;
  listTools(): Promise<{ tools: { name: string; description?: string; outputSchema?: unknown }[] }>;
  call(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<ToolCall>;
  close(): Promise<void>;
}

/** A fetch that records each JSON-RPC response it passes on (this server answers JSON, never a stream). */
function recordingFetch(wire: Exchange[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const method = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }).method : undefined;
    if (method && res.headers.get('content-type')?.startsWith('application/json')) {
      const body = (await res.clone().json()) as Exchange;
      wire.push({ method, status: res.status, result: body.result, error: body.error });
    }
    return res;
  };
}

/** Connect one of the official clients to `${baseUrl}/mcp`, with a key when given. */
export async function connectMcp(kind: McpClientKind, baseUrl: string, key?: string): Promise<McpSession> {
  const wire: Exchange[] = [];
  const url = new URL(`${baseUrl}/mcp`);
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const opts = { fetch: recordingFetch(wire), requestInit: { headers } };
  const info = { name: 'vcs-test-host', version: '1.0.0' };
  let client: Client1 | Client2;
  if (kind.revision === '2025-11-25') {
    client = new Client1(info);
    await client.connect(new Transport1(url, opts));
  } else {
    client = new Client2(info, {
      versionNegotiation: { mode: 'auto' },
      ...(kind.binding === 'extension' ? { capabilities: { extensions: { 'org.x402/payment': {} } } } : {}),
    });
    await client.connect(new Transport2(url, opts));
  }
  const lastCall = () => wire.filter((x) => x.method === 'tools/call').at(-1)!;
  return {
    kind,
    wire,
    client,
    listTools: () => client.listTools() as never,
    async call(name, args, meta) {
      try {
        const result = (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as never;
        return { wire: lastCall().result!, result };
      } catch (e) {
        // The 2.x client refuses a result type it does not know (`payment_required`): the host reads it off the wire.
        if (e instanceof SdkError && e.code === SdkErrorCode.UnsupportedResultType)
          return { wire: lastCall().result!, refused: e };
        throw e;
      }
    },
    close: () => client.close(),
  };
}
