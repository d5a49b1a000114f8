/**
 * A stand-in for an OpenAI-compatible endpoint: tests run with no network, and they need to see exactly what the
 * model actor sends and to make the "model" answer badly on purpose.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The body parsed as JSON; undefined when it is not JSON. */
  body: unknown;
}

export interface QueuedReply {
  status?: number;
  /** Sent as is when a string, as JSON otherwise. */
  body: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Add `usage` counted from the request and the reply (see countTokens) to the JSON body as it is sent. */
  countUsage?: boolean;
}

export interface CompletionExtras {
  reasoning_content?: string;
  reasoning?: string;
  finish_reason?: string;
  /** The reply's `model`; left out unless given, as some local servers do. */
  model?: string;
  /** The reply's `usage` as given; null leaves it out; undefined counts it (countTokens). */
  usage?: Record<string, unknown> | null;
}

/**
 * The fake's tokenizer: one token per started four characters. What a test expects is computed with it from the
 * requests the fake recorded, so the counts are checked against what was really sent and answered.
 */
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The prompt tokens of a recorded request: every message's content, counted with countTokens. */
export function promptTokensOf(request: RecordedRequest): number {
  const messages = (request.body as { messages?: Array<{ content: string }> }).messages ?? [];
  return messages.reduce((sum, m) => sum + countTokens(m.content), 0);
}

export class FakeModelServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: Array<QueuedReply | 'hang'> = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeModelServer> {
    const server = http.createServer();
    const fake = new FakeModelServer(server);
    server.on('request', (req, res) => fake.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return fake;
  }

  /** What CLEVERAGENTS_MODEL_BASE_URL would be. */
  get baseUrl(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  reply(reply: QueuedReply): this {
    this.queue.push(reply);
    return this;
  }

  /** A chat completion whose message content is `content` (JSON-encoded unless already a string). */
  replyContent(content: unknown, extras: CompletionExtras = {}): this {
    const { finish_reason = 'stop', model, usage, ...reasoning } = extras;
    return this.reply({
      countUsage: usage === undefined,
      body: {
        id: `chatcmpl-${this.queue.length}`,
        object: 'chat.completion',
        ...(model === undefined ? {} : { model }),
        ...(usage === undefined || usage === null ? {} : { usage }),
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: typeof content === 'string' ? content : JSON.stringify(content),
              ...reasoning,
            },
            finish_reason,
          },
        ],
      },
    });
  }

  /** The next request is read and never answered (timeouts, cancellation). */
  hang(): this {
    this.queue.push('hang');
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private usageFor(request: RecordedRequest, body: object): Record<string, number> {
    const choices = (body as { choices?: Array<{ message?: { content?: string } }> }).choices ?? [];
    const prompt = promptTokensOf(request);
    const completion = countTokens(choices[0]?.message?.content ?? '');
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
      };
      this.requests.push(recorded);
      const next = this.queue.shift();
      if (next === 'hang') return;
      const reply = next ?? { status: 500, body: 'fake model server: no reply queued for this request' };
      const send = () => {
        const answer =
          reply.countUsage === true && typeof reply.body === 'object' && reply.body !== null
            ? { ...reply.body, usage: this.usageFor(recorded, reply.body) }
            : reply.body;
        const payload = typeof answer === 'string' ? answer : JSON.stringify(answer);
        res.writeHead(reply.status ?? 200, {
          'content-type': typeof reply.body === 'string' ? 'text/plain' : 'application/json',
        });
        res.end(payload);
      };
      if (reply.delayMs === undefined) send();
      else setTimeout(send, reply.delayMs);
    });
  }
}

/** A step as the model must write it (the strict reply schema): every field present, null where it does not apply. */
export function wireStep(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    content: null,
    overwrite: null,
    pattern: null,
    with: null,
    flags: null,
    require_match: null,
    to: null,
    timeout_seconds: null,
    description: null,
    project: null,
    ...fields,
  };
}
